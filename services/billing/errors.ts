// Every billing error that reaches HTTP, and what it answers. The checkout's
// errors are not here: they travel to the checkout service as values
// (errorAsValue), which maps them to its codes.
import { domainErrors, type ErrorTable } from "../../shared/action";
import { CouponError } from "../../shared/contracts/accounts";
import { DisputeError } from "../../shared/contracts/billing";
import { AdyenNotificationError, StripeEventError } from "../../shared/contracts/payments";
import { ApiErrorType } from "../../shared/errors";
import { PLAN_CHANGE_ERRORS, type PlanChangeError } from "./changes/change-api-errors";
import { NoticeError } from "./disputes/notices";
import type { StripeEventRefusal } from "./disputes/processor-events";
import { RenewalRunError } from "./renewals/renewal-runs";
import { CustomerCouponError } from "./subscriptions/customer-coupon";
import { PauseError } from "./subscriptions/pause";
import { CancellationError } from "./subscriptions/period-end-cancel";

export type BillingError =
	| DisputeError
	| StripeEventRefusal
	| AdyenNotificationError
	| RenewalRunError
	| PauseError
	| CancellationError
	| PlanChangeError
	| CustomerCouponError
	| CouponError;

/**
 * A dispute's 404, 409 or 503; a Stripe event's 400 (Stripe retries it for days, then gives up: the event cannot be
 * ours) or 503 (Stripe could not be read); a renewal run's 409s, which depend on the time now, not on the request alone;
 * a pause's or resume's 404 and 409s (the customer's state, or a resumeAt judged against the time now), and a
 * cancellation's at the period's end.
 */
export const BILLING_ERRORS: ErrorTable<BillingError> = {
	[DisputeError.NotFound]: { type: ApiErrorType.NotFound, message: "Dispute not found" },
	[DisputeError.NotAwaitingEvidence]: {
		type: ApiErrorType.Conflict,
		message: "Evidence is taken once, while the dispute's status is NEEDS_RESPONSE",
	},
	[DisputeError.EvidenceOverdue]: { type: ApiErrorType.Conflict, message: "The dispute's evidence was due by its evidenceDueBy" },
	[DisputeError.ProcessorRefused]: { type: ApiErrorType.Conflict, message: "The processor refused the evidence" },
	[DisputeError.ProcessorUnavailable]: {
		type: ApiErrorType.ServiceUnavailable,
		message: "The processor could not be reached: nothing was submitted; try again",
	},
	[StripeEventError.NotStripeMid]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account is not on Stripe: it takes no Stripe events",
	},
	[StripeEventError.NoWebhookSecret]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account has no webhook signing secret (processor.webhookSecret): its events cannot be verified",
	},
	[StripeEventError.BadSignature]: {
		type: ApiErrorType.BadRequest,
		message:
			"The Stripe-Signature header is missing, was not made with this merchant account's webhook signing secret, or is more than 5 minutes old",
	},
	[StripeEventError.Malformed]: { type: ApiErrorType.BadRequest, message: "The body is not a Stripe event" },
	[StripeEventError.NotThisAccount]: {
		type: ApiErrorType.BadRequest,
		message: "The event names a payment this merchant account's Stripe account does not have",
	},
	[NoticeError.OtherMerchantAccount]: {
		type: ApiErrorType.BadRequest,
		message: "The event's charge was made on another merchant account",
	},
	[StripeEventError.Unavailable]: {
		type: ApiErrorType.ServiceUnavailable,
		message: "Stripe could not be reached to read the event's payment: nothing was applied; send it again",
	},
	[StripeEventError.KeyRefused]: {
		type: ApiErrorType.ServiceUnavailable,
		message:
			"Stripe refused this merchant account's key when reading the event's payment (revoked, or restricted from reading payments): nothing was applied; send it again",
	},
	[AdyenNotificationError.NotAdyenMid]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account is not on Adyen: it takes no Adyen notifications",
	},
	[AdyenNotificationError.NoHmacKey]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account has no HMAC key (processor.hmacKey): its notifications cannot be verified",
	},
	[AdyenNotificationError.BadSignature]: {
		type: ApiErrorType.BadRequest,
		message: "An item has no hmacSignature, or one this merchant account's HMAC key did not make: nothing was applied",
	},
	[AdyenNotificationError.Malformed]: { type: ApiErrorType.BadRequest, message: "The body is not an Adyen notification request" },
	[RenewalRunError.RunTooFarAhead]: { type: ApiErrorType.Conflict, message: "at must be at most 731 days ahead" },
	[RenewalRunError.ClockTooFarAhead]: { type: ApiErrorType.Conflict, message: "advanceTo must be at most 731 days ahead" },
	[RenewalRunError.ClockBackwards]: {
		type: ApiErrorType.Conflict,
		message: "advanceTo must not be before the account's now: the clock only moves forward",
	},
	[RenewalRunError.NotSandbox]: { type: ApiErrorType.Conflict, message: "Only sandbox accounts have a test clock" },
	// A customer's coupon (subscriptions/customer-coupon.ts, docs/coupons.md#errors).
	[CustomerCouponError.NotChargeable]: {
		type: ApiErrorType.Conflict,
		message: "Only an ACTIVE, PAUSED or SUSPENDED customer takes a coupon",
	},
	[CustomerCouponError.OneCoupon]: { type: ApiErrorType.BadRequest, message: "Send couponId or promotionCode: exactly one" },
	[CustomerCouponError.Busy]: {
		type: ApiErrorType.Conflict,
		message: "The customer is being renewed or changed: nothing changed; send it again",
	},
	[CouponError.NotFound]: { type: ApiErrorType.NotFound, message: "No coupon with this couponId or promotionCode in the account" },
	[CouponError.Inactive]: { type: ApiErrorType.Conflict, message: "This coupon was deactivated" },
	[CouponError.Expired]: { type: ApiErrorType.Conflict, message: "This coupon's redeemBy has passed" },
	[CouponError.UsedUp]: { type: ApiErrorType.Conflict, message: "This coupon has reached its maxRedemptions" },
	[CouponError.WrongProduct]: { type: ApiErrorType.Conflict, message: "This coupon is not for the customer's product" },
	[CouponError.WrongCurrency]: {
		type: ApiErrorType.Conflict,
		message: "This coupon's amountOff is in another currency than the customer's product",
	},
	[PauseError.NotFound]: { type: ApiErrorType.NotFound, message: "Customer not found" },
	[PauseError.NotActive]: {
		type: ApiErrorType.Conflict,
		message: "Only an ACTIVE customer can be paused; this one is PENDING, DECLINED, ABANDONED or UNSUBSCRIBED",
	},
	[PauseError.Suspended]: {
		type: ApiErrorType.Conflict,
		message: "A SUSPENDED customer has no renewals to pause; a card update reactivates it",
	},
	[PauseError.AlreadyPaused]: { type: ApiErrorType.Conflict, message: "The customer is already PAUSED" },
	[PauseError.NotPaused]: { type: ApiErrorType.Conflict, message: "The customer is not PAUSED" },
	[PauseError.NoRenewal]: { type: ApiErrorType.Conflict, message: "The customer's product does not renew: there is nothing to pause" },
	[PauseError.InRecovery]: {
		type: ApiErrorType.Conflict,
		message: "The customer's renewal was declined and is being retried; it can be paused once the renewal is paid",
	},
	[PauseError.HoldPending]: {
		type: ApiErrorType.Conflict,
		message: "The customer's trial holds an authorization that is captured when it ends; it cannot be paused before",
	},
	[PauseError.CardUpdateInProgress]: {
		type: ApiErrorType.Conflict,
		message: "The customer has a card update in progress; try again in a few minutes",
	},
	[PauseError.ChangePending]: {
		type: ApiErrorType.Conflict,
		message: "The customer has a change waiting for the period's end; cancel it (DELETE /api/customer/{id}/pending-change) before pausing",
	},
	[PauseError.CancellationScheduled]: {
		type: ApiErrorType.Conflict,
		message: "The subscription is cancelled at the period's end: undo the cancellation before pausing it",
	},
	[PauseError.Busy]: { type: ApiErrorType.Conflict, message: "The customer is being renewed; try again in a few seconds" },
	[PauseError.ResumeAtPast]: { type: ApiErrorType.Conflict, message: "resumeAt must be in the future" },
	[PauseError.ResumeAtTooFar]: { type: ApiErrorType.Conflict, message: "resumeAt must be at most 366 days ahead" },
	// A cancellation at the period's end (subscriptions/period-end-cancel.ts).
	[CancellationError.NotFound]: { type: ApiErrorType.NotFound, message: "Customer not found" },
	[CancellationError.NotRenewing]: {
		type: ApiErrorType.Conflict,
		message: "Only an ACTIVE customer whose product renews has a period's end to cancel at",
	},
	[CancellationError.Paused]: {
		type: ApiErrorType.Conflict,
		message: "The customer is PAUSED: no period runs out while paused; resume it, or unsubscribe it",
	},
	[CancellationError.InRecovery]: {
		type: ApiErrorType.Conflict,
		message: "The customer's renewal was declined and is being retried: its period is over already; unsubscribe it instead",
	},
	[CancellationError.ChangePending]: {
		type: ApiErrorType.Conflict,
		message: "The customer has a change waiting for the period's end; cancel it (DELETE /api/customer/{id}/pending-change) first",
	},
	[CancellationError.PeriodOver]: {
		type: ApiErrorType.Conflict,
		message: "The period has ended and the renewal cycle has not reached this customer yet; try again after it",
	},
	[CancellationError.CardUpdateInProgress]: {
		type: ApiErrorType.Conflict,
		message: "The customer has a card update in progress; try again in a few minutes",
	},
	[CancellationError.Busy]: {
		type: ApiErrorType.Conflict,
		message: "The customer is being renewed or changed; try again in a few seconds",
	},
	// A subscription's change (changes/).
	...PLAN_CHANGE_ERRORS,
};

export const billingErrors = domainErrors(BILLING_ERRORS);
