// POST /api/unsubscribe/{customerId}: renewals stop at once, a pending hold is
// released, past transactions are left alone, and one CANCELLATION event is
// written with the update itself.
import { ownedBy } from "../../../shared/persistence";
import { settleIfOver } from "../card-updates/card-update-challenge";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import type { EndedBy } from "../entries/subscription-state";
import { customerMayMove, customerMove, refundStatusMove } from "../lifecycle";
import { scheduledEvent } from "../outbox/outbox";
import type { AwaitingCardUpdate, CustomerDoc } from "../records/customer";
import { type Actor, byWhom, type CancellationDetails } from "../records/outbox-event";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus, RefundStatus } from "../states";
import { isStalePending, releaseLock } from "../subscription-lock";
import { finalUsageOf, settleFinalUsage } from "../usage/final-usage";
import { firstPaymentKey } from "./checkout-payments";

export interface UnsubscribeAnswer {
	success: boolean;
	message: string;
}

const answers = {
	unsubscribed: (id: number) => ({ success: true, message: `Customer ${id} unsubscribed` }),
	notFound: (id: number) => ({ success: false, message: `Customer not found with ID: ${id}` }),
	cardUpdateInProgress: (id: number) => ({
		success: false,
		message: `Customer ${id} has a card update in progress; try again in a few minutes`,
	}),
	checkoutInProgress: (id: number) => ({
		success: false,
		message: `Customer ${id} has a checkout in progress; try again in a few seconds`,
	}),
};

/**
 * `endedBy`: the merchant (the API, the dashboard), or the account's dispute protection (disputes/notices.ts), then
 * `at`: when the notice came. Without it, the account's now (account-time.ts).
 */
export async function unsubscribe(
	deps: BillingDeps,
	input: { accountId: number; customerId: number; endedBy?: EndedBy; at?: Date } & BuyersReason,
): Promise<UnsubscribeAnswer> {
	const id = input.customerId;
	let settledUpdate: string | null = null;
	for (;;) {
		const customer = ownedBy(await deps.db.customers.findById(id).lean(), input.accountId);
		if (!customer) return answers.notFound(id);
		if (customer.status === CustomerStatus.Unsubscribed) {
			// A hold whose release failed last time is released on the repeat.
			await releaseHold(deps, customer);
			return answers.unsubscribed(id);
		}
		const paused = customer.awaitingCardUpdate;
		if (paused) {
			if (!(await settlePausedUpdate(deps, customer, paused, settledUpdate))) return answers.cardUpdateInProgress(id);
			settledUpdate = paused.attemptId;
			continue;
		}
		if (!mayUnsubscribe(deps, customer)) return answers.checkoutInProgress(id);
		if (await markUnsubscribed(deps, customer, { endedBy: input.endedBy ?? "merchant", at: input.at, ...reasonOf(input) })) {
			await afterUnsubscribed(deps, customer);
			return answers.unsubscribed(id);
		}
		// Its state moved meanwhile: read again.
	}
}

/** The customer portal's cancellation at once: the buyer did it, and may say why (told in the CANCELLATION). */
export interface BuyersReason {
	by?: Actor;
	reason?: string;
	comment?: string;
}

function reasonOf({ by, reason, comment }: BuyersReason): Pick<Ending, "by" | "said"> {
	const said = reason === undefined && comment === undefined ? {} : { said: { reason: reason ?? null, comment: comment ?? null } };
	return { by, ...said };
}

/**
 * A card update waiting for the buyer's challenge on its payment settles first: while the challenge is open the buyer
 * may still pay; once its time is over it is looked up and settled here (docs/recovery.md#card-update). Settled once:
 * a pause still there after that (it could not be settled now) is answered as in progress.
 */
async function settlePausedUpdate(
	deps: BillingDeps,
	customer: CustomerDoc,
	paused: AwaitingCardUpdate,
	settledBefore: string | null,
): Promise<boolean> {
	return settledBefore !== paused.attemptId && (await settleIfOver(deps, customer._id, paused));
}

/** A PENDING customer is mid-checkout, unless its checkout died (it is stale). */
function mayUnsubscribe(deps: BillingDeps, customer: CustomerDoc): boolean {
	if (customer.status === CustomerStatus.Pending && !isStalePending(deps, customer)) return false;
	return customerMayMove(customer.status, CustomerStatus.Unsubscribed);
}

/** How a subscription ends: who ended it (the metrics' cause), when, and what its CANCELLATION tells. */
export interface Ending {
	endedBy: EndedBy;
	/** Absent: the account's now. */
	at?: Date;
	/** A renewal batch's lease on the customer (subscriptions/period-end-cancel.ts), let go in the same update. */
	lease?: string;
	/** A cancellation at the period's end: told in the event. */
	cancellation?: CancellationDetails;
	/** Why, when the buyer said (the portal's cancellation at once): told in the event as a cancellation at its time. */
	said?: Omit<CancellationDetails, "cancelAt">;
	by?: Actor;
}

/**
 * Compare-and-set from the state we read, with the CANCELLATION event that counts the churn; false if it moved
 * meanwhile (a renewal that charged it or moved it to another MID included: what it counts depends on them).
 */
export async function markUnsubscribed(deps: BillingDeps, customer: CustomerDoc, ended: Ending): Promise<boolean> {
	const move = customerMove(customer.status, CustomerStatus.Unsubscribed);
	const at = ended.at ?? (await deps.clocks.now(customer.accountId));
	const { counted, entry } = await countUpdate(deps, customer, { status: CustomerStatus.Unsubscribed }, { endedBy: ended.endedBy, at });
	const cancellation = ended.cancellation ?? (ended.said ? { cancelAt: at, ...ended.said } : undefined);
	// Its last period's usage, charged once it is ended (usage/final-usage.ts): listed first, so a crash leaves it found.
	const finalUsage = await finalUsageOf(deps, customer, ended.endedBy, at);
	if (finalUsage) await deps.renewals.add(customer._id, at);
	const told = { ...(cancellation ? { cancellation } : {}), ...byWhom(ended.by) };
	const held = ended.lease ? { "renewalLease.owner": ended.lease } : {};
	const done = await deps.db.customers.updateOne(
		{ _id: customer._id, ...move.filter, ...held, periodsBilled: customer.periodsBilled, midId: customer.midId },
		{
			$set: {
				...move.set,
				renewalActive: false,
				nextRenewalTimestamp: null,
				pause: null,
				cancellation: null,
				unsubscriptionTimestamp: at,
				counted,
				...(finalUsage ? { finalUsage } : {}),
				...(ended.lease ? { renewalLease: null } : {}),
			},
			$push: { outbox: await scheduledEvent(deps, "c", customer._id, "CANCELLATION", { ...carrying(entry), ...told }) },
		},
	);
	return done.modifiedCount === 1;
}

async function afterUnsubscribed(deps: BillingDeps, customer: CustomerDoc): Promise<void> {
	// A renewal claimed before the unsubscribe may still be charging: answer only once it is done.
	await waitForRenewalInFlight(deps, customer._id);
	await releaseLock(deps, customer);
	await releaseHold(deps, customer);
	// Charged at once; should it fail, the renewal cycle charges it from its listing.
	await settleFinalUsage(deps, customer._id).catch(() => false);
}

const VOID = refundStatusMove(RefundStatus.NotRefundable, RefundStatus.Voided);

/** The trial's hold is released rather than captured; its transaction shows VOIDED. */
export async function releaseHold(deps: BillingDeps, customer: CustomerDoc): Promise<void> {
	const { _id: customerId, authorizationId } = customer;
	if (authorizationId === null) return;
	// A hold the processor cannot release now is never captured (the customer is unsubscribed) and lapses by itself.
	const outcome = await deps.payments.void({ idempotencyKey: `void:${customerId}:${authorizationId}`, authorizationId }).catch(() => null);
	if (outcome?.status !== "APPROVED") return;
	// The hold's transaction, by its unique key (the checkout's hold), then by _id: both answered from an index.
	const key = customer.attemptId && firstPaymentKey(customer.attemptId, "PREAUTHORIZE");
	const hold = key ? await deps.db.transactions.findOne({ idempotencyKey: key }).lean() : null;
	if (hold?.customerId === customerId && hold.processorTransactionId === authorizationId)
		await deps.db.transactions.updateOne({ _id: hold._id, ...VOID.filter }, { $set: VOID.set });
	await deps.db.customers.updateOne({ _id: customerId, authorizationId }, { $set: { authorizationId: null } });
}
