// What a processor's decline means for retrying it. The reasons are the
// sandbox processor's (and the common card-network ones); a reason we do not
// know is soft unless the processor itself calls the decline hard.
import { DeclineCategory } from "./contracts/billing";
import { AUTHENTICATION_REQUIRED_REASON, type PaymentOutcome } from "./contracts/payments";

/** The card cannot be charged again as it is: retrying only adds declines (and network fees). */
const HARD = new Set([
	"expired_card",
	"lost_card",
	"stolen_card",
	"pickup_card",
	"invalid_account",
	"unknown_card",
	"card_verification_failed",
	"authorization_not_found",
]);

/** The reason of a renewal no MID could take (each inactive or at its monthly cap, mid-caps.ts): tried again later. */
export const NO_MID_REASON = "merchant_account_unavailable";

/** Refused by this MID (its acquirer or its risk rules), not by the card: another MID may be approved. */
const MERCHANT_ACCOUNT = new Set(["merchant_account_refused", "transaction_not_permitted", NO_MID_REASON]);

/** The issuer wants the buyer to authenticate (3-D Secure, docs/authentication.md): only the buyer can fix it. */
const AUTHENTICATION = new Set([AUTHENTICATION_REQUIRED_REASON]);

export function declineCategory(outcome: Pick<PaymentOutcome, "status" | "reason" | "hardDecline">): DeclineCategory | null {
	if (outcome.status !== "DECLINED") return null;
	const reason = outcome.reason ?? "";
	if (outcome.hardDecline || HARD.has(reason)) return DeclineCategory.Hard;
	if (MERCHANT_ACCOUNT.has(reason)) return DeclineCategory.MerchantAccount;
	if (AUTHENTICATION.has(reason)) return DeclineCategory.Authentication;
	return DeclineCategory.Soft;
}
