// Lists that page by key: an account's customers, transactions and events in
// the order they were added, read a page at a time without a range query, so
// a page costs the same at 1k items as at 50k (docs/capacity.md).
//
// A timeline numbers its entries 1, 2, 3, ... in the order the database
// applied the appends. Its head document holds the count and the latest
// entries; every CHUNK entries are copied, once complete, into a chunk
// document keyed `<timeline>#<chunk>`. Reading positions reads the head and
// at most a few chunks, all by `_id`.
//
// One append is one atomic update of the head: a position is never given
// twice and never left empty, so a reader going forward (events) can trust
// that nothing will later appear below the last position it read.
//
// A bag is the small sibling: every entry in one document, for lists that
// stay short (a customer's transactions, an email's customers). Appends to
// many bags go out as one bulk write.
import { type Connection, type Model, Schema } from "mongoose";
import { keyedGroupCommit } from "./group-commit";
import { isDuplicateKey, raw, updateTogether } from "./persistence";

/** `[item id, time in epoch ms]`: what a page needs to fetch the item and to find a date. */
export type TimelineEntry = [id: number | string, at: number];

/** Entries per chunk document. */
export const CHUNK = 100;
/** The head keeps this many of the latest entries, so a chunk is still in the head for a while after it completes. */
const RECENT = 3 * CHUNK;

export interface TimelineHeadDoc {
	/** The timeline's key, e.g. `c:<accountId>`; a bag's, e.g. `tc:<customerId>`. */
	_id: string;
	/** Entries appended so far (the last one's position); bags have none. */
	n?: number;
	/** A timeline's latest entries (position n last); a bag's entries, all of them. */
	recent: TimelineEntry[];
}

export interface TimelineChunkDoc {
	/** `<timeline>#<chunk>`; chunk c holds positions c*CHUNK+1 .. (c+1)*CHUNK. */
	_id: string;
	entries: TimelineEntry[];
}

export interface Timelines {
	heads: Model<TimelineHeadDoc>;
	chunks: Model<TimelineChunkDoc>;
}

/** The two collections of a service's timelines and bags. */
export function createTimelines(connection: Connection): Timelines {
	const options = { versionKey: false, minimize: false } as const;
	return {
		heads: connection.model(
			"TimelineHead",
			new Schema<TimelineHeadDoc>({ _id: String, n: Number, recent: { type: Schema.Types.Mixed, default: [] } }, options),
			"timeline_heads",
		),
		chunks: connection.model(
			"TimelineChunk",
			new Schema<TimelineChunkDoc>({ _id: String, entries: { type: Schema.Types.Mixed, default: [] } }, options),
			"timeline_chunks",
		),
	};
}

const chunkKey = (key: string, chunk: number) => `${key}#${chunk}`;
const chunkOf = (position: number) => Math.floor((position - 1) / CHUNK);

/** Each service's timelines' appenders: appends to one key at once on this node go out together (shared/group-commit.ts). */
const appenders = new WeakMap<Timelines, (key: string, entries: TimelineEntry[]) => Promise<number>>();

/** Appends entries (at most CHUNK) in one update, with those appended to the same key at once; answers the position of the first. */
export function append(timelines: Timelines, key: string, entries: TimelineEntry[]): Promise<number> {
	if (entries.length === 0 || entries.length > CHUNK) throw new RangeError(`append takes 1 to ${CHUNK} entries, not ${entries.length}`);
	let appender = appenders.get(timelines);
	if (!appender) {
		appender = keyedGroupCommit<TimelineEntry[], number>((key, groups) => appendGroups(timelines, key, groups));
		appenders.set(timelines, appender);
	}
	return appender(key, entries);
}

/** Appends each group's entries, groups in order and each whole in one update of at most CHUNK entries; answers each group's first position. */
async function appendGroups(timelines: Timelines, key: string, groups: TimelineEntry[][]): Promise<number[]> {
	const firsts: number[] = [];
	for (let i = 0; i < groups.length; ) {
		const piece: TimelineEntry[][] = [];
		let size = 0;
		while (i < groups.length && size + groups[i].length <= CHUNK) {
			size += groups[i].length;
			piece.push(groups[i++]);
		}
		let first = await appendOnce(timelines, key, piece.flat());
		for (const group of piece) {
			firsts.push(first);
			first += group.length;
		}
	}
	return firsts;
}

async function appendOnce(timelines: Timelines, key: string, entries: TimelineEntry[]): Promise<number> {
	// The pre-image's count alone: an append answers its positions from it, and the head's entries (up to 300) travel
	// only for the append that completes a chunk. The pre-image, as in shared/id-allocator.ts: mongo-java-server answers
	// `new: true` with its live document, which later updates can change before the answer is sent (300 concurrent
	// appends saw about 20 positions twice); the pre-image is a copy.
	// Straight to the driver: several appends per checkout, and nothing for mongoose to cast.
	const before = await raw(timelines.heads).findOneAndUpdate(
		{ _id: key },
		{ $inc: { n: entries.length }, $push: { recent: { $each: entries, $slice: -RECENT } } },
		{ upsert: true, returnDocument: "before", projection: { n: 1 } },
	);
	const last = (before?.n ?? 0) + entries.length;
	const first = last - entries.length + 1;
	// The append that completes a chunk copies it out; the one half a chunk later copies it again, in case the first
	// died in between (the head still holds it: RECENT is 3 chunks).
	const toCopy: number[] = [];
	for (let position = first; position <= last; position++) {
		if (position % CHUNK === 0) toCopy.push(position / CHUNK - 1);
		else if (position % CHUNK === CHUNK / 2 && position > CHUNK) toCopy.push(chunkOf(position) - 1);
	}
	if (toCopy.length === 0) return first;
	// A consistent copy of the head (a no-op update's pre-image, for the reason above), which holds the chunks.
	const head = (await timelines.heads
		.findOneAndUpdate({ _id: key }, { $inc: { n: 0 } }, { new: false, lean: true })
		.exec()) as TimelineHeadDoc | null;
	if (head) for (const chunk of toCopy) await saveChunk(timelines, key, head, chunk);
	return first;
}

/** Appends each entry to its timeline, one update per timeline (per CHUNK entries); answers each entry's position, in order. */
export async function appendAll(timelines: Timelines, additions: { key: string; entry: TimelineEntry }[]): Promise<number[]> {
	const byKey = new Map<string, number[]>();
	additions.forEach(({ key }, i) => {
		byKey.set(key, [...(byKey.get(key) ?? []), i]);
	});
	const positions: number[] = new Array(additions.length);
	for (const [key, indexes] of byKey) {
		for (let i = 0; i < indexes.length; i += CHUNK) {
			const part = indexes.slice(i, i + CHUNK);
			const first = await append(
				timelines,
				key,
				part.map(index => additions[index].entry),
			);
			part.forEach((index, j) => {
				positions[index] = first + j;
			});
		}
	}
	return positions;
}

async function saveChunk(timelines: Timelines, key: string, head: TimelineHeadDoc, chunk: number): Promise<void> {
	const entries = fromHead(head, chunk * CHUNK + 1, (chunk + 1) * CHUNK);
	if (entries.length !== CHUNK) return;
	try {
		await timelines.chunks.create({ _id: chunkKey(key, chunk), entries: entries.map(e => e.entry) });
	} catch (err) {
		if (!isDuplicateKey(err)) throw err;
	}
}

export interface Positioned {
	position: number;
	entry: TimelineEntry;
}

/** The entries between the positions `from` and `to` (inclusive) that the head holds. */
function fromHead(head: TimelineHeadDoc, from: number, to: number): Positioned[] {
	const n = head.n ?? 0;
	const firstInHead = n - head.recent.length + 1;
	const result: Positioned[] = [];
	for (let position = Math.max(from, firstInHead); position <= Math.min(to, n); position++) {
		result.push({ position, entry: head.recent[position - firstInHead] });
	}
	return result;
}

function readHead(timelines: Timelines, key: string): Promise<TimelineHeadDoc | null> {
	return timelines.heads.findById(key).lean<TimelineHeadDoc>().exec();
}

/** The entries at positions `lo` to `hi` (already clamped to 1..n), by key: the head's, and the chunks the head no longer holds. */
async function entriesBetween(timelines: Timelines, key: string, head: TimelineHeadDoc, lo: number, hi: number): Promise<Positioned[]> {
	if (lo > hi) return [];
	const inHead = fromHead(head, lo, hi);
	const firstInHead = inHead[0]?.position ?? hi + 1;
	const older = lo < firstInHead ? await chunkEntries(timelines, key, lo, firstInHead - 1) : [];
	return [...older, ...inHead];
}

/** The entries at positions `lo` to `hi` that chunk documents hold. */
async function chunkEntries(timelines: Timelines, key: string, lo: number, hi: number): Promise<Positioned[]> {
	const wanted: string[] = [];
	for (let c = chunkOf(lo); c <= chunkOf(hi); c++) wanted.push(chunkKey(key, c));
	const chunks = new Map<string, TimelineEntry[]>();
	for (const doc of await timelines.chunks.find({ _id: { $in: wanted } }).lean<TimelineChunkDoc[]>()) chunks.set(doc._id, doc.entries);
	const result: Positioned[] = [];
	for (let position = lo; position <= hi; position++) {
		const entry = chunks.get(chunkKey(key, chunkOf(position)))?.[(position - 1) % CHUNK];
		if (entry) result.push({ position, entry });
	}
	return result;
}

/**
 * Up to `count` entries just below position `below` (null: from the newest),
 * in position order, and the timeline's length (NaN when the page came from
 * chunks alone and the head was not read).
 */
export async function entriesBelow(
	timelines: Timelines,
	key: string,
	below: number | null,
	count: number,
): Promise<{ n: number; entries: Positioned[] }> {
	// Deep in the list, the chunks alone hold the page: the head (up to 300 entries) need not be read.
	if (below !== null && below > count) {
		const fromChunks = await chunkEntries(timelines, key, below - count, below - 1);
		if (fromChunks.length === count) return { n: Number.NaN, entries: fromChunks };
	}
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head) return { n, entries: [] };
	const hi = Math.min(n, below === null ? n : below - 1);
	return { n, entries: await entriesBetween(timelines, key, head, Math.max(1, hi - count + 1), hi) };
}

/** Up to `count` entries just above position `above` (0: from the oldest), in position order, and the timeline's length. */
export async function entriesAbove(
	timelines: Timelines,
	key: string,
	above: number,
	count: number,
): Promise<{ n: number; entries: Positioned[] }> {
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head) return { n, entries: [] };
	return { n, entries: await entriesBetween(timelines, key, head, Math.max(1, above + 1), Math.min(n, above + count)) };
}

/**
 * The last position whose entry's time is at most `at` (0 when none is): a
 * binary search over chunks, about log2(n / CHUNK) reads. Entries are in
 * append order, which follows their times to within a request's duration;
 * callers that need an exact date boundary check each item's own time.
 */
export async function lastAtOrBefore(timelines: Timelines, key: string, at: number): Promise<number> {
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head || n === 0) return 0;
	const inHead = fromHead(head, 1, n);
	if (inHead[0].entry[1] <= at || inHead[0].position === 1) return lastIn(inHead, at);
	// The chunks up to the one holding the position before the head's first: the last whose first entry is at most `at`.
	let lo = 0;
	let hi = chunkOf(inHead[0].position - 1);
	let found: Positioned[] | null = null;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const chunk = await timelines.chunks.findById(chunkKey(key, mid)).lean<TimelineChunkDoc>();
		const entries = (chunk?.entries ?? []).map((entry, i) => ({ position: mid * CHUNK + i + 1, entry }));
		if (entries.length && entries[0].entry[1] <= at) {
			found = entries;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found ? lastIn(found, at) : 0;
}

function lastIn(entries: Positioned[], at: number): number {
	let result = entries[0].position - 1;
	for (const { position, entry } of entries) if (entry[1] <= at) result = position;
	return result;
}

/** Appends to many bags in one bulk write, with the additions other callers make at once; each bag keeps every entry. */
export function addToBags(timelines: Timelines, additions: { key: string; entry: TimelineEntry }[]): Promise<void> {
	return updateTogether(
		timelines.heads,
		additions.map(({ key, entry }) => ({ updateOne: { filter: { _id: key }, update: { $push: { recent: entry } }, upsert: true } })),
	);
}

/** A bag's entries, oldest first (none when it was never written). */
export async function bag(timelines: Timelines, key: string): Promise<TimelineEntry[]> {
	return (await readHead(timelines, key))?.recent ?? [];
}
