// Our outcomes for Stripe's answers, and the one mapping of Stripe's errors to them.
import Stripe from "stripe";
import type { ConnectorOutcome } from "../connector";
import { approved, CHALLENGED, declinedAs, FAILED_AUTHENTICATION, failed, MERCHANT_REFUSED } from "../outcomes";
import { outcomeOfDecline } from "./decline-codes";

// Stripe reports a challenge's details on the charge (payment_method_details.card.three_d_secure), not read yet.
export { approved, CHALLENGED, declinedAs, FAILED_AUTHENTICATION, failed, MERCHANT_REFUSED };

export const declined = (reference: string | null, code: string | null | undefined): ConnectorOutcome => ({
	status: "DECLINED",
	reference,
	...outcomeOfDecline(code),
});
const UNAVAILABLE = "processor_unavailable";

/** The MID's key is wrong, revoked or restricted (401, 403). */
export const isKeyRefused = (err: Stripe.errors.StripeError): boolean =>
	err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError;

/** What a failed request means. Only Stripe's errors are answers; anything else (our store, remember) is thrown on. */
export function outcomeOfError(err: unknown, reference: string | null, lookingUp = false): ConnectorOutcome {
	if (!(err instanceof Stripe.errors.StripeError)) throw err;
	if (isKeyRefused(err)) return lookingUp ? failed(MERCHANT_REFUSED, reference) : declinedAs(reference, MERCHANT_REFUSED, false);
	if (err instanceof Stripe.errors.StripeCardError)
		return lookingUp ? failed(err.code ?? "card_error", reference) : declined(reference, err.decline_code ?? err.code);
	if (err instanceof Stripe.errors.StripeIdempotencyError) return failed("idempotency_error", reference);
	// Our request was wrong (or the object's state did not allow it): Stripe did nothing.
	if (err instanceof Stripe.errors.StripeInvalidRequestError) return failed(err.code ?? "invalid_request", reference);
	// Refused before a byte was sent: Stripe did nothing with it.
	if (neverSent(err)) return { ...failed(UNAVAILABLE, reference), neverSent: true };
	// Timed out, dropped, rate limited, 5xx: Stripe did nothing, or the remembered reference tells.
	return failed(UNAVAILABLE, reference);
}

/**
 * The connection was refused (ECONNREFUSED), so the request never reached Stripe. Not when the library retried it:
 * it sends a request again after a closed connection, which the first sending may have reached.
 */
function neverSent(err: Stripe.errors.StripeError): boolean {
	if (!(err instanceof Stripe.errors.StripeConnectionError) || err.message.includes("retried")) return false;
	const detail = err.detail as { code?: unknown } | undefined;
	return typeof detail === "object" && detail?.code === "ECONNREFUSED";
}

export const isInvalidRequest = (err: unknown) => err instanceof Stripe.errors.StripeInvalidRequestError;

/** Stripe's code for why a payment or setup failed: its decline_code, else its code. */
export function codeOf(error: { code?: string; decline_code?: string } | null | undefined): string | undefined {
	return error?.decline_code ?? error?.code;
}
