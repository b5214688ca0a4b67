// The sessions service's own errors; those the checkout sees are in shared/contracts/sessions.ts.
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum SessionsError {
	InvalidDomain = "INVALID_DOMAIN",
	/** A card update session for no customer of the account. */
	UnknownCustomer = "UNKNOWN_CUSTOMER",
	/** A card update session for a customer whose card cannot change (UNSUBSCRIBED, or never ACTIVE). */
	NotUpdatable = "NOT_UPDATABLE",
	/** A card update link that is unknown or expired. */
	UnknownLink = "UNKNOWN_LINK",
	/** A card update link opened on a host that is no session domain. */
	LinkOnInvalidHost = "LINK_ON_INVALID_HOST",
	/** A checkout session names one coupon: by couponId or by promotionCode; a card update session none. */
	CouponAndCode = "ONE_COUPON",
}

/** What the API answers for each error (docs/api.md); an invalid domain is the spec's plain-text 500, naming the domain. */
export const SESSIONS_ERRORS: ErrorTable<SessionsError> = {
	[SessionsError.InvalidDomain]: { type: ApiErrorType.InvalidSessionDomain, message: "Invalid session domain" },
	[SessionsError.UnknownCustomer]: { type: ApiErrorType.NotFound, message: "No such customer" },
	[SessionsError.NotUpdatable]: {
		type: ApiErrorType.Conflict,
		message: "This customer's card cannot be updated: it is unsubscribed or never became active",
	},
	[SessionsError.UnknownLink]: { type: ApiErrorType.NotFound, message: "This card update link is unknown or has expired" },
	[SessionsError.CouponAndCode]: {
		type: ApiErrorType.BadRequest,
		message: "Send couponId or promotionCode, not both, and neither with customerId",
	},
	[SessionsError.LinkOnInvalidHost]: { type: ApiErrorType.BadRequest, message: "This page's address cannot show a card update" },
};
