// The sessions service's contract with the other services. Types only.

/** Why a session cannot pay a checkout; the checkout turns each into its own code. */
export enum SessionCheckoutError {
	NotFound = "SESSION_NOT_FOUND",
	Expired = "SESSION_EXPIRED",
	Used = "SESSION_USED",
	DomainMismatch = "DOMAIN_MISMATCH",
}

/** What a session is for: a checkout, or a customer's card update (a session created with a customerId). */
export type SessionPurpose = "checkout" | "cardUpdate";

/** A coupon a merchant attached to a checkout session: by its id or by its promotion code. */
export interface SessionCoupon {
	couponId?: number;
	code?: string;
}

export interface SessionsActions {
	/** The session's id (lower-case UUID); the demo page's stand-in for a merchant's server. */
	"sessions.create": { params: { accountId: number; domain: string; customerId?: number }; result: string };
	/** The host name that may embed the session's card frame, or null for an unknown session. */
	"sessions.domain": { params: { sessionId: string }; result: { domain: string } | null };
	/** A checkout session (purpose "checkout") or a card update session (purpose "cardUpdate", bound to a customer). */
	"sessions.checkForCheckout": {
		params: { sessionId: string; landingDomain: string; purpose?: SessionPurpose };
		result:
			| { accountId: number; domain: string; customerId: number | null; coupon: SessionCoupon | null }
			| { error: SessionCheckoutError };
	};
	/** VALID -> USED, by one checkout attempt, for its customer; `expiresAt`: the end of a challenge the issuer may ask for. */
	"sessions.consume": {
		params: { sessionId: string; attemptId: string; customerId?: number };
		result: { sessionId: string; expiresAt: string } | { error: SessionCheckoutError };
	};
	/** The checkout (or card update) of the session's last payment, for its continuation after a challenge (docs/authentication.md). */
	"sessions.paymentInProgress": {
		params: { sessionId: string; landingDomain: string; purpose?: SessionPurpose };
		result: { accountId: number; attemptId: string; customerId: number } | { error: SessionCheckoutError };
	};
	/** USED -> VALID, by the attempt that consumed it, after its payment ended unpaid (declined, failed, abandoned). */
	"sessions.release": { params: { sessionId: string; attemptId: string }; result: { released: boolean } };
	/** A card update link valid for days (`<baseUrl>/update-card/#<token>`); throws ApiError 404 or 409 for a customer that cannot take one. */
	"sessions.createCardUpdateLink": {
		params: { accountId: number; customerId: number; baseUrl: string };
		result: { link: string; expiresAt: string; message: string };
	};
}
