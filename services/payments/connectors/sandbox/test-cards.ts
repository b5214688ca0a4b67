// The sandbox's documented test cards (docs/api.md#test-cards): what each one
// does. Any other valid card approves everything.

export interface TestCard {
	verify?: string;
	/** Declines charges and holds, by the buyer or the merchant. */
	charge?: string;
	/** Declines the merchant's charges (renewals) with this reason; the buyer's are approved. */
	merchantCharge?: string;
	/** Declines this many of the merchant's charges (insufficient_funds), then approves. */
	merchantDeclinesFirst?: number;
	/** The merchant's charges on the MID that verified the card are refused by that MID; other MIDs approve them. */
	refusedByFirstMid?: boolean;
	error?: boolean;
	refund?: string;
	/**
	 * 3-D Secure at the first payment (docs/authentication.md); any other card: not required. The merchant's charges of
	 * such a card are refused `authentication_required` unless they refer to its first payment's network id.
	 */
	threeDS?: "frictionless" | "challenge" | "notEnrolled" | "unavailable";
	/** Its approved charges are disputed for this reason, and the dispute decided so (connectors/sandbox/disputes.ts). */
	dispute?: { reason: string; outcome: "WON" | "LOST" | "WON_WITH_EVIDENCE" };
	/** Its approved charges get an early fraud warning of this fraud type. */
	earlyFraudWarning?: string;
}

export const TEST_CARDS: Record<string, TestCard> = {
	"4000000000000002": { verify: "card_verification_failed" },
	"4000000000009995": { charge: "insufficient_funds" },
	"4000000000000341": { merchantCharge: "card_declined" },
	"4000000000001018": { merchantCharge: "insufficient_funds" },
	"4000000000001026": { merchantCharge: "do_not_honor" },
	"4000000000001034": { merchantCharge: "lost_card" },
	"4000000000001042": { merchantCharge: "stolen_card" },
	"4000000000001059": { merchantCharge: "expired_card" },
	"4000000000001067": { refusedByFirstMid: true },
	"4000000000001075": { merchantDeclinesFirst: 2 },
	"4000000000000119": { error: true },
	"4000000000005126": { refund: "refund_declined" },
	"4000000000003055": { threeDS: "frictionless" },
	"4000000000003220": { threeDS: "challenge" },
	"4000000000003238": { threeDS: "notEnrolled" },
	"4000000000003246": { threeDS: "unavailable" },
	// Authenticated without a challenge at checkout; its renewals are refused for want of authentication.
	"4000000000003253": { threeDS: "frictionless", merchantCharge: "authentication_required" },
	// Disputes and fraud warnings, days after each approved charge (docs/disputes.md#test-cards).
	"4000000000002602": { dispute: { reason: "fraudulent", outcome: "LOST" } },
	"4000000000002610": { dispute: { reason: "product_not_received", outcome: "WON_WITH_EVIDENCE" } },
	"4000000000002628": { dispute: { reason: "duplicate", outcome: "WON" } },
	"4000000000002636": { earlyFraudWarning: "made_with_stolen_card" },
};

/** Declines a card network calls final: the sandbox flags them hard, as a real processor does. */
export const HARD_REASONS = new Set(["lost_card", "stolen_card", "expired_card", "unknown_card", "card_verification_failed"]);
