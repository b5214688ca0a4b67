// Taking events in: each is stored, keyed by its id, before enqueue answers,
// so an accepted event survives any crash; the id key makes a repeated
// enqueue (an at-least-once sender retrying) a no-op.
import { DateTime } from "luxon";
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { insertAllOnce } from "../../shared/persistence";
import type { NotificationsDeps } from "./deps";
import { serializeEnvelope } from "./envelope";
import { addToEvents } from "./events";
import { DeliveryStatus } from "./states";

/** The event's local createdAt as an instant; never later than now, so a fast clock cannot stretch the retry window. */
function eventInstant(createdAt: string, timeZone: string, now: Date): Date {
	const parsed = DateTime.fromISO(createdAt, { zone: timeZone });
	return parsed.isValid && parsed.toMillis() < now.getTime() ? parsed.toJSDate() : now;
}

export async function enqueueEvents(deps: NotificationsDeps, events: WebhookEvent[]): Promise<{ deliveryIds: string[] }> {
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
	// A repeated enqueue (an at-least-once sender) adds nothing: not even a second place in the events API.
	const stored = new Set((await deps.db.deliveries.find({ _id: { $in: deliveries.map(d => d._id) } }, { _id: 1 }).lean()).map(d => d._id));
	const fresh = deliveries.filter(d => !stored.has(d._id));
	// Listed before they are stored: in the events API (events.ts), and for the attempts, so a node that dies before
	// the first attempt leaves them for any other to find.
	const listed = await addToEvents(deps, fresh);
	await deps.attempts.addAll(listed.map(d => ({ id: d._id, at: now })));
	await insertAllOnce(deps.db.deliveries, listed);
	return { deliveryIds: deliveries.map(d => d._id) };
}
