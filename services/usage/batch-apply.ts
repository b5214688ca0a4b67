// A batch's stored events counted into their aggregates, in a few commands
// whatever its size (docs/usage.md#how-it-is-stored): the distinct values of
// unique counts (one insert), the customers' event lists (event-pages.ts: a
// page per customer and their listing, two commands), then one update per
// aggregate, all in one bulk write. Each aggregate
// update names the batch in `applied`, so a sweep finishing a crashed node's
// batch (batch-sweep.ts) skips the aggregates it already reached, and a
// distinct value names the batch that inserted it, so its count is added
// once, by that batch. A late event's aggregate is updated alone and read
// back: one its period's close sealed meanwhile refuses the event.
import type { UsageValues } from "../../shared/contracts/usage";
import { insertEach, isDuplicateKey, raw, updateTogether } from "../../shared/persistence";
import type { UsageDeps } from "./deps";
import { listPages } from "./event-pages";
import type { AggregateDoc } from "./models";

/** Batches an aggregate remembers: far more than can be in flight on it at once. */
const APPLIED_KEPT = 64;

/** An event stored, as its aggregate counts it. */
export interface Counted {
	key: string;
	accountId: number;
	customerId: number;
	meter: string;
	period: number;
	timestamp: Date;
	/** sum, max, latest: millionths; else 0. */
	value: number;
	unique: string | null;
	late: boolean;
}

interface Group {
	_id: string;
	first: Counted;
	count: number;
	sum: number;
	max: number;
	latest: string;
	uniques: Set<string>;
	keys: string[];
}

export const aggregateKey = (customerId: number, meter: string, period: number) => `${customerId}:${meter}:${period}`;

/** `latest` as stored: ordered by the timestamp, then the value, so $max keeps the latest event's value. */
export const latestOf = (timestamp: Date, value: number) =>
	`${String(timestamp.getTime()).padStart(15, "0")}|${String(value).padStart(20, "0")}`;

export function valuesOf(doc: Pick<AggregateDoc, "count" | "sum" | "max" | "unique" | "latest"> | null): UsageValues {
	if (!doc) return { count: 0, sum: 0, max: 0, unique: 0, latest: 0 };
	const latest = doc.latest ? Number(doc.latest.split("|")[1]) : 0;
	return { count: doc.count ?? 0, sum: doc.sum ?? 0, max: doc.max ?? 0, unique: doc.unique ?? 0, latest };
}

function groupsOf(events: Counted[]): Map<string, Group> {
	const groups = new Map<string, Group>();
	for (const event of events) {
		const id = aggregateKey(event.customerId, event.meter, event.period);
		let group = groups.get(id);
		if (!group) {
			group = { _id: id, first: event, count: 0, sum: 0, max: 0, latest: "", uniques: new Set(), keys: [] };
			groups.set(id, group);
		}
		group.count++;
		group.sum += event.value;
		group.max = Math.max(group.max, event.value);
		const latest = latestOf(event.timestamp, event.value);
		if (latest > group.latest) group.latest = latest;
		if (event.unique) group.uniques.add(event.unique);
		group.keys.push(event.key);
	}
	return groups;
}

/** The distinct values this batch is the first to count, per aggregate (those a crashed run of it inserted included). */
async function newUniques(deps: UsageDeps, batch: string, groups: Group[]): Promise<Map<string, number>> {
	const docs = groups.flatMap(group => [...group.uniques].map(hash => ({ _id: `${group._id}:${hash}`, batch })));
	const refused = await insertEach(deps.db.uniques, docs);
	const taken = docs.filter((_, i) => refused[i] !== null);
	for (const err of refused) if (err && !isDuplicateKey(err)) throw err;
	const ours = new Set(docs.filter((_, i) => refused[i] === null).map(doc => doc._id));
	if (taken.length) {
		const stored = await deps.db.uniques.find({ _id: { $in: taken.map(doc => doc._id) } }).lean();
		for (const doc of stored) if (doc.batch === batch) ours.add(doc._id);
	}
	const counts = new Map<string, number>();
	for (const id of ours) {
		const aggregate = id.slice(0, id.lastIndexOf(":"));
		counts.set(aggregate, (counts.get(aggregate) ?? 0) + 1);
	}
	return counts;
}

function updateOf(group: Group, batch: string, unique: number) {
	const { accountId, customerId, meter, period } = group.first;
	return {
		$inc: { count: group.count, sum: group.sum, unique },
		$max: { max: group.max, latest: group.latest },
		$push: { applied: { $each: [batch], $slice: -APPLIED_KEPT } },
		$setOnInsert: { accountId, customerId, meter, period, sealed: false },
	};
}

/**
 * Counts the batch's events; answers the keys of late events refused because their period's close sealed it
 * meanwhile. `finishing`: a sweep's run of a crashed batch, which skips the aggregates that already have it.
 */
export async function applyBatch(
	deps: UsageDeps,
	batch: string,
	events: Counted[],
	receivedAt: Date,
	finishing = false,
): Promise<Set<string>> {
	let groups = [...groupsOf(events).values()];
	if (finishing) {
		const stored = await deps.db.aggregates.find({ _id: { $in: groups.map(group => group._id) } }, { applied: 1 }).lean();
		const done = new Set(stored.filter(doc => doc.applied?.includes(batch)).map(doc => doc._id));
		// Every aggregate reached: its events were listed before them. Some not: listed again, which lists nothing twice.
		groups = groups.filter(group => !done.has(group._id));
		if (groups.length === 0) return new Set();
	}
	const uniques = await newUniques(deps, batch, groups);
	await listPages(deps, batch, events, receivedAt);
	const current = groups.filter(group => !group.first.late);
	await updateTogether(
		deps.db.aggregates,
		current.map(group => ({
			updateOne: { filter: { _id: group._id }, update: updateOf(group, batch, uniques.get(group._id) ?? 0), upsert: true },
		})),
	);
	const refused = new Set<string>();
	for (const group of groups.filter(group => group.first.late)) {
		const update = updateOf(group, batch, uniques.get(group._id) ?? 0);
		const doc = await raw(deps.db.aggregates).findOneAndUpdate({ _id: group._id }, update as never, {
			upsert: true,
			returnDocument: "after",
		});
		if (doc?.sealed) for (const key of group.keys) refused.add(key);
	}
	if (refused.size) await deps.db.events.updateMany({ _id: { $in: [...refused] } }, { $set: { status: "refused" } });
	return refused;
}
