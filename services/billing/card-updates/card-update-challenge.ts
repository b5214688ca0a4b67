// A card update whose payment waited for the buyer's challenge (3-D Secure): continued by the card frame, or settled
// without the buyer by the recovery sweep or another write to the customer.
import { CardUpdateError, CardUpdateOutcome } from "../../../shared/contracts/billing";
import { withRetries } from "../../../shared/processor-retries";
import type { BillingDeps } from "../deps";
import type { AwaitingCardUpdate } from "../records/customer";
import { toCustomerView } from "../views";
import { awaitingBuyer, heldBy, letLockGo, owedRenewal, paymentKey, settlePayment, type UpdateResult } from "./card-update-settlement";

/**
 * A card update after the buyer's challenge on the renewal owed: settled by what the processor recorded, as the update
 * would have been. Nothing moved before the challenge's time ran out: ABANDONED, nothing changed. A repeat (a second
 * tab, a reload, the recovery sweep) finds the update settled and changes nothing again.
 */
export async function continueCardUpdate(deps: BillingDeps, input: { customerId: number; attemptId: string }): Promise<UpdateResult> {
	const customer = await deps.db.customers.findById(input.customerId).lean();
	if (!customer) return CardUpdateError.NotUpdatable;
	const awaiting = customer.awaitingCardUpdate;
	if (awaiting?.attemptId !== input.attemptId) {
		// Settled already (a second tab, the recovery sweep): the same answer again.
		const last = customer.lastCardUpdate;
		return last?.attemptId === input.attemptId
			? { outcome: last.outcome, customer: toCustomerView(customer), transaction: null }
			: CardUpdateError.NotPaused;
	}
	const key = paymentKey(customer._id, input.attemptId, awaiting.owes);
	const paid = await withRetries(() => deps.payments.afterChallenge(key));
	if (paid?.status === "AWAITING_BUYER") return awaitingBuyer(customer, paid.challengeUrl);
	const change = {
		attemptId: input.attemptId,
		card: awaiting.card,
		newLock: awaiting.newLock,
		held: heldBy(customer._id, input.attemptId),
		at: await deps.clocks.now(customer.accountId),
	};
	let result: UpdateResult = CardUpdateError.NotUpdatable;
	try {
		if (paid === null) {
			await letLockGo(deps, customer, change.newLock);
			result = { outcome: CardUpdateOutcome.Abandoned, customer: toCustomerView(customer), transaction: null };
			return result;
		}
		const owed = awaiting.owes ? await owedRenewal(deps, customer) : null;
		if (owed || !awaiting.owes) result = await settlePayment(deps, customer, change, { owed, key, paid });
		return result;
	} finally {
		// Unpaid (an approved one was written with the card): what it came to is kept for a repeat. The pause ends even
		// if the lease was lost meanwhile (a long outage), so nothing waits for it for ever.
		const lastCardUpdate = typeof result === "object" ? { attemptId: input.attemptId, outcome: result.outcome } : null;
		await deps.db.customers.updateOne(
			{ _id: customer._id, "awaitingCardUpdate.attemptId": input.attemptId },
			{ $set: { awaitingCardUpdate: null, lastCardUpdate } },
		);
		await deps.db.customers.updateOne(change.held, { $set: { renewalLease: null } });
	}
}

/**
 * An update paused for its buyer's challenge, met by another write to the customer (an unsubscribe, a second
 * update): false while the challenge is open (the buyer may still pay); once it is over, settled now, and true.
 */
export async function settleIfOver(deps: BillingDeps, customerId: number, paused: AwaitingCardUpdate): Promise<boolean> {
	if (new Date(paused.until).getTime() > deps.now().getTime()) return false;
	await settleWithoutBuyer(deps, customerId, paused).catch(() => null);
	return true;
}

/** What a paused update settled without its frame may come to and still hold its session. */
const SESSION_KEPT = [CardUpdateOutcome.Updated, CardUpdateOutcome.Recovered, CardUpdateOutcome.AwaitingBuyer];

/**
 * A paused update settled with no frame to answer (the recovery sweep, another write to the customer): unpaid, its
 * session is released as the frame's continuation would have released it, so it reads EXPIRED, never USED.
 */
export async function settleWithoutBuyer(deps: BillingDeps, customerId: number, paused: AwaitingCardUpdate): Promise<UpdateResult> {
	const settled = await continueCardUpdate(deps, { customerId, attemptId: paused.attemptId });
	if (typeof settled === "object" && !SESSION_KEPT.includes(settled.outcome))
		await deps.releaseSession({ sessionId: paused.sessionId, attemptId: paused.attemptId });
	return settled;
}
