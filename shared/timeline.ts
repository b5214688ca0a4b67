// Lists that page by key: an account's customers, transactions and events in
// the order they were added, read a page at a time without a range query, so
// a page costs the same at 1k items as at 50k (docs/capacity.md).
//
// A timeline numbers its refs (an item's id and time) 1, 2, 3, ... in the
// order the database applied the appends. Its head record holds the count and
// the latest refs; every CHUNK refs are copied, once complete, into a chunk
// record keyed `<timeline>#<chunk>`. Reading positions reads the head and
// at most a few chunks, all by `_id`.
//
// One append is one atomic update of the head: a position is never given
// twice and never left empty, so a reader going forward (events) can trust
// that nothing will later appear below the last position it read.
//
// A bag is the small sibling: every ref in one record, for lists that
// stay short (a customer's transactions, an email's customers). Appends to
// many bags go out as one bulk write.
import { type Connection, type Model, Schema } from "mongoose";
import { keyedGroupCommit, perObject } from "./group-commit";
import { isDuplicateKey, raw, updateTogether } from "./persistence";

/** A timeline's ref to one item, `[item id, time in epoch ms]`: what a page needs to fetch the item and to find a date. */
export type TimelineRef = [id: number | string, at: number];

/** Refs per chunk record. */
export const CHUNK = 100;
/** The head keeps this many of the latest refs, so a chunk is still in the head for a while after it completes. */
const RECENT = 3 * CHUNK;

export interface TimelineHeadDoc {
	/** The timeline's key, e.g. `c:<accountId>`; a bag's, e.g. `tc:<customerId>`. */
	_id: string;
	/** Refs appended so far (the last one's position); bags have none. */
	n?: number;
	/** A timeline's latest refs (position n last); a bag's refs, all of them. */
	recent: TimelineRef[];
}

export interface TimelineChunkDoc {
	/** `<timeline>#<chunk>`; chunk c holds positions c*CHUNK+1 .. (c+1)*CHUNK. */
	_id: string;
	/** Stored as `entries`, the name the collection keeps. */
	entries: TimelineRef[];
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
const appenderOf = perObject((timelines: Timelines) =>
	keyedGroupCommit<TimelineRef[], number>((key, groups) => appendGroups(timelines, key, groups)),
);

/** Appends refs (at most CHUNK) in one update, with those appended to the same key at once; answers the position of the first. */
export function append(timelines: Timelines, key: string, refs: TimelineRef[]): Promise<number> {
	if (refs.length === 0 || refs.length > CHUNK) throw new RangeError(`append takes 1 to ${CHUNK} refs, not ${refs.length}`);
	return appenderOf(timelines)(key, refs);
}

/** Appends each group's refs, groups in order and each whole in one update of at most CHUNK refs; answers each group's first position. */
async function appendGroups(timelines: Timelines, key: string, groups: TimelineRef[][]): Promise<number[]> {
	const firsts: number[] = [];
	for (let i = 0; i < groups.length; ) {
		const piece: TimelineRef[][] = [];
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

async function appendOnce(timelines: Timelines, key: string, refs: TimelineRef[]): Promise<number> {
	// The pre-image's count alone: an append answers its positions from it, and the head's refs (up to 300) travel
	// only for the append that completes a chunk. The pre-image, as in shared/id-allocator.ts: mongo-java-server answers
	// `new: true` with its live document, which later updates can change before the answer is sent (300 concurrent
	// appends saw about 20 positions twice); the pre-image is a copy.
	// Straight to the driver: several appends per checkout, and nothing for mongoose to cast.
	const before = await raw(timelines.heads).findOneAndUpdate(
		{ _id: key },
		{ $inc: { n: refs.length }, $push: { recent: { $each: refs, $slice: -RECENT } } },
		{ upsert: true, returnDocument: "before", projection: { n: 1 } },
	);
	const last = (before?.n ?? 0) + refs.length;
	const first = last - refs.length + 1;
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

/** Appends each ref to its timeline, one update per timeline (per CHUNK refs), the timelines at once; answers each ref's position, in order. */
export async function appendAll(timelines: Timelines, additions: { key: string; ref: TimelineRef }[]): Promise<number[]> {
	const byKey = new Map<string, number[]>();
	additions.forEach(({ key }, i) => {
		byKey.set(key, [...(byKey.get(key) ?? []), i]);
	});
	const positions: number[] = new Array(additions.length);
	// The timelines at once; each one's parts in order.
	await Promise.all(
		[...byKey].map(async ([key, indexes]) => {
			for (let i = 0; i < indexes.length; i += CHUNK) {
				const part = indexes.slice(i, i + CHUNK);
				const first = await append(
					timelines,
					key,
					part.map(index => additions[index].ref),
				);
				part.forEach((index, j) => {
					positions[index] = first + j;
				});
			}
		}),
	);
	return positions;
}

async function saveChunk(timelines: Timelines, key: string, head: TimelineHeadDoc, chunk: number): Promise<void> {
	const refs = fromHead(head, chunk * CHUNK + 1, (chunk + 1) * CHUNK);
	if (refs.length !== CHUNK) return;
	try {
		await timelines.chunks.create({ _id: chunkKey(key, chunk), entries: refs.map(e => e.ref) });
	} catch (err) {
		if (!isDuplicateKey(err)) throw err;
	}
}

export interface Positioned {
	position: number;
	ref: TimelineRef;
}

/** The refs between the positions `from` and `to` (inclusive) that the head holds. */
function fromHead(head: TimelineHeadDoc, from: number, to: number): Positioned[] {
	const n = head.n ?? 0;
	const firstInHead = n - head.recent.length + 1;
	const result: Positioned[] = [];
	for (let position = Math.max(from, firstInHead); position <= Math.min(to, n); position++) {
		result.push({ position, ref: head.recent[position - firstInHead] });
	}
	return result;
}

function readHead(timelines: Timelines, key: string): Promise<TimelineHeadDoc | null> {
	return timelines.heads.findById(key).lean<TimelineHeadDoc>().exec();
}

/** The refs at positions `lo` to `hi` (already clamped to 1..n), by key: the head's, and the chunks the head no longer holds. */
async function refsBetween(timelines: Timelines, key: string, head: TimelineHeadDoc, lo: number, hi: number): Promise<Positioned[]> {
	if (lo > hi) return [];
	const inHead = fromHead(head, lo, hi);
	const firstInHead = inHead[0]?.position ?? hi + 1;
	const older = lo < firstInHead ? await chunkRefs(timelines, key, lo, firstInHead - 1) : [];
	return [...older, ...inHead];
}

/** The refs at positions `lo` to `hi` that chunk records hold. */
async function chunkRefs(timelines: Timelines, key: string, lo: number, hi: number): Promise<Positioned[]> {
	const wanted: string[] = [];
	for (let c = chunkOf(lo); c <= chunkOf(hi); c++) wanted.push(chunkKey(key, c));
	const chunks = new Map<string, TimelineRef[]>();
	for (const doc of await timelines.chunks.find({ _id: { $in: wanted } }).lean<TimelineChunkDoc[]>()) chunks.set(doc._id, doc.entries);
	const result: Positioned[] = [];
	for (let position = lo; position <= hi; position++) {
		const ref = chunks.get(chunkKey(key, chunkOf(position)))?.[(position - 1) % CHUNK];
		if (ref) result.push({ position, ref });
	}
	return result;
}

/**
 * Up to `count` refs just below position `below` (null: from the newest),
 * in position order, and the timeline's length (NaN when the page came from
 * chunks alone and the head was not read).
 */
export async function refsBelow(
	timelines: Timelines,
	key: string,
	below: number | null,
	count: number,
): Promise<{ n: number; refs: Positioned[] }> {
	// Deep in the list, the chunks alone hold the page: the head (up to 300 refs) need not be read.
	if (below !== null && below > count) {
		const fromChunks = await chunkRefs(timelines, key, below - count, below - 1);
		if (fromChunks.length === count) return { n: Number.NaN, refs: fromChunks };
	}
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head) return { n, refs: [] };
	const hi = Math.min(n, below === null ? n : below - 1);
	return { n, refs: await refsBetween(timelines, key, head, Math.max(1, hi - count + 1), hi) };
}

/** Up to `count` refs just above position `above` (0: from the oldest), in position order, and the timeline's length. */
export async function refsAbove(
	timelines: Timelines,
	key: string,
	above: number,
	count: number,
): Promise<{ n: number; refs: Positioned[] }> {
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head) return { n, refs: [] };
	return { n, refs: await refsBetween(timelines, key, head, Math.max(1, above + 1), Math.min(n, above + count)) };
}

/**
 * The last position whose ref's time is at most `at` (0 when none is): a
 * binary search over chunks, about log2(n / CHUNK) reads. Refs are in
 * append order, which follows their times to within a request's duration;
 * callers that need an exact date boundary check each item's own time.
 */
export async function lastAtOrBefore(timelines: Timelines, key: string, at: number): Promise<number> {
	const head = await readHead(timelines, key);
	const n = head?.n ?? 0;
	if (!head || n === 0) return 0;
	const inHead = fromHead(head, 1, n);
	if (inHead[0].ref[1] <= at || inHead[0].position === 1) return lastIn(inHead, at);
	// The chunks up to the one holding the position before the head's first: the last whose first ref is at most `at`.
	let lo = 0;
	let hi = chunkOf(inHead[0].position - 1);
	let found: Positioned[] | null = null;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const chunk = await timelines.chunks.findById(chunkKey(key, mid)).lean<TimelineChunkDoc>();
		const refs = (chunk?.entries ?? []).map((ref, i) => ({ position: mid * CHUNK + i + 1, ref }));
		if (refs.length && refs[0].ref[1] <= at) {
			found = refs;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found ? lastIn(found, at) : 0;
}

function lastIn(refs: Positioned[], at: number): number {
	let result = refs[0].position - 1;
	for (const { position, ref } of refs) if (ref[1] <= at) result = position;
	return result;
}

/** Appends to many bags in one bulk write, with the additions other callers make at once; each bag keeps every ref. */
export function addToBags(timelines: Timelines, additions: { key: string; ref: TimelineRef }[]): Promise<void> {
	return updateTogether(
		timelines.heads,
		additions.map(({ key, ref }) => ({ updateOne: { filter: { _id: key }, update: { $push: { recent: ref } }, upsert: true } })),
	);
}

/** A bag's refs, oldest first (none when it was never written). */
export async function bag(timelines: Timelines, key: string): Promise<TimelineRef[]> {
	return (await readHead(timelines, key))?.recent ?? [];
}
