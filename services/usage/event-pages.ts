// A customer's events, kept in order for GET /api/customer/{id}/usage-events
// (event-list.ts), by key and in documents that stay small however busy the
// customer: each batch writes the customer's events as one page; the page is
// listed in the customer's bucket of the 10 seconds it was received in, and
// the bucket in the customer's hour. Two commands per batch, whatever its
// customers; written again by a sweep finishing the batch, they list nothing
// twice ($addToSet).
import { insertEach, isDuplicateKey, updateTogether } from "../../shared/persistence";
import type { Counted } from "./batch-apply";
import type { UsageDeps } from "./deps";

const BUCKET_MS = 10_000;
const BUCKETS_PER_HOUR = 360;
/** Hours of buckets read per command, going back. */
const HOURS_PER_READ = 168;

export const bucketOf = (at: Date) => Math.floor(at.getTime() / BUCKET_MS);
const hourOf = (bucket: number) => Math.floor(bucket / BUCKETS_PER_HOUR);
const bucketKey = (customerId: number, bucket: number) => `${customerId}:b${bucket}`;
const hourKey = (customerId: number, hour: number) => `${customerId}:h${hour}`;

/** Lists the batch's events: a page per customer, in its bucket, the bucket in its hour. */
export async function listPages(deps: UsageDeps, batch: string, events: Counted[], receivedAt: Date): Promise<void> {
	const byCustomer = new Map<number, Counted[]>();
	for (const event of events) {
		const mine = byCustomer.get(event.customerId);
		if (mine) mine.push(event);
		else byCustomer.set(event.customerId, [event]);
	}
	const pages = [...byCustomer].map(([customerId, mine]) => ({
		_id: `${customerId}:${batch}`,
		accountId: mine[0].accountId,
		customerId,
		events: mine.map(event => event.key),
		receivedAt,
	}));
	for (const err of await insertEach(deps.db.pages, pages)) if (err && !isDuplicateKey(err)) throw err;
	const bucket = bucketOf(receivedAt);
	const added = (_id: string, $addToSet: object) => ({ updateOne: { filter: { _id }, update: { $addToSet }, upsert: true } });
	await updateTogether(deps.db.lists, [
		...pages.map(page => added(bucketKey(page.customerId, bucket), { pages: [page._id, page.events.length] })),
		...pages.map(page => added(hourKey(page.customerId, hourOf(bucket)), { buckets: bucket })),
	]);
}

/**
 * The customer's buckets from `from` back to `first`, newest first, each with its events oldest first (its pages in
 * the order they were listed); a week of hours per read, then each hour's buckets.
 */
export async function* bucketsBackwards(deps: UsageDeps, customerId: number, from: number, first: number) {
	for (let hour = hourOf(from); hour >= hourOf(first); hour -= HOURS_PER_READ) {
		const hours = Array.from({ length: Math.min(HOURS_PER_READ, hour - hourOf(first) + 1) }, (_, i) => hour - i);
		const found = await deps.db.lists.find({ _id: { $in: hours.map(h => hourKey(customerId, h)) } }).lean();
		const byId = new Map(found.map(doc => [doc._id, doc]));
		for (const h of hours) {
			const buckets = (byId.get(hourKey(customerId, h))?.buckets ?? []).filter(b => b <= from && b >= first).sort((a, b) => b - a);
			if (buckets.length === 0) continue;
			const lists = new Map(
				(await deps.db.lists.find({ _id: { $in: buckets.map(b => bucketKey(customerId, b)) } }).lean()).map(doc => [doc._id, doc]),
			);
			for (const bucket of buckets) yield { bucket, events: await eventsOf(deps, lists.get(bucketKey(customerId, bucket))?.pages ?? []) };
		}
	}
}

async function eventsOf(deps: UsageDeps, pages: [string, number][]): Promise<string[]> {
	const ids = [...new Set(pages.map(([id]) => id))];
	const docs = new Map((await deps.db.pages.find({ _id: { $in: ids } }).lean()).map(doc => [doc._id, doc]));
	return ids.flatMap(id => docs.get(id)?.events ?? []);
}
