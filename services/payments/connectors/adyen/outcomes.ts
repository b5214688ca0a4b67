// Our outcomes for Adyen's answers: a payment's resultCode, the issuer's page a
// first payment's buyer may be sent to, what a payment came to after it, and the
// one mapping of failed requests. Tested as pure functions
// (test/services/payments/adyen-outcomes.test.ts, adyen-challenge-outcomes.test.ts):
// Prism answers only the document's examples, none of them refused.
import { HttpClientException } from "@adyen/api-library";
import { AUTHENTICATION_REQUIRED_REASON, OUTCOME_UNKNOWN_REASON } from "../../../../shared/contracts/payments";
import type { ConnectorOutcome } from "../connector";
import { approved, CHALLENGED, declinedAs, FAILED_AUTHENTICATION, failed, MERCHANT_REFUSED } from "../outcomes";
import { AdyenUnreachable } from "./client";
import { ADYEN_REFUSALS, outcomeOfRefusal } from "./refusals";

export { approved, declinedAs, failed, MERCHANT_REFUSED };

const UNAVAILABLE = "processor_unavailable";

/** What a payment's answer says, in the words both ends of the mapping share. */
export interface PaymentAnswer {
	resultCode?: string;
	pspReference?: string;
	refusalReason?: string;
	refusalReasonCode?: string;
	additionalData?: Record<string, string>;
	/** What Adyen asks the buyer to do (a buyer action's resultCode): for a redirect, where and by which method. */
	action?: { type?: string; method?: string; url?: string } | null;
}

/**
 * Adyen asks the buyer to act (3-D Secure, a redirect). The frame shows a first payment's GET redirect (challengeUrlOf,
 * asked before this); any other, and any on a renewal or a verification, no buyer can take: declined.
 */
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

/**
 * The issuer's page a first payment's buyer is sent to: Adyen's RedirectShopper with a GET redirect to an https
 * address, which the card frame shows (docs/authentication.md). null for any other answer, and for what the frame
 * cannot show (a POST redirect, the native 3-D Secure actions, PresentToShopper): those stay declined
 * authentication_required (outcomeOfPayment).
 */
export function challengeUrlOf(answer: PaymentAnswer): string | null {
	const action = answer.action;
	if (answer.resultCode !== "RedirectShopper" || action?.type !== "redirect" || action.method !== "GET") return null;
	return typeof action.url === "string" && action.url.startsWith("https://") ? action.url : null;
}

/** Adyen's refusal 11, "3D Not Authenticated": the buyer failed the issuer's challenge. */
const NOT_AUTHENTICATED = "11";

/**
 * What a first payment came to after the buyer's challenge (/payments/details, or Adyen's AUTHORISATION notification
 * read as an answer), with its authentication: approved, CHALLENGED; refused 11 (by code, or by its text when a
 * notification gives only that), authentication_failed and FAILED; another refusal as the table says, no record; not
 * decided, an ERROR as for any payment.
 */
export function outcomeAfterChallenge(answer: PaymentAnswer): ConnectorOutcome {
	const outcome = outcomeOfPayment(answer);
	if (outcome.status === "APPROVED") return { ...outcome, authentication: CHALLENGED };
	if (outcome.status === "ERROR") return outcome;
	const text = ADYEN_REFUSALS[NOT_AUTHENTICATED].text.toLowerCase();
	const failedChallenge =
		answer.resultCode === "Refused" &&
		(answer.refusalReasonCode ? answer.refusalReasonCode === NOT_AUTHENTICATED : answer.refusalReason?.trim().toLowerCase() === text);
	return { ...outcome, authentication: failedChallenge ? FAILED_AUTHENTICATION : null };
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
