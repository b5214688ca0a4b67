// Numbered timelines: lists whose positions are the numbers of a gapless
// sequence kept elsewhere (an account's invoice numbers, services/invoicing/numbering.ts).
// Whoever holds number k places its ref at position k, in whatever order the
// holders get there and as often as they retry, so a list reads in number
// order and shows each item once, whatever crashed or ran at once
// (docs/invoices.md#lists).
//
// Stored in a service's timeline collections (shared/timeline.ts), under keys
// of their own: a timeline's chunk c is `<key>#<c>` in timeline_chunks, its
// `slots` keyed by the position's offset in the chunk; a bag (a customer's
// documents, a short list) is one timeline_heads document whose `slots` are
// keyed by the number.
//   - A slot is written once: the first placement wins (a retry's places
//     nothing), so a ref never moves.
//   - A position with no ref yet (its number taken, its item not placed)
//     reads as a ref naming nothing (id -position, the latest time), which
//     a page skips as it skips a ref whose item is missing, without
//     ending a date range there.
import type { Collection } from "mongodb";
import { isDuplicateKey } from "./persistence";
import { CHUNK, type Positioned, type TimelineRef, type Timelines } from "./timeline";

interface SlotsDoc {
	_id: string;
	slots?: Record<string, TimelineRef>;
}

/** The collection as slots documents (straight to the driver: mongoose's schemas know no `slots`). */
const slotsIn = (model: Timelines["chunks"] | Timelines["heads"]) => model.collection as unknown as Collection<SlotsDoc>;

const chunkKey = (key: string, chunk: number) => `${key}#${chunk}`;
const chunkOf = (position: number) => Math.floor((position - 1) / CHUNK);
const offsetOf = (position: number) => (position - 1) % CHUNK;

/** What an empty position reads as: it names no item, and no date range ends at it. */
const unplaced = (position: number): Positioned => ({ position, ref: [-position, Number.MAX_SAFE_INTEGER] });

/** Sets the slot unless it holds a ref already; the slot's document is created if need be. */
async function placeOnce(model: Timelines["chunks"] | Timelines["heads"], _id: string, slot: string, ref: TimelineRef): Promise<void> {
	const path = `slots.${slot}`;
	const collection = slotsIn(model);
	for (let tries = 0; tries < 3; tries++) {
		try {
			await collection.updateOne({ _id, [path]: { $exists: false } }, { $set: { [path]: ref } }, { upsert: true });
			return;
		} catch (err) {
			// The slot is taken (the filter missed, the upsert hit the key), or another slot's upsert created the
			// document first: placed, or place again.
			if (!isDuplicateKey(err)) throw err;
			const doc = await collection.findOne({ _id });
			if (doc?.slots?.[slot]) return;
		}
	}
}

/** Places the ref of number `position` in the numbered timeline, once. */
export function place(timelines: Timelines, key: string, position: number, ref: TimelineRef): Promise<void> {
	return placeOnce(timelines.chunks, chunkKey(key, chunkOf(position)), String(offsetOf(position)), ref);
}

/** Adds the ref of number `number` to the numbered bag, once. */
export function placeInBag(timelines: Timelines, key: string, number: number, ref: TimelineRef): Promise<void> {
	return placeOnce(timelines.heads, key, String(number), ref);
}

/** The positions `lo` to `hi` of the numbered timeline, an empty one as `unplaced`. */
async function between(timelines: Timelines, key: string, lo: number, hi: number): Promise<Positioned[]> {
	if (lo > hi) return [];
	const wanted: string[] = [];
	for (let c = chunkOf(lo); c <= chunkOf(hi); c++) wanted.push(chunkKey(key, c));
	const docs = await slotsIn(timelines.chunks)
		.find({ _id: { $in: wanted } })
		.toArray();
	const chunks = new Map(docs.map(doc => [doc._id, doc.slots ?? {}]));
	const result: Positioned[] = [];
	for (let position = lo; position <= hi; position++) {
		const ref = chunks.get(chunkKey(key, chunkOf(position)))?.[String(offsetOf(position))];
		result.push(ref ? { position, ref } : unplaced(position));
	}
	return result;
}

/**
 * Up to `count` positions just below `below` (null: from `top`, the sequence's last number), in position order, and
 * `top` as the list's length.
 */
export async function numberedBelow(
	timelines: Timelines,
	key: string,
	top: number,
	below: number | null,
	count: number,
): Promise<{ n: number; refs: Positioned[] }> {
	const hi = Math.min(top, below === null ? top : below - 1);
	return { n: top, refs: await between(timelines, key, Math.max(1, hi - count + 1), hi) };
}

/**
 * The last position up to `top` whose ref's time is at most `at` (0 when none is): a binary search over chunks by
 * their first placed ref. Numbers follow their items' times to within a request's duration; callers that need an
 * exact date boundary check each item's own time.
 */
export async function numberedAtOrBefore(timelines: Timelines, key: string, top: number, at: number): Promise<number> {
	let lo = 0;
	let hi = chunkOf(top);
	let found = 0;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const placed = (await between(timelines, key, mid * CHUNK + 1, Math.min(top, (mid + 1) * CHUNK))).filter(p => p.ref[0] !== -p.position);
		if (placed.length && placed[0].ref[1] <= at) {
			for (const { position, ref } of placed) if (ref[1] <= at) found = position;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found;
}

/** A numbered bag's refs in number order (none when it was never written). */
export async function numberedBag(timelines: Timelines, key: string): Promise<TimelineRef[]> {
	const doc = await slotsIn(timelines.heads).findOne({ _id: key });
	return Object.entries(doc?.slots ?? {})
		.sort(([a], [b]) => Number(a) - Number(b))
		.map(([, ref]) => ref);
}
