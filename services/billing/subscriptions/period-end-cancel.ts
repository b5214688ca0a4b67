// POST and DELETE /api/customer/{id}/cancel-at-period-end
// (docs/subscriptions.md#cancel-at-the-periods-end).
//   - Scheduling keeps the customer ACTIVE until its paid period ends, at its
//     nextRenewalTimestamp: there the renewal cycle ends it instead of
//     charging it (endScheduled, from renewals/renewal-batch.ts), UNSUBSCRIBED
//     at that time with the spec's CANCELLATION.
//   - Each write is a compare-and-set made while no renewal, change or pause
//     holds the renewal lease, with its event in the same update. While one is
//     scheduled, pauses and changes are refused: one thing happens at a
//     period's end, and the date it keeps stays the one the cycle reaches.

import type { CustomerView } from "../../../shared/contracts/billing";
import { leaseFree, ownedBy } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { listExpiryWarning } from "../expiry-warnings";
import { scheduledEvent } from "../outbox/outbox";
import { type CustomerDoc, renewalOwed, type ScheduledCancellation } from "../records/customer";
import { type Actor, byWhom } from "../records/outbox-event";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus } from "../states";
import { releaseLock } from "../subscription-lock";
import { settleFinalUsage } from "../usage/final-usage";
import { toCustomerView } from "../views";
import { markUnsubscribed, releaseHold } from "./unsubscribe";

export enum CancellationError {
	NotFound = "CANCEL_CUSTOMER_NOT_FOUND",
	/** Not ACTIVE (PENDING, DECLINED, ABANDONED, SUSPENDED, UNSUBSCRIBED), or a product that does not renew. */
	NotRenewing = "CANCEL_NOT_RENEWING",
	/** PAUSED: no period runs out while paused. */
	Paused = "CANCEL_PAUSED",
	/** A renewal declined and being retried: the period is over already. */
	InRecovery = "CANCEL_IN_RECOVERY",
	/** A change waits for the period's end (changes/). */
	ChangePending = "CANCEL_CHANGE_PENDING",
	/** The period ended and the renewal cycle has not reached the customer yet. */
	PeriodOver = "CANCEL_PERIOD_OVER",
	/** A card update waits for the buyer's challenge. */
	CardUpdateInProgress = "CANCEL_CARD_UPDATE_IN_PROGRESS",
	/** Another node kept the renewal lease through every try. */
	Busy = "CANCEL_BUSY",
}

export interface CancellationInput {
	accountId: number;
	id: number;
	/** Why, from the merchant's list (the portal) or the merchant's own words; kept on the events. */
	reason?: string;
	comment?: string;
	/** The portal's calls: the buyer. Absent: the merchant (the gateway never takes it from a request). */
	by?: Actor;
}

const TRIES = 3;

/** Why this customer's end cannot be scheduled at `now`, or null. */
function scheduleRefusal(customer: CustomerDoc, now: Date): CancellationError | null {
	if (customer.status === CustomerStatus.Paused) return CancellationError.Paused;
	if (customer.status !== CustomerStatus.Active || !customer.renewalActive || !customer.nextRenewalTimestamp)
		return CancellationError.NotRenewing;
	if (renewalOwed(customer)) return CancellationError.InRecovery;
	if (customer.awaitingCardUpdate) return CancellationError.CardUpdateInProgress;
	if (customer.period?.pending) return CancellationError.ChangePending;
	return customer.nextRenewalTimestamp.getTime() <= now.getTime() ? CancellationError.PeriodOver : null;
}

/** Schedules the customer's end at its period's end; a repeat answers the customer as it is and sends nothing. */
export async function scheduleCancellation(deps: BillingDeps, input: CancellationInput): Promise<CustomerView | CancellationError> {
	for (let tries = 0; tries < TRIES; tries++) {
		const customer = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
		if (!customer) return CancellationError.NotFound;
		if (customer.cancellation && customer.status === CustomerStatus.Active) return toCustomerView(customer);
		const at = await deps.clocks.now(input.accountId);
		const refused = scheduleRefusal(customer, at);
		if (refused) return refused;
		const cancellation: ScheduledCancellation = {
			cancelAt: customer.nextRenewalTimestamp!,
			reason: input.reason ?? null,
			comment: input.comment ?? null,
			scheduledAt: at,
			by: input.by ?? "merchant",
		};
		const written = await writeUnlessMoved(deps, customer, { cancellation }, "CANCELLATION_SCHEDULED", input.by);
		if (written) return toCustomerView(written);
	}
	return CancellationError.Busy;
}

/** Drops the scheduled end while its date is ahead; with none scheduled, answers the running customer as it is. */
export async function undoCancellation(deps: BillingDeps, input: CancellationInput): Promise<CustomerView | CancellationError> {
	for (let tries = 0; tries < TRIES; tries++) {
		const customer = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
		if (!customer) return CancellationError.NotFound;
		if (!customer.cancellation) {
			const running = customer.status === CustomerStatus.Active || customer.status === CustomerStatus.Paused;
			return running ? toCustomerView(customer) : CancellationError.NotRenewing;
		}
		const at = await deps.clocks.now(input.accountId);
		if (customer.cancellation.cancelAt.getTime() <= at.getTime()) return CancellationError.PeriodOver;
		// The card's expiry warning, dropped while no renewal was to come, is listed again (before the write, as every listing).
		await listExpiryWarning(deps, customer, at);
		const written = await writeUnlessMoved(deps, customer, { cancellation: null }, "CANCELLATION_UNDONE", input.by);
		if (written) return toCustomerView(written);
	}
	return CancellationError.Busy;
}

/**
 * Writes the change and its event if the customer is still as read and no one holds its renewal lease; null after
 * waiting for one that does, or when it moved (the caller reads it again).
 */
async function writeUnlessMoved(
	deps: BillingDeps,
	customer: CustomerDoc,
	$set: { cancellation: ScheduledCancellation | null },
	type: "CANCELLATION_SCHEDULED" | "CANCELLATION_UNDONE",
	by: Actor | undefined,
): Promise<CustomerDoc | null> {
	const details = $set.cancellation ?? customer.cancellation!;
	const event = await scheduledEvent(deps, "c", customer._id, type, {
		cancellation: { cancelAt: details.cancelAt, reason: details.reason, comment: details.comment },
		...byWhom(by),
	});
	const written = await deps.db.customers
		.findOneAndUpdate(
			{
				_id: customer._id,
				status: CustomerStatus.Active,
				nextRenewalTimestamp: customer.nextRenewalTimestamp,
				periodsBilled: customer.periodsBilled,
				attempts: 0,
				"cancellation.cancelAt": customer.cancellation?.cancelAt ?? null,
				"period.pending": null,
				...leaseFree("renewalLease", deps.now()),
			},
			{ $set, $push: { outbox: event } },
			{ returnDocument: "after" },
		)
		.lean();
	// A renewal, change or pause in flight: wait for it, then judge again what it left (the listed event is dropped unwritten).
	if (!written) await waitForRenewalInFlight(deps, customer._id);
	return written;
}

/**
 * The claimed customers whose period ended with a cancellation scheduled: each UNSUBSCRIBED at its cancelAt, with its
 * CANCELLATION, the batch's lease let go in the same update, and its checkout's lock and a trial's hold released.
 * Answers those ended (their events to relay).
 */
export async function endScheduled(deps: BillingDeps, customers: CustomerDoc[], owner: string): Promise<number[]> {
	const ended: number[] = [];
	for (const customer of customers) {
		const { cancelAt, reason, comment, by } = customer.cancellation!;
		const done = await markUnsubscribed(deps, customer, {
			endedBy: "merchant",
			at: cancelAt,
			lease: owner,
			cancellation: { cancelAt, reason, comment },
			by,
		});
		if (!done) continue;
		await releaseLock(deps, customer);
		await releaseHold(deps, customer);
		await settleFinalUsage(deps, customer._id).catch(() => false);
		ended.push(customer._id);
	}
	return ended;
}
