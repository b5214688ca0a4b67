// GET /api/customer/{id}/usage-events (docs/usage.md#reading-usage): a
// customer's events as they were received, newest first, a page at a time,
// read backwards by key from the customer's lists (event-pages.ts), from now to
// when usage first heard of the customer; never a scan of the events.
import { decodeCursor, encodeCursor, filtersKey, type ListError, type Page } from "../../shared/list-page";
import { formatDateTime } from "../../shared/time";
import type { UsageDeps } from "./deps";
import { UsageError } from "./errors";
import { bucketOf, bucketsBackwards } from "./event-pages";
import type { UsageEventDoc } from "./models";
import { isCustomerOf } from "./periods";

export interface UsageEventView {
	id: string;
	customerId: number;
	meter: string;
	timestamp: string;
	properties: Record<string, unknown>;
	/** The customer's period it counts in (docs/usage.md#time). */
	period: number;
	/** Counted after its period's charge: billed with the next one, as an adjustment. */
	late: boolean;
	/** counted; refused: its period was sealed while it was being counted (PERIOD_CLOSED). */
	status: UsageEventDoc["status"];
	receivedAt: string;
}

export function toEventView(doc: UsageEventDoc): UsageEventView {
	return {
		id: doc._id.slice(doc._id.indexOf(":") + 1),
		customerId: doc.customerId,
		meter: doc.meter,
		timestamp: formatDateTime(new Date(doc.timestamp)),
		properties: doc.properties ?? {},
		period: doc.period,
		late: doc.late ?? false,
		status: doc.status,
		receivedAt: formatDateTime(new Date(doc.receivedAt)),
	};
}

/** A cursor's position: the bucket, and how many of its events are still to show. */
const PER_BUCKET = 1_000_000;

export async function customerEvents(
	deps: UsageDeps,
	input: { accountId: number; id: number; limit?: number; cursor?: string },
): Promise<Page<UsageEventView> | UsageError | ListError> {
	if (!(await isCustomerOf(deps, input.accountId, input.id))) return UsageError.UnknownCustomer;
	const filters = filtersKey({ customer: input.id });
	const position = input.cursor === undefined ? null : decodeCursor(input.cursor, input.accountId, filters);
	if (typeof position === "string") return position;
	const limit = input.limit ?? 20;
	const { keys, next } = await newestKeys(deps, input.id, position, limit);
	const docs = new Map((await deps.db.events.find({ _id: { $in: keys } }).lean()).map(doc => [doc._id, doc]));
	const items = keys.flatMap(key => (docs.has(key) ? [toEventView(docs.get(key)!)] : []));
	return { data: items, nextCursor: next === null ? null : encodeCursor(input.accountId, filters, next) };
}

/** Up to `limit` of the customer's event keys, newest first, from the cursor's `position` (null: the newest); where the next page starts. */
async function newestKeys(deps: UsageDeps, customerId: number, position: number | null, limit: number) {
	const known = await deps.db.periods.findById(customerId, { createdAt: 1 }).lean();
	// Nothing is listed before usage heard of the customer.
	const first = bucketOf(known?.createdAt ? new Date(known.createdAt) : deps.now());
	const from = position === null ? bucketOf(deps.now()) : Math.floor(position / PER_BUCKET);
	let left = position === null ? Number.POSITIVE_INFINITY : position % PER_BUCKET;
	const keys: string[] = [];
	for await (const { bucket, events } of bucketsBackwards(deps, customerId, from, first)) {
		const end = Math.min(left, events.length);
		left = Number.POSITIVE_INFINITY;
		const taken = events.slice(Math.max(0, end - (limit - keys.length)), end).reverse();
		keys.push(...taken);
		if (keys.length < limit) continue;
		const rest = end - taken.length;
		return { keys, next: rest > 0 ? bucket * PER_BUCKET + rest : bucket > first ? (bucket - 1) * PER_BUCKET + (PER_BUCKET - 1) : null };
	}
	return { keys, next: null };
}
