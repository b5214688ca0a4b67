// What an Adyen refusal means to us: the one table from Adyen's refusal reasons
// (https://docs.adyen.com/development-resources/refusal-reasons, by the
// `refusalReasonCode` of a refused payment, else its `refusalReason` text) to
// our reason names and whether the decline is hard, as the Stripe connector's
// decline-codes.ts does for Stripe. Where Stripe's table already has a name
// for the same thing, Adyen's reason gets that name, so declines read alike
// whatever the processor; billing decides retries by them
// (shared/decline-reasons.ts).
import { AUTHENTICATION_FAILED_REASON, AUTHENTICATION_REQUIRED_REASON } from "../../../../shared/contracts/payments";

export interface AdyenRefusal {
	/** Adyen's reason text, as `refusalReason` names it. */
	text: string;
	/** Our reason for the decline. */
	reason: string;
	/** Retrying the card as it is cannot succeed. */
	hard: boolean;
}

const soft = (text: string, reason: string): AdyenRefusal => ({ text, reason, hard: false });
const hard = (text: string, reason: string): AdyenRefusal => ({ text, reason, hard: true });

/** Adyen's refusalReasonCode → our reason and hardness. A code missing here is a soft card_declined. */
export const ADYEN_REFUSALS: Readonly<Record<string, AdyenRefusal>> = Object.freeze({
	// The issuer may approve a later attempt.
	"2": soft("Refused", "card_declined"),
	"3": soft("Referral", "call_issuer"),
	"4": soft("Acquirer Error", "processing_error"),
	"7": soft("Invalid Amount", "invalid_amount"),
	"9": soft("Issuer Unavailable", "issuer_not_available"),
	"12": soft("Not enough balance", "insufficient_funds"),
	"15": soft("Cancelled", "cancelled"),
	"16": soft("Shopper Cancelled", "cancelled"),
	"21": soft("Not Submitted", "processing_error"),
	"27": soft("Declined Non Generic", "card_declined"),
	"28": soft("Withdrawal amount exceeded", "card_velocity_exceeded"),
	"29": soft("Withdrawal count exceeded", "withdrawal_count_limit_exceeded"),
	// Card-present faults (a terminal's): the same card may pass online.
	"40": soft("Current AID is in Penalty Box", "processing_error"),
	"41": soft("CVM Required Restart Payment", "processing_error"),
	"44": soft("Try another interface", "processing_error"),
	"45": soft("Chip downgrade mode", "processing_error"),
	// 3-D Secure: only the buyer can fix it, when present.
	"11": soft("3D Not Authenticated", AUTHENTICATION_FAILED_REASON),
	"38": soft("Authentication required", AUTHENTICATION_REQUIRED_REASON),
	"39": soft("RReq not received from DS", AUTHENTICATION_FAILED_REASON),
	"42": soft("3DS Authentication Error", AUTHENTICATION_FAILED_REASON),
	// The issuer allows the card, but not this kind of payment here: another MID may be allowed.
	"10": soft("Not supported", "transaction_not_permitted"),
	"23": soft("Transaction Not Permitted", "transaction_not_permitted"),
	// The card as we hold it is wrong or gone.
	"5": hard("Blocked Card", "restricted_card"),
	"6": hard("Expired Card", "expired_card"),
	"8": hard("Invalid Card Number", "unknown_card"),
	"24": hard("CVC Declined", "card_verification_failed"),
	"25": hard("Restricted Card", "restricted_card"),
	"32": hard("AVS Declined", "card_verification_failed"),
	"34": hard("No checking account available on Card", "invalid_account"),
	"35": hard("No savings account available on Card", "invalid_account"),
	// A PIN is for card readers: a card that wants one is never charged without the buyer's card in hand.
	"17": hard("Invalid Pin", "invalid_pin"),
	"18": hard("Pin tries exceeded", "pin_try_exceeded"),
	"19": hard("Pin validation not possible", "offline_pin_required"),
	"33": hard("Card requires online pin", "online_or_offline_pin_required"),
	"36": hard("Mobile pin required", "online_or_offline_pin_required"),
	"37": hard("Contactless fallback", "online_or_offline_pin_required"),
	"43": hard("Online PIN required", "online_or_offline_pin_required"),
	// Fraud, the issuer's revocation, and Adyen's own stop: the networks forbid retrying these, and a
	// block by this MID's risk rules is not routed around through another MID.
	"14": hard("Acquirer Fraud", "fraudulent"),
	"20": hard("FRAUD", "fraudulent"),
	"22": hard("FRAUD-CANCELLED", "fraudulent"),
	"31": hard("Issuer Suspected Fraud", "fraudulent"),
	"26": hard("Revocation Of Auth", "revocation_of_authorization"),
	"46": hard("Transaction blocked by Adyen to prevent excessive retry fees", "do_not_try_again"),
});

const BY_TEXT: ReadonlyMap<string, AdyenRefusal> = new Map(Object.values(ADYEN_REFUSALS).map(r => [r.text.toLowerCase(), r]));

/** Our reason and hardness for a refusal: by Adyen's code, else its text; neither known is a soft card_declined. */
export function outcomeOfRefusal(
	code: string | null | undefined,
	text: string | null | undefined,
): { reason: string; hardDecline: boolean } {
	// hasOwn: a code such as "constructor" is not a refusal of ours.
	const known =
		(code && Object.hasOwn(ADYEN_REFUSALS, code) ? ADYEN_REFUSALS[code] : undefined) ??
		(text ? BY_TEXT.get(text.trim().toLowerCase()) : undefined);
	return known ? { reason: known.reason, hardDecline: known.hard } : { reason: "card_declined", hardDecline: false };
}
