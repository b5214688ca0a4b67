// Work due at a time, found by key: the ids due in one time slot are kept in
// a document keyed by the slot (and a shard, so one busy slot is not one hot
// document), and a cursor document says from which slot on there may still be
// work. Finding what is due reads those keys; it never searches the
// collection of the work itself, however large it grows.
//
// The schedule is an index, not the truth: a document may be listed in a slot
// it has since left (a consumer reads it by id and checks it is really due),
// but it is never missing from the slot it is due in, because it is added to
// its new slot before its own document changes and removed from the old one
// after.
//
// A listing can land late: its time was taken, then the command waited (a busy
// node, a slow database) while a poll found its slot empty and moved the
// cursor past it. Two things keep it from being lost behind the cursor: the
// add moves the cursor back to its slot in the same command, after the
// listing, if the cursor is past it; and a poll reads a few slots behind the
// cursor (and behind where this node last moved it from), for a listing that
// landed between a poll's reading and its moving of the cursor.
import type { Model } from "mongoose";
import { Schema } from "mongoose";
import { type UpdateOperation, updateTogether } from "./persistence";

export interface ScheduleSlotDoc {
	/** `<slot start, epoch ms>#<shard>`, or "cursor". */
	_id: string;
	ids: (number | string)[];
	/** The cursor's: the first slot that may still hold work. */
	slot?: number;
}

export function scheduleSchema(): Schema<ScheduleSlotDoc> {
	return new Schema<ScheduleSlotDoc>(
		{ _id: String, ids: { type: [Schema.Types.Mixed], default: [] }, slot: Number },
		{ versionKey: false },
	);
}

/** One id listed in a slot, due at the slot's time: a listing. */
export interface Listing<Id> {
	id: Id;
	/** The slot it was listed in: remove it from there once handled. */
	at: Date;
}

export interface ScheduleOptions {
	slotMs: number;
	shards: number;
	/**
	 * How far back a reading looks while no cursor has been written: for a schedule nobody initializes (notifications'
	 * webhook attempts). Without it such a reading starts at now, as `initialize(now)` would; billing's schedules and the
	 * sandbox's notices are initialized when their service starts, before anything reads them.
	 */
	firstLookBackMs?: number;
	/** Slots read per query. */
	batch?: number;
}

export interface Schedule<Id extends number | string> {
	/** Lists `id` in the slot of `at`. */
	add(id: Id, at: Date): Promise<void>;
	/** Lists each id in the slot of its time, in one command. */
	addAll(listings: Listing<Id>[]): Promise<void>;
	/** Takes `id` out of the slot of `at` (a no-op when it is not there), unless `listedAt` is in that same slot: it was just listed there again. */
	remove(id: Id, at: Date, listedAt?: Date | null): Promise<void>;
	/** Takes each id out of the slot of its time, in one command (with `listedAt`, as remove does). */
	removeAll(listings: (Listing<Id> & { listedAt?: Date | null })[]): Promise<void>;
	/**
	 * What is listed in the slots from the cursor to `until`, oldest slot first.
	 * `moveCursor` (default true) lets the cursor pass the leading slots found
	 * empty; never beyond `now` (a run for a future time moves nothing).
	 * `from`: read from its slot instead, when that is after the cursor (a test
	 * clock's steps read on from where the last one ended); it moves nothing.
	 */
	due(until: Date, now: Date, options?: { moveCursor?: boolean; from?: Date }): Promise<Listing<Id>[]>;
	/** Writes the cursor at the slot of `from` if there is none: the schedule is in use from now on, and holds nothing earlier. */
	initialize(from: Date): Promise<void>;
}

const CURSOR = "cursor";
/** A poll reads this many slots behind the cursor: listings that landed while a poll moved the cursor past them. */
const LOOK_BEHIND_SLOTS = 5;
/** Past this many batches of slots, the slots are read by one range read instead of by key. */
const LONG_STRETCH_BATCHES = 10;
const sameDigits = (a: number, b: number) => String(a).length === String(b).length;

/** The slot documents the listings fall in, keyed `<slot start>#<shard>`, each with its ids. */
export function slotDocuments<Id extends number | string>(
	listings: Listing<Id>[],
	{ slotMs, shards }: Pick<ScheduleOptions, "slotMs" | "shards">,
): Map<string, Id[]> {
	const groups = new Map<string, Id[]>();
	for (const { id, at } of listings) {
		const key = `${Math.floor(at.getTime() / slotMs) * slotMs}#${shardOf(id, shards)}`;
		groups.set(key, [...(groups.get(key) ?? []), id]);
	}
	return groups;
}

function shardOf(id: number | string, shards: number): number {
	if (typeof id === "number") return id % shards;
	let hash = 0;
	for (let i = 0; i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) | 0;
	return Math.abs(hash) % shards;
}

export function createSchedule<Id extends number | string>(model: Model<ScheduleSlotDoc>, options: ScheduleOptions): Schedule<Id> {
	const { slotMs, shards } = options;
	const batch = options.batch ?? 200;
	const slotOf = (at: Date) => Math.floor(at.getTime() / slotMs) * slotMs;
	const keyOf = (slot: number, shard: number) => `${slot}#${shard}`;

	/** The slot documents from `from` to `to`: by key, a batch of slots at a time; a long stretch (a run years ahead) by one range read. */
	async function slotDocs(from: number, to: number): Promise<ScheduleSlotDoc[]> {
		if ((to - from) / slotMs > LONG_STRETCH_BATCHES * batch && sameDigits(from, to)) {
			// Keys of the same number of digits sort as their slots do; "#" sorts before the digits of a longer key.
			return model.find({ _id: { $gte: `${from}#`, $lte: `${to}#~` } }).lean();
		}
		const docs: ScheduleSlotDoc[] = [];
		for (let start = from; start <= to; start += batch * slotMs) {
			const slots: number[] = [];
			for (let slot = start; slot <= Math.min(to, start + (batch - 1) * slotMs); slot += slotMs) slots.push(slot);
			const keys = slots.flatMap(slot => Array.from({ length: shards }, (_, shard) => keyOf(slot, shard)));
			docs.push(...(await model.find({ _id: { $in: keys } }).lean()));
		}
		return docs;
	}

	async function readSlots(from: number, to: number): Promise<{ listings: Listing<Id>[]; firstHeld: number | null; empty: string[] }> {
		const listings: Listing<Id>[] = [];
		const empty: string[] = [];
		let firstHeld: number | null = null;
		const docs = (await slotDocs(from, to)).filter(doc => doc._id !== CURSOR);
		for (const doc of docs.sort((a, b) => Number.parseInt(a._id, 10) - Number.parseInt(b._id, 10))) {
			if (doc.ids.length === 0) {
				empty.push(doc._id);
				continue;
			}
			const slot = Number.parseInt(doc._id, 10);
			firstHeld = firstHeld === null ? slot : Math.min(firstHeld, slot);
			for (const id of doc.ids) listings.push({ id: id as Id, at: new Date(slot) });
		}
		return { listings, firstHeld, empty };
	}

	const notListedAgain = (listings: (Listing<Id> & { listedAt?: Date | null })[]) =>
		listings.filter(({ at, listedAt }) => !listedAt || slotOf(listedAt) !== slotOf(at));

	/** One update per slot document the listings fall in. */
	const slotUpdates = (listings: Listing<Id>[], update: (ids: Id[]) => object, upsert: boolean): UpdateOperation[] =>
		[...slotDocuments(listings, options)].map(([key, ids]) => ({ updateOne: { filter: { _id: key }, update: update(ids), upsert } }));

	// Writes made at once on this node go out together, in order (updateTogether): an id added then removed stays removed.

	/** Lists the ids; a cursor already past the earliest of their slots (a poll moved it while this waited) is moved back to it, after them. */
	async function list(listings: Listing<Id>[]): Promise<void> {
		if (listings.length === 0) return;
		const earliest = listings.reduce((min, { at }) => Math.min(min, slotOf(at)), Number.POSITIVE_INFINITY);
		await updateTogether(model, [
			...slotUpdates(listings, ids => ({ $addToSet: { ids: { $each: ids } } }), true),
			{ updateOne: { filter: { _id: CURSOR, slot: { $gt: earliest } }, update: { $set: { slot: earliest } }, upsert: false } },
		]);
	}

	/** Takes the ids out of their slots. */
	const unlist = (listings: Listing<Id>[]) =>
		updateTogether(
			model,
			slotUpdates(listings, ids => ({ $pullAll: { ids } }), false),
		);

	/** Where a reading starts while no cursor has been written (ScheduleOptions.firstLookBackMs). */
	const lookBackSlot = (now: Date) => slotOf(new Date(now.getTime() - (options.firstLookBackMs ?? 0)));

	/** The cursor's slot as this process last read or wrote it. */
	let knownCursor: number | null = null;
	/** Where this process last moved the cursor from: its next poll reads from there too (once). */
	let movedFrom: number | null = null;
	/** Where a poll from the cursor at `from` reads: a few slots behind it, and behind `movedFrom` (listings that landed late). */
	const lookBehind = (from: number) => Math.min(from - LOOK_BEHIND_SLOTS * slotMs, movedFrom ?? from);

	/**
	 * The stored cursor only moves forward, and never past the slot of the now that moved it: while the one this process
	 * last saw is not in the future (a clock set back), the stored one is there or further on, and the slots are read
	 * from it without reading the cursor. Those behind the stored cursor, if it moved on, are empty; moving it then fails,
	 * and the next reading reads it.
	 */
	const trustedCursor = (now: Date) => (knownCursor !== null && knownCursor <= slotOf(now) ? knownCursor : null);

	async function moveCursorTo(from: number | null, next: number, empty: string[]): Promise<void> {
		// Compare-and-set: of two nodes moving it at once, one wins, and either answer is right.
		const moved = await model
			.updateOne({ _id: CURSOR, ...(from !== null ? { slot: from } : {}) }, { $set: { slot: next } }, { upsert: from === null })
			.catch(() => undefined);
		knownCursor = moved && moved.matchedCount + moved.upsertedCount > 0 ? next : null;
		if (knownCursor !== null) movedFrom = from;
		// Emptied slots behind the cursor are deleted, only if still empty (an add may have come meanwhile).
		const behind = empty.filter(key => Number.parseInt(key, 10) < next);
		if (behind.length) await model.deleteMany({ _id: { $in: behind }, ids: { $size: 0 } });
	}

	return {
		add: (id, at) => list([{ id, at }]),
		addAll: listings => list(listings),

		remove: (id, at, listedAt) => unlist(notListedAgain([{ id, at, listedAt }])),
		removeAll: listings => unlist(notListedAgain(listings)),

		async due(until, now, { moveCursor = true, from: readFrom } = {}) {
			const to = slotOf(until);
			const known = trustedCursor(now);
			// Before the cursor nothing can be due: a poll of an idle schedule reads nothing.
			if (known !== null && to < known) return [];
			const cursor = known !== null ? { slot: known } : await model.findById(CURSOR).lean();
			knownCursor = cursor?.slot ?? null;
			const from = cursor?.slot ?? lookBackSlot(now);
			// A later start reads on from there, and moves nothing: the slots before it were not looked at.
			if (readFrom && slotOf(readFrom) > from) return (await readSlots(slotOf(readFrom), to)).listings;
			const { listings, firstHeld, empty } = await readSlots(lookBehind(from), to);
			// Read once behind where it last moved from: a node that no longer wins the cursor does not keep reading from there.
			movedFrom = null;
			// Past the slots found empty, but never past now: work can still be added to the current slot.
			const next = Math.min(Math.max(firstHeld ?? to + slotMs, from), slotOf(now));
			if (moveCursor && next > from) await moveCursorTo(cursor?.slot ?? null, next, empty);
			return listings;
		},

		async initialize(from) {
			await model.updateOne({ _id: CURSOR }, { $setOnInsert: { slot: slotOf(from) } }, { upsert: true });
		},
	};
}
