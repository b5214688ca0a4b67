// GET /api/customer/{id}/usage-events (docs/usage.md#reading-usage): a
// customer's events as they were received, newest first, a page at a time.
// Each batch wrote the customer's events as one page, listed in the
// customer's list of the day it was received (batch-apply.ts); a page reads
// those lists backwards by key, a month of days per command, from today to the
// day usage first heard of the customer, and never scans the events.
import { decodeCursor, encodeCursor, filtersKey, type ListError, type Page } from "../../shared/list-page";
import { formatDateTime } from "../../shared/time";
import { dayOf } from "./batch-apply";
import type { UsageDeps } from "./deps";
import { UsageError } from "./errors";
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

const DAY_MS = 86_400_000;
/** Days of lists read per command. */
const WINDOW = 31;
/** A cursor's position: the day (days since 1970) and how many of that day's events are still to show. */
const PER_DAY = 10_000_000;

const dayNumber = (at: Date) => Math.floor(at.getTime() / DAY_MS);

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
	// Nothing listed before usage heard of the customer (no list at all: it never sent one).
	const first = known?.createdAt ? dayNumber(new Date(known.createdAt)) : dayNumber(deps.now());
	const from = position === null ? dayNumber(deps.now()) : Math.floor(position / PER_DAY);
	let left = position === null ? Number.POSITIVE_INFINITY : position % PER_DAY;
	const keys: string[] = [];
	for await (const { day, events } of daysBackwards(deps, customerId, from, first)) {
		const end = Math.min(left, events.length);
		left = Number.POSITIVE_INFINITY;
		const taken = events.slice(Math.max(0, end - (limit - keys.length)), end).reverse();
		keys.push(...taken);
		if (keys.length < limit) continue;
		const rest = end - taken.length;
		return { keys, next: rest > 0 ? day * PER_DAY + rest : day > first ? (day - 1) * PER_DAY + (PER_DAY - 1) : null };
	}
	return { keys, next: null };
}

/** The customer's days with events, from `from` back to `first`, each with its events oldest first; a month of lists per read. */
async function* daysBackwards(deps: UsageDeps, customerId: number, from: number, first: number) {
	const key = (day: number) => `${customerId}:${dayOf(new Date(day * DAY_MS))}`;
	for (let day = from; day >= first; day -= WINDOW) {
		const days = Array.from({ length: Math.min(WINDOW, day - first + 1) }, (_, i) => day - i);
		const lists = new Map((await deps.db.lists.find({ _id: { $in: days.map(key) } }).lean()).map(doc => [doc._id, doc]));
		for (const d of days) {
			const list = lists.get(key(d));
			if (list) yield { day: d, events: await eventsOfDay(deps, list.pages) };
		}
	}
}

/** A day's events, oldest first: its pages' events in the order they were listed. */
async function eventsOfDay(deps: UsageDeps, pages: [string, number][]): Promise<string[]> {
	const ids = [...new Set(pages.map(([id]) => id))];
	const docs = new Map((await deps.db.pages.find({ _id: { $in: ids } }).lean()).map(doc => [doc._id, doc]));
	return ids.flatMap(id => docs.get(id)?.events ?? []);
}
