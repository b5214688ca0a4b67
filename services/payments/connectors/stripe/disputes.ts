// Stripe's disputes in our words: the one table from a Stripe dispute's status
// (https://docs.stripe.com/api/disputes/object#dispute_object-status) to ours.
// An inquiry (warning_…) reads as the dispute it may become; one closed
// without a chargeback (warning_closed) is won: no money left the merchant.
// And the one thing we send about a dispute: its evidence.
import Stripe from "stripe";
import { type DisputeStatus, EvidenceError } from "../../../../shared/contracts/payments";
import type { Connector } from "../connector";
import type { StripeClients } from "./client";

export const STRIPE_DISPUTE_STATUSES: Readonly<Record<string, DisputeStatus>> = Object.freeze({
	warning_needs_response: "NEEDS_RESPONSE",
	needs_response: "NEEDS_RESPONSE",
	warning_under_review: "UNDER_REVIEW",
	under_review: "UNDER_REVIEW",
	warning_closed: "WON",
	won: "WON",
	lost: "LOST",
});

/** Our status for Stripe's; one Stripe adds later is taken as still under review, never as decided. */
export function disputeStatusOf(status: string): DisputeStatus {
	return Object.hasOwn(STRIPE_DISPUTE_STATUSES, status) ? STRIPE_DISPUTE_STATUSES[status] : "UNDER_REVIEW";
}

/** Submitted at once (submit: true): Stripe sends the evidence to the issuer and the dispute goes under review. */
export async function submitDisputeEvidence(
	clients: StripeClients,
	op: Parameters<Connector["submitDisputeEvidence"]>[0],
): Promise<{ status: DisputeStatus } | { error: EvidenceError }> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return { error: EvidenceError.Refused };
	try {
		const dispute = await stripe.disputes.update(op.reference, { evidence: op.evidence, submit: true });
		return { status: disputeStatusOf(dispute.status) };
	} catch (err) {
		if (!(err instanceof Stripe.errors.StripeError)) throw err;
		// A closed dispute, one past its due date, or a key that may not: Stripe refused it.
		const refused = err instanceof Stripe.errors.StripeInvalidRequestError || err instanceof Stripe.errors.StripePermissionError;
		return { error: refused ? EvidenceError.Refused : EvidenceError.Unavailable };
	}
}
