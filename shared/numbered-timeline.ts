// Numbered timelines: lists whose positions are the numbers of a gapless
// sequence kept elsewhere (an account's invoice numbers, services/invoicing/numbering.ts).
// Whoever holds number k places its ref at position k, in whatever order the
// holders get there and as often as they retry, so a list reads in number
// order and shows each item once, whatever crashed or ran at once
// (docs/invoices.md#lists).
//
// Stored in a service's timeline_chunks (shared/timeline.ts), under keys of
// their own: a timeline's chunk c is `<key>#<c>`, its `slots` keyed by the
// position's offset in the chunk; a bag (a customer's documents, a short list)
// is one document whose `slots` are keyed by the number. A document's places in
// its account's list and its customer's bag are one command, with the places
// other documents take on this node at that moment (shared/group-commit.ts).
//   - A slot is written once: the first placement wins (a retry's places
//     nothing), so a ref never moves.
//   - A position with no ref yet (its number taken, its item not placed)
//     reads as a ref naming nothing (id -position, the latest time), which
//     a page skips as it skips a ref whose item is missing, without
//     ending a date range there.
import type { Collection } from "mongodb";
import { groupCommit, perObject } from "./group-commit";
import { CHUNK, type Positioned, type TimelineRef, type Timelines } from "./timeline";

interface SlotsDoc {
	_id: string;
	slots?: Record<string, TimelineRef>;
}

/** The slots documents, straight to the driver (mongoose's schemas know no `slots`). */
const slotsIn = (timelines: Timelines) => timelines.chunks.collection as unknown as Collection<SlotsDoc>;

const chunkKey = (key: string, chunk: number) => `${key}#${chunk}`;
const chunkOf = (position: number) => Math.floor((position - 1) / CHUNK);
const offsetOf = (position: number) => (position - 1) % CHUNK;

/** What an empty position reads as: it names no item, and no date range ends at it. */
const unplaced = (position: number): Positioned => ({ position, ref: [-position, Number.MAX_SAFE_INTEGER] });

/** One ref to place: the slot `slot` of the slots document `_id`. */
export interface Placement {
	_id: string;
	slot: string;
	ref: TimelineRef;
}

/** The ref of number `position` in the numbered timeline `key`. */
export const inTimeline = (key: string, position: number, ref: TimelineRef): Placement => ({
	_id: chunkKey(key, chunkOf(position)),
	slot: String(offsetOf(position)),
	ref,
});

/** The ref of number `number` in the numbered bag `key`. */
export const inBag = (key: string, number: number, ref: TimelineRef): Placement => ({ _id: key, slot: String(number), ref });

/** The places asked for at once on this node, per service: one command for all (shared/group-commit.ts). */
const placerOf = perObject((timelines: Timelines) =>
	groupCommit<Placement[]>(async groups => {
		await placeOnce(slotsIn(timelines), groups.flat());
		return undefined;
	}),
);

/** Places each ref in its slot, once: a slot that holds a ref already keeps it. */
export function placeAll(timelines: Timelines, placements: Placement[]): Promise<void> {
	return placerOf(timelines)(placements);
}

/** Sets each slot unless it holds a ref already, creating its document if need be, in one command (and again for those refused). */
async function placeOnce(collection: Collection<SlotsDoc>, placements: Placement[]): Promise<void> {
	let left = placements;
	for (let tries = 0; tries < 3 && left.length > 0; tries++) {
		const operations = left.map(({ _id, slot, ref }) => ({
			updateOne: { filter: { _id, [`slots.${slot}`]: { $exists: false } }, update: { $set: { [`slots.${slot}`]: ref } }, upsert: true },
		}));
		let refused: Placement[] = [];
		try {
			await collection.bulkWrite(operations, { ordered: false });
		} catch (err) {
			// A slot that is taken (the filter missed, the upsert hit the key), or a document another upsert created first,
			// is refused as a taken key: placed, or place again. Anything else (the connection lost) is thrown.
			const writeErrors = (err as { writeErrors?: { index: number; code?: number }[] }).writeErrors ?? [];
			if (writeErrors.length === 0 || writeErrors.some(e => e.code !== 11000)) throw err;
			refused = writeErrors.map(e => left[e.index]);
		}
		if (refused.length === 0) return;
		const docs = await collection.find({ _id: { $in: [...new Set(refused.map(p => p._id))] } }).toArray();
		const slotsOf = new Map(docs.map(doc => [doc._id, doc.slots ?? {}]));
		left = refused.filter(p => !slotsOf.get(p._id)?.[p.slot]);
	}
}

/** The positions `lo` to `hi` of the numbered timeline, an empty one as `unplaced`. */
async function between(timelines: Timelines, key: string, lo: number, hi: number): Promise<Positioned[]> {
	if (lo > hi) return [];
	const wanted: string[] = [];
	for (let c = chunkOf(lo); c <= chunkOf(hi); c++) wanted.push(chunkKey(key, c));
	const docs = await slotsIn(timelines)
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
	const doc = await slotsIn(timelines).findOne({ _id: key });
	return Object.entries(doc?.slots ?? {})
		.sort(([a], [b]) => Number(a) - Number(b))
		.map(([, ref]) => ref);
}
