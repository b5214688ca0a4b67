// A renewal period may be asked under several keys (each try has its own:
// renewal-batch.ts), and is paid by at most one of them. A key asked before
// is never taken for "not charged" while it may still be approved:
//   - a renewal no MID may take is declined without asking only if its own key
//     was never asked (a run whose lease ended while that charge was in flight
//     asked it): else that key's outcome stands;
//   - a retry asks under its new key only once the period's previous key (the
//     customer's lastTryKey) is known not approved: approved, the period is
//     paid by it, and nothing is charged again.
// A key still undecided throws OutcomeUnknownError: the renewal is neither
// charged nor declined, and a later run asks again (docs/reliability.md#a-period-is-charged-once).
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { NO_MID_REASON } from "../../../shared/decline-reasons";
import type { BillingDeps } from "../deps";
import { OutcomeUnknownError } from "../payments";
import type { CustomerDoc } from "../records/customer";

/** A renewal no MID may take: declined as a MID's refusal, without asking any processor. */
const noMid: PaymentOutcome = {
	status: "DECLINED",
	processorTransactionId: null,
	processorReference: null,
	reason: NO_MID_REASON,
	hardDecline: false,
};

/** What the processor did with a key asked before: its outcome, or null when it moved no money for it. */
async function askedBefore(deps: BillingDeps, key: string): Promise<PaymentOutcome | null> {
	const outcome = await deps.payments.lookup(key);
	// An operation that cannot be looked up now (its MID's processor changed): unknown, not a decline either.
	if (outcome?.status === "ERROR") throw new OutcomeUnknownError(key);
	return outcome;
}

/** The outcome of a renewal no MID may take now, under its key. */
export async function withoutMid(deps: BillingDeps, key: string): Promise<PaymentOutcome> {
	return (await askedBefore(deps, key)) ?? noMid;
}

/** The period's previous try, when the processor approved it after all: the key and outcome that pay the period. */
export async function paidEarlier(
	deps: BillingDeps,
	customer: Pick<CustomerDoc, "attempts" | "lastTryKey">,
): Promise<{ key: string; outcome: PaymentOutcome } | null> {
	if (customer.attempts === 0 || !customer.lastTryKey) return null;
	const outcome = await askedBefore(deps, customer.lastTryKey);
	return outcome?.status === "APPROVED" ? { key: customer.lastTryKey, outcome } : null;
}
