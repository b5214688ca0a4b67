// Taking events in: each is stored, keyed by its id, before enqueue answers,
// so an accepted event survives any crash; the id key makes a repeated
// enqueue (an at-least-once sender retrying) a no-op. Up to `claimable` of
// them are stored already claimed by this node for their first attempt (the
// lease and attempt number a claim would write), so that attempt needs no
// claim of its own; a node that dies before it leaves the lease to expire, as
// after any claim.
import { DateTime } from "luxon";
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { insertAllOnce, storedIds } from "../../shared/persistence";
import { zoneOf } from "../../shared/time";
import { deliveryLease } from "./delivery-attempt";
import type { NotificationsDeps } from "./deps";
import { serializeEnvelope } from "./envelope";
import { addToEvents } from "./events";
import type { DeliveryDoc } from "./models";
import { DeliveryStatus } from "./states";

/** The event's local createdAt as an instant; never later than now, so a fast clock cannot stretch the retry window. */
function eventInstant(createdAt: string, timeZone: string, now: Date): Date {
	const parsed = DateTime.fromISO(createdAt, { zone: zoneOf(timeZone) });
	return parsed.isValid && parsed.toMillis() < now.getTime() ? parsed.toJSDate() : now;
}

export async function enqueueEvents(
	deps: NotificationsDeps,
	events: WebhookEvent[],
	{ claimable = 0, resent = true }: { claimable?: number; resent?: boolean } = {},
): Promise<{ deliveryIds: string[]; claimed: DeliveryDoc[] }> {
	const now = deps.now();
	const deliveries = events.map(event => {
		const id = event.id.toLowerCase();
		const eventAt = eventInstant(event.createdAt, deps.settings.timeZone, now);
		return {
			_id: id,
			accountId: event.accountId,
			customerId: event.customerId,
			transactionId: event.transaction_id,
			type: event.type,
			createdAt: event.createdAt,
			eventAt,
			body: serializeEnvelope({ ...event, id }),
			status: DeliveryStatus.Pending,
			attempts: 0,
			backoffStep: 0,
			windowFrom: eventAt,
			nextAttemptAt: now,
			enqueuedAt: now,
		};
	});
	// A resent enqueue (a sweep's) adds nothing it stored before: not even a second place in the events API. Read first,
	// one command: with several billing nodes a slow enqueue is sent again by their sweeps, and a repeat that listed and
	// inserted everything again made the enqueue slower still (renewal webhooks minutes late in the benchmark). A first
	// enqueue skips the read; if it was a repeat after all (an answer lost), its second places in the events API name a
	// delivery stored at another position, which a page passes over (events.ts).
	const stored = resent
		? await storedIds(
				deps.db.deliveries,
				deliveries.map(d => d._id),
			)
		: new Set<string>();
	const fresh = deliveries.filter(d => !stored.has(d._id));
	// Listed before they are stored: in the events API (events.ts), and for the attempts, so a node that dies before
	// the first attempt leaves them for any other to find.
	const listed = await addToEvents(deps, fresh);
	await deps.attempts.addAll(listed.map(d => ({ id: d._id, at: now })));
	const toStore = listed.map((d, i) => (i < claimable ? { ...d, lease: deliveryLease(deps, now), attempts: 1 } : d));
	const all = await insertAllOnce(deps.db.deliveries, toStore);
	let claimed = toStore.slice(0, claimable) as DeliveryDoc[];
	// Another sender stored some of them first: only those stored by this call (holding its lease) are this node's.
	if (!all && claimed.length > 0) {
		const mine = await deps.db.deliveries.find({ _id: { $in: claimed.map(d => d._id) } }, { lease: 1 }).lean();
		const owners = new Map(mine.map(d => [d._id, d.lease?.owner]));
		claimed = claimed.filter(d => owners.get(d._id) === d.lease?.owner);
	}
	return { deliveryIds: deliveries.map(d => d._id), claimed };
}
