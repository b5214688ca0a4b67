// A connector's outcomes, built alike whatever the processor: approved under the
// processor's reference, declined for one of our reasons (shared/decline-reasons.ts
// reads them), or failed (nothing moved, or what moved is found by a lookup).
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
