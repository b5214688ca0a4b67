// Every billing error that reaches HTTP, and what it answers. The checkout's
// errors are not here: they travel to the checkout service as values
// (errorAsValue), which maps them to its codes.
import { domainErrors, type ErrorTable } from "../../shared/action";
import { DisputeError } from "../../shared/contracts/billing";
import { StripeEventError } from "../../shared/contracts/payments";
import { ApiErrorType } from "../../shared/errors";
import { NoticeError } from "./disputes/notices";
import type { StripeEventRefusal } from "./disputes/stripe-events";
import { PLAN_CHANGE_ERRORS, type PlanChangeError } from "./plan-changes/change-api-errors";
import { RenewalRunError } from "./renewals/renewal-runs";

export type BillingError = DisputeError | StripeEventRefusal | RenewalRunError | PlanChangeError;

/**
 * A dispute's 404, 409 or 503; a Stripe event's 400 (Stripe retries it for days, then gives up: the event cannot be
 * ours) or 503 (Stripe could not be read); a renewal run's 409s, which depend on the time now, not on the request alone.
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
	[RenewalRunError.RunTooFarAhead]: { type: ApiErrorType.Conflict, message: "at must be at most 731 days ahead" },
	[RenewalRunError.ClockTooFarAhead]: { type: ApiErrorType.Conflict, message: "advanceTo must be at most 731 days ahead" },
	[RenewalRunError.ClockBackwards]: {
		type: ApiErrorType.Conflict,
		message: "advanceTo must not be in the past: the clock only moves forward",
	},
	[RenewalRunError.NotSandbox]: { type: ApiErrorType.Conflict, message: "Only sandbox accounts have a test clock" },
	// A subscription's change (plan-changes/).
	...PLAN_CHANGE_ERRORS,
};

export const billingErrors = domainErrors(BILLING_ERRORS);
