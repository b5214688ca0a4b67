// Events of an account without a webhook URL wait (WAITING) instead of being
// retried against nothing. When the account gets a URL, one node sends its
// backlog oldest first, one at a time, each with a fresh retry window; a
// delivery that fails there goes on with the usual retries. Events older than
// the waiting window (WEBHOOK_WAIT_DAYS) are not sent: they become DEAD.
// The backlog is looked up by a scan, which is fine: it happens when a URL is
// set and when a node starts, never per event.
import { attemptDelivery, deliveryLease, freshWindow } from "./delivery-attempt";
import type { NotificationsDeps } from "./deps";
import type { DeliveryDoc } from "./models";
import { DeliveryStatus, deliveryMove } from "./states";

/** WAITING -> PENDING: the account has a URL now. */
const RELEASE = deliveryMove(DeliveryStatus.Waiting, DeliveryStatus.Pending);
/** PENDING (just claimed) -> DEAD: it waited longer than the waiting window. */
const EXPIRE = deliveryMove(DeliveryStatus.Pending, DeliveryStatus.Dead);

/** WAITING -> PENDING (claimed for this attempt) for the account's oldest waiting delivery; listed first, so a node dying here leaves it found. */
async function claimOldestWaiting(deps: NotificationsDeps, accountId: number): Promise<DeliveryDoc | null> {
	const oldest = await deps.db.deliveries
		.findOne({ accountId, status: DeliveryStatus.Waiting }, { _id: 1 })
		.sort({ eventAt: 1, enqueuedAt: 1, _id: 1 })
		.lean<DeliveryDoc>();
	if (!oldest) return null;
	const now = deps.now();
	await deps.attempts.add(oldest._id, now);
	const claimed = await deps.db.deliveries
		.findOneAndUpdate(
			{ _id: oldest._id, ...RELEASE.filter },
			{
				$set: { ...RELEASE.set, ...freshWindow(now), lease: deliveryLease(deps, now) },
				$inc: { attempts: 1 },
			},
			{ returnDocument: "after" },
		)
		.lean<DeliveryDoc>();
	// Another node took it meanwhile: the next oldest is tried.
	return claimed ?? claimOldestWaiting(deps, accountId);
}

/** PENDING (just claimed) -> DEAD for an event that waited longer than the waiting window; its attempt number is given back. */
async function expire(deps: NotificationsDeps, delivery: DeliveryDoc): Promise<void> {
	await deps.db.deliveries.updateOne(
		{ _id: delivery._id, ...EXPIRE.filter, "lease.owner": delivery.lease!.owner },
		{
			$set: { ...EXPIRE.set, lease: null, lastError: `no webhook URL within ${deps.settings.waitDays} days of the event` },
			$inc: { attempts: -1 },
		},
	);
}

/** Sends the account's waiting deliveries, oldest first, one at a time. Answers how many were released. */
export async function releaseWaiting(deps: NotificationsDeps, accountId: number): Promise<{ sent: number; expired: number }> {
	const answer = { sent: 0, expired: 0 };
	const oldest = deps.now().getTime() - deps.settings.waitDays * 24 * 60 * 60 * 1000;
	for (;;) {
		const delivery = await claimOldestWaiting(deps, accountId);
		if (!delivery) return answer;
		if (delivery.eventAt.getTime() < oldest) {
			await expire(deps, delivery);
			answer.expired++;
		} else {
			// Parks it again if the URL is gone meanwhile; the next one then parks too.
			await attemptDelivery(deps, delivery);
			answer.sent++;
		}
	}
}

/** At a node's start: releases the backlog of every account that has a URL by now (a node that stopped mid-release left it). */
export async function releaseAllWaiting(deps: NotificationsDeps): Promise<void> {
	const accountIds = (await deps.db.deliveries.distinct("accountId", { status: DeliveryStatus.Waiting })) as number[];
	for (const accountId of accountIds) {
		const target = await deps.webhookTarget(accountId).catch(() => null);
		if (target?.webhookUrl) await releaseWaiting(deps, accountId);
	}
}
