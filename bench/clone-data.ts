// Growing a deployment's data quickly: the documents a few real checkouts
// wrote, in every service database, cloned in bulk with fresh keys, so the
// collections hold what thousands of checkouts would leave without making
// them one by one. Fresh keys: numeric _ids (and numeric unique fields) from
// well past every id in use and every id allocator's counter, the counters
// moved past that range before the clones are written (shared/id-allocator.ts:
// a node reserves blocks from them), so checkouts, even ones in flight while
// the clones are written, never collide with them; string _ids and string
// fields of unique indexes suffixed. References
// between documents (a transaction's customerId) keep pointing at the
// originals: reads and checkouts only need the documents to exist.
import type { BSONTypeAlias, Document, MongoClient } from "mongodb";

/** The id allocators' counters (shared/id-allocator.ts): moved past the clones instead of cloned. */
const SEQUENCES = "sequences";
const CHUNK = 1000;
/** Room for the blocks nodes may reserve between the reading of the counters and their move (blocks are 10–100 ids). */
const RESERVATION_MARGIN = 100_000;
/** The server's alias for every numeric type, missing from the driver's typings. */
const ANY_NUMBER = "number" as BSONTypeAlias;

export interface Template {
	db: string;
	collection: string;
	docs: Document[];
	/** Top-level fields of unique indexes other than _id's, by the type of their values. */
	unique: { strings: string[]; numbers: string[] };
}

type IdSnapshot = Map<string, Set<string>>;

async function databasesOf(client: MongoClient, base: string): Promise<string[]> {
	const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
	return databases.map(d => d.name).filter(name => name.startsWith(`${base}_`));
}

async function collectionsOf(client: MongoClient, db: string): Promise<string[]> {
	return (await client.db(db).listCollections({}, { nameOnly: true }).toArray()).map(c => c.name);
}

/** Every _id of every collection of the deployment's databases (`<base>_<service>`). */
export async function snapshotIds(client: MongoClient, base: string): Promise<IdSnapshot> {
	const snapshot: IdSnapshot = new Map();
	for (const db of await databasesOf(client, base)) {
		for (const collection of await collectionsOf(client, db)) {
			const docs = await client
				.db(db)
				.collection(collection)
				.find({}, { projection: { _id: 1 } })
				.toArray();
			snapshot.set(`${db}.${collection}`, new Set(docs.map(d => JSON.stringify(d._id))));
		}
	}
	return snapshot;
}

/** A schedule's slot or cursor (shared/schedule.ts): keyed by time, their number follows the calendar, not the customers. */
const isScheduleEntry = (doc: Document) => typeof doc._id === "string" && /^(-?\d+#\d+|cursor)$/.test(doc._id);
/** Timelines (shared/timeline.ts) index the documents; the growth scenario lists the clones in them itself (listClones). */
const INDEX_COLLECTIONS = new Set(["timeline_heads", "timeline_chunks"]);

async function uniqueFields(client: MongoClient, db: string, collection: string, sample: Document): Promise<Template["unique"]> {
	const indexes = await client.db(db).collection(collection).listIndexes().toArray();
	const fields = [...new Set(indexes.filter(index => index.unique && index.name !== "_id_").flatMap(index => Object.keys(index.key)))];
	const nested = fields.filter(field => field.includes("."));
	if (nested.length) throw new Error(`${db}.${collection}: cannot clone documents with a unique index on ${nested.join(", ")}`);
	return {
		strings: fields.filter(field => typeof sample[field] === "string"),
		numbers: fields.filter(field => typeof sample[field] === "number"),
	};
}

/** The documents written since `before`, per collection, except id counters and schedules. */
export async function documentsSince(client: MongoClient, base: string, before: IdSnapshot): Promise<Template[]> {
	const templates: Template[] = [];
	for (const db of await databasesOf(client, base)) {
		for (const collection of await collectionsOf(client, db)) {
			if (collection === SEQUENCES || INDEX_COLLECTIONS.has(collection)) continue;
			const known = before.get(`${db}.${collection}`) ?? new Set();
			const docs = (await client.db(db).collection(collection).find({}).toArray()).filter(d => !known.has(JSON.stringify(d._id)));
			if (docs.length === 0 || docs.every(isScheduleEntry)) continue;
			templates.push({ db, collection, docs, unique: await uniqueFields(client, db, collection, docs[0]) });
		}
	}
	return templates;
}

/** The highest numeric _id of the templates' collections and id counter of the database. */
async function highestId(client: MongoClient, db: string, collections: string[]): Promise<number> {
	let max = 0;
	for (const collection of collections) {
		const [last] = await client
			.db(db)
			.collection(collection)
			.find({ _id: { $type: ANY_NUMBER } })
			.sort({ _id: -1 })
			.limit(1)
			.toArray();
		if (typeof last?._id === "number") max = Math.max(max, last._id);
	}
	const [sequence] = await client.db(db).collection(SEQUENCES).find({}).sort({ next: -1 }).limit(1).toArray();
	return Math.max(max, typeof sequence?.next === "number" ? sequence.next : 0);
}

/** Numbers a copy of the templates takes: numeric _ids and numeric unique fields. */
const numbersPerCopy = (templates: Template[]) =>
	templates.reduce(
		(n, t) =>
			n + t.docs.reduce((m, d) => m + Number(typeof d._id === "number") + t.unique.numbers.filter(f => typeof d[f] === "number").length, 0),
		0,
	);

/** Reserves `count` numbers for the clones: every id counter moves past them first. Answers the first. */
async function reserveIds(client: MongoClient, db: string, collections: string[], count: number): Promise<number> {
	const first = (await highestId(client, db, collections)) + RESERVATION_MARGIN;
	await client
		.db(db)
		.collection(SEQUENCES)
		.updateMany({}, { $max: { next: first + count } });
	return first;
}

function cloneOf(doc: Document, template: Template, copy: number, nextId: () => number): Document {
	const clone: Document = { ...doc };
	if (typeof doc._id === "number") clone._id = nextId();
	else if (typeof doc._id === "string") clone._id = `${doc._id}~${copy}`;
	else throw new Error(`${template.db}.${template.collection}: cannot give a fresh key to _id ${JSON.stringify(doc._id)}`);
	for (const field of template.unique.strings) if (typeof doc[field] === "string") clone[field] = `${doc[field]}~${copy}`;
	for (const field of template.unique.numbers) if (typeof doc[field] === "number") clone[field] = nextId();
	return clone;
}

/**
 * Inserts copies `firstCopy` … `firstCopy + copies - 1` of every template
 * (copy numbers must never repeat on a deployment: they make the string keys
 * unique). Answers the documents inserted.
 */
export async function cloneTemplates(client: MongoClient, templates: Template[], firstCopy: number, copies: number): Promise<number> {
	let inserted = 0;
	for (const db of new Set(templates.map(t => t.db))) {
		const ofDb = templates.filter(t => t.db === db);
		const count = numbersPerCopy(ofDb) * copies;
		const first = await reserveIds(
			client,
			db,
			ofDb.map(t => t.collection),
			count,
		);
		let next = first;
		const nextId = () => {
			if (next >= first + count) throw new Error(`${db}: more ids cloned than reserved`);
			return next++;
		};
		for (const template of ofDb) {
			const collection = client.db(db).collection(template.collection);
			let batch: Document[] = [];
			for (let copy = firstCopy; copy < firstCopy + copies; copy++) {
				for (const doc of template.docs) batch.push(cloneOf(doc, template, copy, nextId));
				if (batch.length >= CHUNK) {
					inserted += (await collection.insertMany(batch, { ordered: false })).insertedCount;
					batch = [];
				}
			}
			if (batch.length) inserted += (await collection.insertMany(batch, { ordered: false })).insertedCount;
		}
	}
	return inserted;
}
