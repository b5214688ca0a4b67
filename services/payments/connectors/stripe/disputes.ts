// Stripe's disputes in our words: the one table from a Stripe dispute's status
// (https://docs.stripe.com/api/disputes/object#dispute_object-status) to ours.
// An inquiry (warning_…) reads as the dispute it may become; one closed
// without a chargeback (warning_closed) is won: no money left the merchant.
import type { DisputeStatus } from "../../../../shared/contracts/payments";

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
