// GET /api/customer/{id}/usage-events (docs/usage.md#reading-usage): a
// customer's events as they were received, newest first, a page at a time
// from its list (`ue:<customerId>`, shared/timeline.ts), read by key.
import { decodeCursor, encodeCursor, filtersKey, type ListError, type Page, pageNewestFirst } from "../../shared/list-page";
import { formatDateTime } from "../../shared/time";
import { refsBelow } from "../../shared/timeline";
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

export async function customerEvents(
	deps: UsageDeps,
	input: { accountId: number; id: number; limit?: number; cursor?: string },
): Promise<Page<UsageEventView> | UsageError | ListError> {
	if (!(await isCustomerOf(deps, input.accountId, input.id))) return UsageError.UnknownCustomer;
	const filters = filtersKey({ customer: input.id });
	const below = input.cursor === undefined ? null : decodeCursor(input.cursor, input.accountId, filters);
	if (typeof below === "string") return below;
	const key = `ue:${input.id}`;
	const shown = new Set<string>();
	const { items, next } = await pageNewestFirst<UsageEventDoc>({
		below,
		limit: input.limit ?? 20,
		read: (from, count) => refsBelow(deps.db.timelines, key, from, count),
		load: async ids => new Map((await deps.db.events.find({ _id: { $in: ids as string[] } }).lean()).map(doc => [doc._id, doc])),
		// A batch a sweep finished may have listed an event twice (batch-apply.ts): it is shown once.
		keep: doc => doc.accountId === input.accountId && !shown.has(doc._id) && Boolean(shown.add(doc._id)),
	});
	return { data: items.map(toEventView), nextCursor: next === null ? null : encodeCursor(input.accountId, filters, next) };
}
