// POST /api/unsubscribe/{customerId}: renewals stop at once, a pending hold is
// released, past transactions are left alone, and one CANCELLATION event is
// written with the change itself.
import { ownedBy } from "../../../shared/persistence";
import { settleIfOver } from "../card-updates/card-update";
import type { BillingDeps } from "../deps";
import { listedEvent } from "../outbox/outbox";
import { waitForRenewalInFlight } from "../renewals/renewal-lease";
import { CUSTOMER_TRANSITIONS, CustomerStatus, RefundStatus, TransactionType } from "../states";
import { isStalePending, releaseLock } from "./subscription-lock";

export interface UnsubscribeAnswer {
	success: boolean;
	message: string;
}

export async function unsubscribe(deps: BillingDeps, input: { accountId: number; customerId: number }): Promise<UnsubscribeAnswer> {
	const unsubscribed = { success: true, message: `Customer ${input.customerId} unsubscribed` };
	let triedToSettle: string | null = null;
	for (;;) {
		const customer = ownedBy(await deps.db.customers.findById(input.customerId).lean(), input.accountId);
		if (!customer) return { success: false, message: `Customer not found with ID: ${input.customerId}` };
		if (customer.status === CustomerStatus.Unsubscribed) {
			// A hold whose release failed last time is released on the repeat.
			if (customer.authorizationId !== null) await releaseHold(deps, customer._id, customer.authorizationId);
			return unsubscribed;
		}
		// A card update waiting for the buyer's challenge on its payment settles first: while the challenge is open the
		// buyer may still pay; once its time is over it is looked up and settled here (docs/recovery.md#card-update).
		const paused = customer.awaitingCardUpdate;
		if (paused) {
			// Settled once: a pause still there after that (it could not be settled now) is answered as in progress.
			if (triedToSettle === paused.attemptId || !(await settleIfOver(deps, customer._id, paused)))
				return { success: false, message: `Customer ${input.customerId} has a card update in progress; try again in a few minutes` };
			triedToSettle = paused.attemptId;
			continue;
		}
		const abandonedCheckout = customer.status === CustomerStatus.Pending && isStalePending(deps, customer);
		if (!abandonedCheckout && !CUSTOMER_TRANSITIONS[customer.status].includes(CustomerStatus.Unsubscribed)) {
			return { success: false, message: `Customer ${input.customerId} has a checkout in progress; try again in a few seconds` };
		}
		// Compare-and-set on the state we read; if it moved meanwhile, read again.
		const now = deps.now();
		const done = await deps.db.customers.updateOne(
			{ _id: customer._id, status: customer.status },
			{
				$set: { status: CustomerStatus.Unsubscribed, renewalActive: false, nextRenewalTimestamp: null, unsubscriptionTimestamp: now },
				$push: { outbox: await listedEvent(deps, "c", customer._id, "CANCELLATION") },
			},
		);
		if (done.modifiedCount !== 1) continue;
		// A renewal claimed before the change may still be charging: answer only once it is done.
		await waitForRenewalInFlight(deps, customer._id);
		await releaseLock(deps, customer);
		if (customer.authorizationId !== null) await releaseHold(deps, customer._id, customer.authorizationId);
		return unsubscribed;
	}
}

/** The trial's hold is released rather than captured; its transaction shows VOIDED. */
async function releaseHold(deps: BillingDeps, customerId: number, authorizationId: number): Promise<void> {
	// A hold the gateway cannot release now is never captured (the customer is unsubscribed) and lapses by itself.
	const outcome = await deps.payments.void({ idempotencyKey: `void:${customerId}:${authorizationId}`, authorizationId }).catch(() => null);
	if (outcome?.status !== "APPROVED") return;
	await deps.db.transactions.updateOne(
		{ customerId, type: TransactionType.Preauthorization, transactionId: authorizationId },
		{ $set: { refundStatus: RefundStatus.Voided } },
	);
	await deps.db.customers.updateOne({ _id: customerId, authorizationId }, { $set: { authorizationId: null } });
}
