// Operators send deliveries again (admin API, REPL): back to PENDING, due now,
// with a fresh retry window and backoff, whatever state they were in. An
// attempt already in flight keeps its lease and settles as usual.
import { returnToPending } from "./delivery-attempt";
import { type DeliveryView, failedSoFar, toDeliveryViews } from "./delivery-views";
import type { NotificationsDeps } from "./deps";
import { NotificationsError } from "./errors";
import { DeliveryStatus, statesLeadingTo } from "./states";

/** PENDING/DELIVERED/DEAD/WAITING -> PENDING for one event. */
export async function redeliver(
	deps: NotificationsDeps,
	input: { eventId: string; accountId?: number },
): Promise<DeliveryView | NotificationsError> {
	const eventId = input.eventId.toLowerCase();
	// Read first: an unknown id must not leave a listing behind (the attempt schedule lists before the update).
	// With an account (the dashboard), another account's event is unknown too.
	const delivery = await deps.db.deliveries.findById(eventId, { accountId: 1 }).lean();
	if (!delivery || (input.accountId !== undefined && delivery.accountId !== input.accountId)) return NotificationsError.UnknownDelivery;
	const doc = await returnToPending(deps, eventId, statesLeadingTo(DeliveryStatus.Pending));
	if (!doc) return NotificationsError.UnknownDelivery;
	return toDeliveryViews([doc])[0];
}

/** DEAD -> PENDING and failing PENDING -> PENDING (due now) for every such delivery of the account. */
export async function redeliverAccount(deps: NotificationsDeps, input: { accountId: number }): Promise<{ redelivered: number }> {
	// An operator's action: the search is fine here; each is listed before it changes.
	const failed = await deps.db.deliveries.find(failedSoFar(input.accountId), { _id: 1 }).lean();
	let redelivered = 0;
	for (const { _id } of failed) if (await returnToPending(deps, _id, [DeliveryStatus.Dead, DeliveryStatus.Pending])) redelivered++;
	return { redelivered };
}
