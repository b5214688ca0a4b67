// What every service's collections share: leases held by conditional updates,
// and unique keys that turn a repeated insert into a no-op.
import type { Collection, Document } from "mongodb";
import { type Model, Schema } from "mongoose";

/**
 * The document if it belongs to the account, else null. Reads go by key
 * (`findById`) and ownership is checked after the read: a filter that adds the
 * account to the key is not an exact key match.
 */
export function ownedBy<T extends { accountId: number }>(doc: T | null, accountId: number): T | null {
	return doc?.accountId === accountId ? doc : null;
}

/** MongoDB's duplicate key error: the unique key (or _id) is taken, by an earlier or a concurrent insert. */
export function isDuplicateKey(err: unknown): boolean {
	return (err as { code?: unknown } | null)?.code === 11000;
}

/**
 * The model's collection, straight through the driver: for the checkout's and the renewals' hot paths, where
 * building a mongoose query cost more than the command. Filters and updates are not cast: pass the schema's types.
 */
export function raw<T extends Document>(model: Model<T>): Collection<T> {
	return model.collection as unknown as Collection<T>;
}

/** A model as the raw inserts below use it. */
interface Insertable {
	applyDefaults(doc: object): object;
	collection: { insertOne(doc: object, options: object): Promise<unknown>; insertMany(docs: object[], options: object): Promise<unknown> };
}

/** A copy of the document with the schema's defaults for the fields it leaves out. */
function withDefaults<T extends object>(model: Insertable, doc: T): T {
	return model.applyDefaults({ ...doc }) as T;
}

/**
 * Inserts the document as built, with the schema's defaults for fields it leaves out, straight through the driver:
 * no mongoose document is made (on the checkout's path that cost more than the insert). The caller's types are the
 * schema's (Dates as Dates): nothing is cast. Undefined fields are left out, as mongoose leaves them.
 */
export async function insertDoc<T extends object>(model: Insertable, doc: T): Promise<T> {
	const stored = withDefaults(model, doc);
	await model.collection.insertOne(stored, { ignoreUndefined: true });
	return stored;
}

/** The documents stored of those keyed `ids`, with one command by `_id` (only their keys read). */
export async function storedIds<T extends { _id: string }>(model: Model<T>, ids: string[]): Promise<Set<string>> {
	const found = await raw(model)
		.find({ _id: { $in: ids } } as never, { projection: { _id: 1 } })
		.toArray();
	return new Set(found.map(d => String(d._id)));
}

/** Inserts `doc` (as insertDoc does) unless its key is taken; answers whether this call inserted it. Other errors are thrown. */
export async function insertOnce(model: Insertable, doc: object): Promise<boolean> {
	try {
		await insertDoc(model, doc);
		return true;
	} catch (err) {
		if (isDuplicateKey(err)) return false;
		throw err;
	}
}

/** Inserts the documents in one command; those whose key is taken are skipped. Answers whether all were inserted; other errors are thrown. */
export async function insertAllOnce(model: Insertable, docs: object[]): Promise<boolean> {
	if (docs.length === 0) return true;
	try {
		await model.collection.insertMany(
			docs.map(doc => withDefaults(model, doc)),
			{ ordered: false, ignoreUndefined: true },
		);
		return true;
	} catch (err) {
		const writeErrors = (err as { writeErrors?: unknown[] }).writeErrors;
		const duplicatesOnly = writeErrors ? writeErrors.every(e => isDuplicateKey((e as { err?: unknown }).err ?? e)) : isDuplicateKey(err);
		if (!duplicatesOnly) throw err;
		return false;
	}
}

/**
 * A lease: a node (or a request) holds a document for a while by writing
 * {owner, until} on it with a conditional update; once `until` has passed,
 * anyone may take it over.
 */
export interface Lease {
	owner: string;
	until: Date;
}

export function newLease(owner: string, now: Date, ms: number): Lease {
	return { owner, until: new Date(now.getTime() + ms) };
}

/** The filter for "nobody holds the lease in `field`": none was taken, or it has expired. */
export function leaseFree(field: string, now: Date): { $or: object[] } {
	return { $or: [{ [field]: null }, { [`${field}.until`]: { $lte: now } }] };
}

/** The mongoose schema of a lease field (`{type: leaseSchema(), default: null}`). */
export function leaseSchema(): Schema<Lease> {
	return new Schema<Lease>({ owner: String, until: Date }, { _id: false });
}
