// Our outcomes for Adyen's answers: a payment's resultCode, and the one mapping
// of failed requests. Tested as pure functions (test/services/payments/adyen-outcomes.test.ts):
// Prism answers only the document's examples, none of them refused.
import { HttpClientException } from "@adyen/api-library";
import { AUTHENTICATION_REQUIRED_REASON, OUTCOME_UNKNOWN_REASON } from "../../../../shared/contracts/payments";
import type { ConnectorOutcome } from "../connector";
import { approved, declinedAs, failed, MERCHANT_REFUSED } from "../outcomes";
import { AdyenUnreachable } from "./client";
import { outcomeOfRefusal } from "./refusals";

export { approved, declinedAs, failed, MERCHANT_REFUSED };

const UNAVAILABLE = "processor_unavailable";

/** What a payment's answer says, in the words both ends of the mapping share. */
export interface PaymentAnswer {
	resultCode?: string;
	pspReference?: string;
	refusalReason?: string;
	refusalReasonCode?: string;
	additionalData?: Record<string, string>;
}

/** Adyen asks the buyer to act (3-D Secure, a redirect): the buyer present, the frame shows it; a renewal cannot. */
export const BUYER_ACTIONS: ReadonlySet<string> = new Set(["IdentifyShopper", "ChallengeShopper", "RedirectShopper", "PresentToShopper"]);

/**
 * A payment's outcome from its resultCode (https://docs.adyen.com/online-payments/payment-result-codes), the buyer's
 * action aside (BUYER_ACTIONS: the caller decides). Pending and Received, and any code we do not know, are not decided:
 * an ERROR keeping the pspReference, settled by the notification Adyen sends or a lookup, never by paying again.
 */
export function outcomeOfPayment(answer: PaymentAnswer): ConnectorOutcome {
	const reference = answer.pspReference ?? null;
	switch (answer.resultCode) {
		case "Authorised":
			return { ...approved(reference), networkTransactionId: answer.additionalData?.networkTxReference ?? null };
		case "Refused":
		case "Error": {
			const refusal = outcomeOfRefusal(answer.refusalReasonCode, answer.refusalReason);
			// An Error without a reason we know was Adyen's or the acquirer's fault, not the card's.
			const reason = answer.resultCode === "Error" && refusal.reason === "card_declined" ? "processing_error" : refusal.reason;
			return declinedAs(reference, reason, refusal.hardDecline);
		}
		case "Cancelled":
			return declinedAs(reference, "cancelled", false);
		default:
			if (answer.resultCode && BUYER_ACTIONS.has(answer.resultCode)) return declinedAs(reference, AUTHENTICATION_REQUIRED_REASON, false);
			return failed(OUTCOME_UNKNOWN_REASON, reference);
	}
}

/** Adyen's validation codes that name the card itself (https://docs.adyen.com/development-resources/error-codes): a hard decline. */
const CARD_ERRORS: Readonly<Record<string, string>> = Object.freeze({
	"101": "unknown_card", // Invalid card number
	"102": "unknown_card", // Unable to determine variant
	"103": "card_verification_failed", // CVC is not the right length
	"129": "invalid_expiry_month", // Expiry date invalid
	"802": "unknown_card", // Invalid card number (the old API's)
});

/**
 * What a failed request means. 401 and 403 (the MID's API key is wrong, revoked or lacks a role) decline with
 * merchant_account_refused, so billing moves to another MID; a lookup answers ERROR instead: it could not tell.
 * A validation error that names the card is a hard decline; any other 4xx was our request, refused: nothing moved.
 * 5xx, timeouts and dropped answers may have moved money: ERROR, settled by a lookup or Adyen's notification.
 */
export function outcomeOfError(err: unknown, reference: string | null, lookingUp = false): ConnectorOutcome {
	if (err instanceof AdyenUnreachable)
		return err.neverSent ? { ...failed(UNAVAILABLE, reference), neverSent: true } : failed(UNAVAILABLE, reference);
	if (!(err instanceof HttpClientException)) throw err;
	const status = err.statusCode;
	if (status === 401 || status === 403)
		return lookingUp ? failed(MERCHANT_REFUSED, reference) : declinedAs(reference, MERCHANT_REFUSED, false);
	const cardError = err.errorCode && Object.hasOwn(CARD_ERRORS, err.errorCode) ? CARD_ERRORS[err.errorCode] : undefined;
	if (status === 422 && cardError && !lookingUp) return declinedAs(reference, cardError, true);
	// Refused before it was processed: as if never sent, so the ledger need not look it up.
	if (status >= 400 && status < 500 && status !== 429)
		return { ...failed(`invalid_request_${err.errorCode ?? status}`, reference), neverSent: true };
	return failed(UNAVAILABLE, reference);
}
