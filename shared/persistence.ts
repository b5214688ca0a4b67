// What every service's collections share: leases held by conditional updates,
// and unique keys that turn a repeated insert into a no-op.
import type { Collection, Document } from "mongodb";
import { type Model, Schema } from "mongoose";
import { groupCommit, perObject } from "./group-commit";

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
	const refused = (await inserterOf(model)([stored]))[0];
	if (refused) throw refused;
	return stored;
}

/**
 * Inserts complete documents (no defaults applied, nothing cast) in one command with those other callers insert at
 * once; answers, per document, null or the error that refused it (a taken key: code 11000).
 */
export function insertEach(model: Insertable, docs: object[]): Promise<(Error | null)[]> {
	return docs.length === 0 ? Promise.resolve([]) : inserterOf(model)(docs);
}

/** A write error of insertMany: the index of the document it refused, and why. */
interface WriteError {
	index: number;
	code?: number;
	err?: unknown;
}

/**
 * Each model's inserter: the documents (defaults applied) other callers on this node insert at once go in one
 * unordered command (shared/group-commit.ts); answers, per document, null or the error that refused it (a taken key:
 * code 11000). Errors that are not one document's are thrown.
 */
const inserterOf = perObject((model: Insertable) =>
	groupCommit<object[], (Error | null)[]>(async groups => {
		const refused = await insertRefusing(model, groups.flat());
		let offset = 0;
		return groups.map(group => {
			offset += group.length;
			return refused.slice(offset - group.length, offset);
		});
	}),
);

/** Inserts the documents in one command; answers, per document, null or the error that refused it. */
async function insertRefusing(model: Insertable, docs: object[]): Promise<(Error | null)[]> {
	const refused: (Error | null)[] = docs.map(() => null);
	try {
		if (docs.length === 1) await model.collection.insertOne(docs[0], { ignoreUndefined: true });
		else await model.collection.insertMany(docs, { ordered: false, ignoreUndefined: true });
	} catch (err) {
		// The server's refusals of some documents come as write errors. A driver's error (the connection lost mid-command)
		// comes from insertMany as a bulk error too, with none: nothing is known of any document then, and it is thrown.
		const writeErrors = (err as { writeErrors?: WriteError[] }).writeErrors ?? [];
		if (docs.length === 1 && isDuplicateKey(err)) refused[0] = err as Error;
		else if (writeErrors.length === 0) throw err;
		else
			for (const e of writeErrors) refused[e.index] = Object.assign(new Error(`insert refused: ${e.code}`), e.err ?? {}, { code: e.code });
	}
	return refused;
}

/** One update of a bulk write: what `updateTogether` takes. */
export interface UpdateOperation {
	updateOne: { filter: object; update: object; upsert?: boolean };
}

/**
 * Applies the updates, in order, in one command with those other callers on this node apply at once
 * (shared/group-commit.ts): for updates whose callers need no per-document answer (schedule listings, bags, counters).
 * Straight to the driver: nothing is cast.
 */
export function updateTogether(model: { collection: unknown }, operations: UpdateOperation[]): Promise<void> {
	if (operations.length === 0) return Promise.resolve();
	return updaterOf(model)(operations);
}

/** How long a bookkeeping update waits for others to join it (updateLater). */
const LINGER_MS = 250;

/**
 * As updateTogether, for bookkeeping that no answer waits on (events marked relayed, counters): the first update
 * waits LINGER_MS for those of that moment to join it, so a busy node sends one command where it sent one per caller.
 */
export function updateLater(model: { collection: unknown }, operations: UpdateOperation[]): Promise<void> {
	if (operations.length === 0) return Promise.resolve();
	return lingeringUpdaterOf(model)(operations);
}

/** Applies a group's updates in order, in one command. */
const applyInOrder = (model: { collection: unknown }) => async (groups: UpdateOperation[][]) => {
	const collection = model.collection as Collection;
	const all = groups.flat();
	const [only] = all;
	if (all.length === 1) await collection.updateOne(only.updateOne.filter, only.updateOne.update, { upsert: only.updateOne.upsert });
	else await collection.bulkWrite(all, { ordered: true });
	return undefined;
};

const updaterOf = perObject((model: { collection: unknown }) => groupCommit<UpdateOperation[]>(applyInOrder(model)));
const lingeringUpdaterOf = perObject((model: { collection: unknown }) =>
	groupCommit<UpdateOperation[]>(applyInOrder(model), { lingerMs: LINGER_MS }),
);

/** The documents stored of those keyed `ids`, with one command by `_id` (only their keys read). */
export function storedIds<T extends { _id: string }>(model: Model<T>, ids: string[]): Promise<Set<string>> {
	if (ids.length === 0) return Promise.resolve(new Set());
	return idReaderOf(model as never)(ids);
}

/** Each model's key reader: reads made at once on this node go out as one (shared/group-commit.ts). */
const idReaderOf = perObject((model: Model<{ _id: string }>) =>
	groupCommit<string[], Set<string>>(async groups => {
		const found = await raw(model)
			.find({ _id: { $in: [...new Set(groups.flat())] } }, { projection: { _id: 1 } })
			.toArray();
		const stored = new Set(found.map(d => String(d._id)));
		return groups.map(group => new Set(group.filter(id => stored.has(id))));
	}),
);

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
	const refused = (await inserterOf(model)(docs.map(doc => withDefaults(model, doc)))).filter(err => err !== null);
	const other = refused.find(err => !isDuplicateKey(err));
	if (other) throw other;
	return refused.length === 0;
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
