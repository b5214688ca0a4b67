// The portal's own refusals; what billing refuses (a pause in recovery, a stale quote) comes through as billing
// answers it to the merchant's API.
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum PortalError {
	/** POST /api/customer/{id}/portal-session while the account's portal is off. */
	Off = "PORTAL_OFF",
	UnknownCustomer = "PORTAL_UNKNOWN_CUSTOMER",
	ReturnUrlRefused = "PORTAL_RETURN_URL_REFUSED",
	/** Forged, expired, used already: one answer, so a guess learns nothing. */
	LinkInvalid = "PORTAL_LINK_INVALID",
	/** No session cookie, or an expired, signed-out or forged one. */
	SessionEnded = "PORTAL_SESSION_ENDED",
	CsrfMismatch = "PORTAL_CSRF",
	/** Not one of the session's buyer's subscriptions. */
	UnknownSubscription = "PORTAL_UNKNOWN_SUBSCRIPTION",
	/** The account's settings turn the action off, or the subscription's state does not offer it. */
	NotOffered = "PORTAL_NOT_OFFERED",
	ProductNotOffered = "PORTAL_PRODUCT_NOT_OFFERED",
	ReasonNotOffered = "PORTAL_REASON_NOT_OFFERED",
	OfferTaken = "PORTAL_OFFER_TAKEN",
	/** Email sign-in is off for the account (or its emails are). */
	SignInOff = "PORTAL_SIGN_IN_OFF",
}

export const PORTAL_ERRORS: ErrorTable<PortalError> = {
	[PortalError.Off]: { type: ApiErrorType.Conflict, message: "The customer portal is turned off for this account (its portal settings)" },
	[PortalError.UnknownCustomer]: { type: ApiErrorType.NotFound, message: "Customer not found" },
	[PortalError.ReturnUrlRefused]: {
		type: ApiErrorType.BadRequest,
		message: "returnUrl must be an https URL on one of the account's portal return domains",
	},
	[PortalError.LinkInvalid]: {
		type: ApiErrorType.Unauthorized,
		message: "This link is invalid, has expired or was already used. Ask the shop for a new one.",
	},
	[PortalError.SessionEnded]: {
		type: ApiErrorType.Unauthorized,
		message: "Your session has ended. Open the link again from the shop.",
	},
	[PortalError.CsrfMismatch]: { type: ApiErrorType.Forbidden, message: "This request did not come from the portal's page" },
	[PortalError.UnknownSubscription]: { type: ApiErrorType.NotFound, message: "Subscription not found" },
	[PortalError.NotOffered]: { type: ApiErrorType.Forbidden, message: "This action is not available for this subscription" },
	[PortalError.ProductNotOffered]: { type: ApiErrorType.Forbidden, message: "This plan is not offered" },
	[PortalError.ReasonNotOffered]: { type: ApiErrorType.BadRequest, message: "Choose one of the reasons offered" },
	[PortalError.SignInOff]: { type: ApiErrorType.NotFound, message: "This shop does not offer signing in by email" },
	[PortalError.OfferTaken]: { type: ApiErrorType.Conflict, message: "The offer was already taken for this subscription" },
};
