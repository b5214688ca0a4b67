// The sessions service's contract with the other services. Types only.

/** Why a session cannot pay a checkout; the checkout turns each into its own code. */
export enum SessionCheckoutError {
	NotFound = "SESSION_NOT_FOUND",
	Expired = "SESSION_EXPIRED",
	Used = "SESSION_USED",
	DomainMismatch = "DOMAIN_MISMATCH",
}

export interface SessionsActions {
	/** The session's id (lower-case UUID); the demo page's stand-in for a merchant's server. */
	"sessions.create": { params: { accountId: number; domain: string }; result: string };
	/** The host name that may embed the session's card frame, or null for an unknown session. */
	"sessions.domain": { params: { sessionId: string }; result: { domain: string } | null };
	"sessions.checkForCheckout": {
		params: { sessionId: string; landingDomain: string };
		result: { accountId: number; domain: string } | { error: SessionCheckoutError };
	};
	/** VALID -> USED, by one checkout attempt. */
	"sessions.consume": { params: { sessionId: string; attemptId: string }; result: { sessionId: string } | { error: SessionCheckoutError } };
	/** USED -> VALID, by the attempt that consumed it, after its payment failed. */
	"sessions.release": { params: { sessionId: string; attemptId: string }; result: { released: boolean } };
}
