// What a subscription's change answers when it changes nothing (docs/api.md#subscription-changes): one row per
// refusal. A declined charge is answered with its reason (402): change-apply.ts returns it (ChangeDeclined) and the
// action maps it (billing.service.ts: changeAnswer).
import type { ErrorTable } from "../../../shared/action";
import { ApiErrorType } from "../../../shared/errors";

export enum PlanChangeError {
	CustomerNotFound = "CHANGE_CUSTOMER_NOT_FOUND",
	ProductNotFound = "CHANGE_PRODUCT_NOT_FOUND",
	QuoteNotFound = "QUOTE_NOT_FOUND",
	NoPendingChange = "NO_PENDING_CHANGE",
	NothingAsked = "NOTHING_ASKED",
	AmountTooLarge = "CHANGE_AMOUNT_TOO_LARGE",
	NotActive = "CHANGE_NOT_ACTIVE",
	RenewalOwed = "CHANGE_RENEWAL_OWED",
	TrialHold = "CHANGE_TRIAL_HOLD",
	OtherCurrency = "CHANGE_OTHER_CURRENCY",
	ProductInactive = "CHANGE_PRODUCT_INACTIVE",
	ProductNotRenewing = "CHANGE_PRODUCT_NOT_RENEWING",
	SamePlan = "CHANGE_SAME_PLAN",
	IntervalWithoutProration = "CHANGE_INTERVAL_WITHOUT_PRORATION",
	PeriodOver = "CHANGE_PERIOD_OVER",
	QuoteExpired = "QUOTE_EXPIRED",
	QuoteUsed = "QUOTE_USED",
	QuoteStale = "QUOTE_STALE",
	QuoteMismatch = "QUOTE_MISMATCH",
	Busy = "CHANGE_BUSY",
	CancellationScheduled = "CHANGE_CANCELLATION_SCHEDULED",
	CreditWhileSubscribed = "CREDIT_WHILE_SUBSCRIBED",
	NoCredit = "NO_CREDIT",
	NothingToRefund = "NOTHING_TO_REFUND",
}

const conflict = (message: string) => ({ type: ApiErrorType.Conflict, message });

export const PLAN_CHANGE_ERRORS: ErrorTable<PlanChangeError> = {
	[PlanChangeError.CustomerNotFound]: { type: ApiErrorType.NotFound, message: "Customer not found" },
	[PlanChangeError.ProductNotFound]: { type: ApiErrorType.NotFound, message: "Product not found" },
	[PlanChangeError.QuoteNotFound]: { type: ApiErrorType.NotFound, message: "Quote not found" },
	[PlanChangeError.NoPendingChange]: { type: ApiErrorType.NotFound, message: "This customer has no change scheduled" },
	[PlanChangeError.NothingAsked]: { type: ApiErrorType.BadRequest, message: "productId or quantity is required" },
	[PlanChangeError.AmountTooLarge]: { type: ApiErrorType.BadRequest, message: "The product's price × quantity is too large" },
	[PlanChangeError.NotActive]: conflict("Only an ACTIVE customer's subscription can change"),
	[PlanChangeError.RenewalOwed]: conflict("A renewal of this customer is being retried: it can change once the renewal is paid"),
	[PlanChangeError.TrialHold]: conflict(
		"This customer's trial holds an authorization for its product: it can change once the first charge is made",
	),
	[PlanChangeError.OtherCurrency]: conflict("The product is in another currency than the subscription"),
	[PlanChangeError.ProductInactive]: conflict("The product is not active"),
	[PlanChangeError.ProductNotRenewing]: conflict("The product does not renew (renewal is null): a subscription cannot change to it"),
	[PlanChangeError.SamePlan]: conflict("The subscription is already on this product and quantity"),
	[PlanChangeError.IntervalWithoutProration]: conflict(
		"A product of another interval starts a new period, which charges now: use now_prorated or at_period_end",
	),
	[PlanChangeError.PeriodOver]: conflict("The subscription's period has ended and its renewal is not made yet: try again after it"),
	[PlanChangeError.QuoteExpired]: conflict("The quote has expired: ask for a new one"),
	[PlanChangeError.QuoteUsed]: conflict("The quote was already used"),
	[PlanChangeError.QuoteStale]: conflict("The subscription changed or renewed since the quote: ask for a new one"),
	[PlanChangeError.QuoteMismatch]: conflict("productId, quantity and mode must be the quote's (or left out)"),
	[PlanChangeError.CancellationScheduled]: conflict(
		"The subscription is cancelled at the period's end: undo the cancellation (DELETE …/cancel-at-period-end) before changing it",
	),
	[PlanChangeError.Busy]: conflict("A renewal, card update or other change of this customer is in progress: try again in a few seconds"),
	[PlanChangeError.CreditWhileSubscribed]: conflict(
		"Credit is paid back once the customer is UNSUBSCRIBED; until then its charges spend it",
	),
	[PlanChangeError.NoCredit]: conflict("This customer has no credit"),
	[PlanChangeError.NothingToRefund]: conflict("None of this customer's charges can be refunded: its credit stays"),
};
