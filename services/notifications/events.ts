// The events API (docs/api.md, "Events"; docs/webhooks.md, "Catching up"):
// every event an account was sent, or was to be sent, as the webhook
// envelope, oldest first, kept at least EVENT_RETENTION_DAYS. Events are
// listed in timelines (shared/timeline.ts) before their delivery is stored:
//   e:<account>     every event of the account, in the order it was taken in
//   ec:<customer>   the customer's
// A reader going forward stops at a ref whose delivery is not stored yet,
// so catching up with `after` never passes over an event that lands late.
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, filtersKey, ListError, type Page, pageOldestFirst } from "../../shared/list-page";
import { appendAll, refsAbove, type TimelineRef } from "../../shared/timeline";
import type { NotificationsDeps } from "./deps";
import type { DeliveryDoc } from "./models";

const keys = {
	account: (accountId: number) => `e:${accountId}`,
	customer: (customerId: number) => `ec:${customerId}`,
};

/** A listed ref without its delivery this long after it was written lost its writer; the sender's retry lists the event again. */
export const IN_FLIGHT_MS = 30_000;

type NewDelivery = Pick<DeliveryDoc, "_id" | "accountId" | "customerId" | "enqueuedAt"> & Partial<DeliveryDoc>;

/** Lists new deliveries in their account's and customer's events and writes the positions on them (before they are inserted). */
export async function addToEvents<D extends NewDelivery>(deps: NotificationsDeps, deliveries: D[]): Promise<D[]> {
	const ref = (d: D): TimelineRef => [d._id, d.enqueuedAt.getTime()];
	const [positions, customerPositions] = await Promise.all([
		appendAll(
			deps.db.timelines,
			deliveries.map(d => ({ key: keys.account(d.accountId), ref: ref(d) })),
		),
		appendAll(
			deps.db.timelines,
			deliveries.map(d => ({ key: keys.customer(d.customerId), ref: ref(d) })),
		),
	]);
	return deliveries.map((d, i) => ({ ...d, position: positions[i], customerPosition: customerPositions[i] }));
}

export interface EventListQuery {
	accountId: number;
	limit?: number;
	cursor?: string;
	/** An event id or a cursor: the page starts after it. */
	after?: string;
	type?: string;
	customerId?: number;
}

const EVENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The account's events after the cursor or event, oldest first. */
export async function listEvents(deps: NotificationsDeps, query: EventListQuery): Promise<Page<WebhookEvent> | ListError> {
	const { accountId, type, customerId } = query;
	const fingerprint = filtersKey({ list: "events", type, customerId });
	if (query.cursor !== undefined && query.after !== undefined) return ListError.CursorAndAfter;
	const above = await startAfter(deps, query, fingerprint);
	if (typeof above === "string") return above;
	const key = customerId === undefined ? keys.account(accountId) : keys.customer(customerId);
	const { items, next } = await pageOldestFirst<DeliveryDoc>({
		read: (position, count) => refsAbove(deps.db.timelines, key, position ?? 0, count),
		load: async ids => new Map((await deps.db.deliveries.find({ _id: { $in: ids } }).lean()).map(d => [d._id, d])),
		keep: (d, at) => positionIn(query, d) === at.position && d.accountId === accountId && (type === undefined || d.type === type),
		limit: query.limit ?? DEFAULT_LIMIT,
		above,
		now: deps.now().getTime(),
		inFlightMs: IN_FLIGHT_MS,
	});
	return {
		data: items.map(d => JSON.parse(d.body) as WebhookEvent),
		nextCursor: next === null ? null : encodeCursor(accountId, fingerprint, next),
	};
}

/** A delivery's position in the timeline the query reads: the customer's, or the account's. */
function positionIn(query: EventListQuery, d: DeliveryDoc): number | undefined {
	return query.customerId === undefined ? d.position : d.customerPosition;
}

/** The timeline position the page starts after: the `after` event's, or the cursor's (0 for the first page). */
async function startAfter(deps: NotificationsDeps, query: EventListQuery, fingerprint: string): Promise<number | ListError> {
	const from = query.cursor ?? query.after;
	if (from === undefined) return 0;
	if (!EVENT_ID.test(from)) return decodeCursor(from, query.accountId, fingerprint);
	const event = await deps.db.deliveries.findById(from.toLowerCase()).lean();
	const position = event && event.accountId === query.accountId ? positionIn(query, event) : undefined;
	if (position === undefined || (query.customerId !== undefined && event?.customerId !== query.customerId)) return ListError.UnknownEvent;
	return position;
}

/** One event of the account, as its webhook carries it; null when it has none by this id. */
export async function getEvent(deps: NotificationsDeps, input: { accountId: number; id: string }): Promise<WebhookEvent | null> {
	const delivery = await deps.db.deliveries.findById(input.id.toLowerCase()).lean();
	return delivery && delivery.accountId === input.accountId ? (JSON.parse(delivery.body) as WebhookEvent) : null;
}
