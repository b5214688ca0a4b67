// A connector's outcomes, built alike whatever the processor: approved under the
// processor's reference, declined for one of our reasons (shared/decline-reasons.ts
// reads them), or failed (nothing moved, or what moved is found by a lookup);
// and a first payment's authentication after the issuer's challenge.
import { type Authentication, AuthenticationOutcome } from "../../../shared/contracts/payments";
import type { ConnectorOutcome } from "./connector";

export const approved = (reference: string | null): ConnectorOutcome => ({
	status: "APPROVED",
	reference,
	reason: null,
	hardDecline: false,
});

/** Our own reasons, named as in shared/decline-reasons.ts. */
export const declinedAs = (reference: string | null, reason: string, hardDecline: boolean): ConnectorOutcome => ({
	status: "DECLINED",
	reference,
	reason,
	hardDecline,
});

export const failed = (reason: string, reference: string | null = null): ConnectorOutcome => ({
	status: "ERROR",
	reference,
	reason,
	hardDecline: false,
});

/** The MID's key is wrong, revoked or restricted: this MID will not charge until it is fixed (MERCHANT_ACCOUNT). */
export const MERCHANT_REFUSED = "merchant_account_refused";

/**
 * The buyer took the issuer's challenge and passed it, or failed it (docs/authentication.md). The protocol version and
 * the ECI are not read from the processor (Stripe reports them on the charge, Adyen in additionalData when the merchant
 * account is set to return them): null.
 */
export const CHALLENGED: Authentication = { version: null, outcome: AuthenticationOutcome.Challenged, eci: null };
export const FAILED_AUTHENTICATION: Authentication = { version: null, outcome: AuthenticationOutcome.Failed, eci: null };
