// Operators send deliveries again (admin API, REPL): back to PENDING, due now,
// with a fresh retry window and backoff, whatever state they were in. An
// attempt already in flight keeps its lease and settles as usual.
import { backToPending } from "./delivery-attempt";
import { type DeliveryView, failedSoFar, toDeliveryViews } from "./delivery-views";
import type { NotificationsDeps } from "./deps";
import { NotificationsError } from "./errors";
import type { DeliveryDoc } from "./models";
import { DeliveryStatus, statesLeadingTo } from "./states";

/** PENDING/DELIVERED/DEAD -> PENDING for one event. */
export async function redeliver(deps: NotificationsDeps, input: { eventId: string }): Promise<DeliveryView | NotificationsError> {
	const doc = await deps.db.deliveries
		.findOneAndUpdate(
			{ _id: input.eventId.toLowerCase(), status: { $in: statesLeadingTo(DeliveryStatus.Pending) } },
			backToPending(deps.now()),
			{
				returnDocument: "after",
			},
		)
		.lean<DeliveryDoc>();
	if (!doc) return NotificationsError.UnknownDelivery;
	return (await toDeliveryViews(deps, [doc]))[0];
}

/** DEAD -> PENDING and failing PENDING -> PENDING (due now) for every such delivery of the account. */
export async function redeliverAccount(deps: NotificationsDeps, input: { accountId: number }): Promise<{ redelivered: number }> {
	const result = await deps.db.deliveries.updateMany(failedSoFar(input.accountId), backToPending(deps.now()));
	return { redelivered: result.matchedCount };
}
