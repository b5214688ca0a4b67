// The billing service's contract with the other services: the checkout's
// steps, refunds, and the customer and transaction as the spec's tables show
// them. Types only; billing and its callers both import them.
import type { AuthenticationPolicy, BillingKind, CouponDuration, CouponTerms, Environment, ProductTax, RenewalPeriod } from "./accounts";
import type { Authentication, DisputeEvidence, DisputeStatus } from "./payments";
import type { BuyerCalls } from "./portal";
import type { UsageSubject } from "./usage";

/** The spec's Customer (section 2). */
export interface CustomerView {
	id: number;
	accountId: number;
	email: string;
	name: string;
	lastName: string;
	status: string;
	productId: number;
	subscriptionTimestamp: string;
	nextRenewalTimestamp: string | null;
	lastTimeBilled: string | null;
	unsubscriptionTimestamp: string | null;
	renewalActive: boolean;
	attempts: number;
	cardBin: string;
	cardType: string;
	cardExpiredTime: string;
	/** While PAUSED: when it was paused and when it resumes by itself (null: when the merchant resumes it); null otherwise. */
	pause: { pausedAt: string; resumeAt: string | null } | null;
	/** Seats: each charge is the product's price × quantity (docs/subscriptions.md). */
	quantity: number;
	/** The customer's credit, a decimal in the subscription's currency: spent by later charges before the card. */
	credit: number;
	/** A change waiting for the period's end (mode at_period_end), null when none. */
	pendingChange: { productId: number; quantity: number; at: string } | null;
	/** The coupon in force (docs/coupons.md), null when none. */
	coupon: CustomerCouponView | null;
	/** A cancellation scheduled for the period's end (docs/subscriptions.md): when the subscription ends; null when none. */
	cancelAt: string | null;
}

/** A customer's coupon: its discount and the charges it still discounts (null: all, `forever`). */
export interface CustomerCouponView {
	couponId: number;
	code: string;
	percentOff: number | null;
	/** A decimal in `currency`, or null for a percentage. */
	amountOff: number | null;
	currency: string | null;
	duration: CouponDuration;
	periodsLeft: number | null;
}

/** A charge's discount: the coupon and the decimal it took off the list price (before credit and tax). */
export interface DiscountView {
	couponId: number;
	code: string | null;
	amount: number;
}

/** The spec's Transaction (section 2). */
export interface TransactionView {
	id: number;
	accountId: number;
	timestamp: string;
	success: boolean;
	type: string;
	amount: number;
	productId: number;
	transactionId: number | null;
	/** The processor's own id of the operation (Stripe `pi_…`, `re_…`; the sandbox `sbx_…`); null when no processor made one. */
	processorReference: string | null;
	/** How the buyer was authenticated (3-D Secure) for a first payment; null for the others (docs/authentication.md). */
	authentication: Authentication | null;
	midId: number;
	midName: string;
	currencyId: number;
	refundStatus: string;
	status: string;
	paymentMethod: string;
	/** Why the processor declined it (e.g. `insufficient_funds`); null unless DECLINED. */
	declineReason: string | null;
	/** What a decline means for retrying it; null unless DECLINED. */
	declineCategory: DeclineCategory | null;
	/** A decimal: what the customer's credit paid of this charge besides `amount` (the card's part); 0 when none. */
	creditApplied: number;
	/** The coupon's discount on this charge (`amount` is after it); null when none. */
	discount: DiscountView | null;
}

/** A dispute, as GET /api/disputes/{id} shows it (docs/disputes.md). */
export interface DisputeView {
	id: number;
	accountId: number;
	customerId: number;
	/** The disputed transaction's `id`. */
	disputedTransactionId: number;
	/** A lost dispute's CHARGEBACK transaction's `id`; null otherwise. */
	chargebackTransactionId: number | null;
	status: DisputeStatus;
	/** The card network's reason, as the processor names it (e.g. `fraudulent`). */
	reason: string;
	/** Decimal, in `currency`. */
	amount: number;
	currency: string;
	/** Local date-time by which evidence must be submitted; null when the processor gives none. */
	evidenceDueBy: string | null;
	evidence: DisputeEvidence | null;
	evidenceSubmittedAt: string | null;
	midId: number;
	/** The processor's id of the dispute (Stripe `du_…`, the sandbox `sbxdp_…`). */
	processorReference: string;
	openedAt: string;
	updatedAt: string;
	closedAt: string | null;
}

/** Why a dispute's evidence was not taken. */
export enum DisputeError {
	NotFound = "NOT_FOUND",
	/** Evidence is taken once, while the dispute needs a response. */
	NotAwaitingEvidence = "NOT_AWAITING_EVIDENCE",
	/** Its due date has passed. */
	EvidenceOverdue = "EVIDENCE_OVERDUE",
	/** The processor refused it. */
	ProcessorRefused = "PROCESSOR_REFUSED",
	/** The processor could not be reached: nothing was submitted. */
	ProcessorUnavailable = "PROCESSOR_UNAVAILABLE",
}

/**
 * How billing treats a decline (shared/decline-reasons.ts):
 * SOFT may pass on a later day and is retried on the account's schedule;
 * HARD will not (lost, stolen, expired card) and stops retries at once;
 * MERCHANT_ACCOUNT is a refusal by that MID alone, retried on another MID of the group.
 */
/** A customer in recovery: renewals being retried after a decline, or suspended after the last. */
export interface RecoveryCustomer {
	customer: CustomerView;
	state: "RETRYING" | "SUSPENDED";
}

export interface RecoveryMonth {
	/** YYYY-MM, in the service's time zone. */
	month: string;
	entered: number;
	recovered: number;
	/** recovered ÷ entered, or null when none entered. */
	rate: number | null;
	/** Decimal amounts recovered, by currency. */
	revenueRecovered: Record<string, number>;
}

export enum DeclineCategory {
	Soft = "SOFT",
	Hard = "HARD",
	MerchantAccount = "MERCHANT_ACCOUNT",
	/** The issuer wants the buyer to authenticate (3-D Secure), which a renewal cannot: retried as a soft decline, and the merchant is told (AUTHENTICATION_REQUIRED). */
	Authentication = "AUTHENTICATION",
}

export enum OpenSubscriptionError {
	AlreadySubscribed = "ALREADY_SUBSCRIBED",
}

/** The customer was not in the state the step needs (not PENDING). */
export enum CheckoutStepError {
	WrongState = "WRONG_STATE",
}

/** How a checkout's first payment ended; ACTIVE covers a hold placed and a first charge scheduled. */
export enum FirstPaymentOutcome {
	Active = "ACTIVE",
	Declined = "DECLINED",
	ProcessorError = "PROCESSOR_ERROR",
	NoProcessor = "NO_PROCESSOR",
	/** The issuer asked the buyer for a challenge (3-D Secure): the payment waits for it (`challengeUrl`). */
	AwaitingBuyer = "AWAITING_BUYER",
	/** The buyer failed the challenge: nothing was charged. */
	AuthenticationFailed = "AUTHENTICATION_FAILED",
	/** The challenge was not finished before the session ended: nothing was charged, the customer is ABANDONED. */
	Abandoned = "ABANDONED",
}

/**
 * A MID's monthly cap reserved for one charge (docs/disputes.md#routing-weights-and-caps): taken on the MID's counter
 * for `period` before the charge, kept when the charge is made, given back otherwise. Keyed by the charge's key.
 */
export interface CapReservation {
	midId: number;
	/** The counter's month, YYYY-MM in TIME_ZONE. */
	period: string;
	/** The charge's idempotency key. */
	key: string;
	/** Minor units of `currency`. */
	amount: number;
	currency: string;
}

/** A capped MID has no room for the charge this month. */
export enum MidCapError {
	Reached = "CAP_REACHED",
}

/** A checkout's reservation on a capped MID, before its card is checked there: what its first charge will be. */
export interface CheckoutCapInput {
	/** The checkout's account: the counter's month is of its now (a sandbox's test clock). */
	accountId: number;
	midId: number;
	/** The MID's cap: a decimal in one currency. */
	cap: { amount: number; currency: string };
	/** The first charge's key, `<attemptId>:charge`. */
	key: string;
	productId: number;
	product: FirstPaymentInput["product"];
	coupon: CouponTerms | null;
}

export interface OpenSubscriptionInput {
	accountId: number;
	/** The checkout attempt: its first payment's key is `<attemptId>:charge` or `:authorize` (checkout-recovery.ts). */
	attemptId: string;
	environment: Environment;
	product: { id: number; allowMultipleSubscriptions: boolean };
	buyer: { email: string; name: string; lastName: string };
	card: { cardToken: string; fingerprint: string; bin: string; last4: string; brand: string; expiry: string };
	mid: { id: number; name: string };
	sessionId: string;
	additionalData: Record<string, unknown> | null;
	/** The coupon the checkout brings (accounts.couponFor), written on the PENDING customer before its redemption is taken. */
	coupon?: CouponTerms | null;
	/** The MID's cap reserved for the first charge (billing.reserveMidCap): the customer's settlement keeps it or gives it back. */
	capReservation?: CapReservation | null;
}

export interface FirstPaymentInput {
	customerId: number;
	environment: Environment;
	attemptId: string;
	/** Until when the buyer may take a challenge the issuer asks for: the checkout session's end. */
	challengeUntil: string;
	product: {
		billing: BillingKind;
		amountMinor: number;
		currency: string;
		currencyId: number;
		trialDays: number;
		renewal: RenewalPeriod | null;
		/** 3-D Secure at checkout; absent: WHEN_REQUIRED. */
		authentication?: AuthenticationPolicy;
		/** The tax its price carries; absent: none. Prices that exclude it charge it on top. */
		tax?: ProductTax;
	};
}

/** What a payment the buyer is present for came to (a checkout's first payment, a card update's). */
export interface PaymentStepResult<Outcome> {
	outcome: Outcome;
	customer: CustomerView;
	/** The charge or hold, when one was attempted (a set-up records none). */
	transaction: TransactionView | null;
	/** AWAITING_BUYER: where the frame shows the challenge. */
	challengeUrl?: string;
}

export type FirstPaymentResult = PaymentStepResult<FirstPaymentOutcome>;

/** Why a refund was not made. */
export enum RefundError {
	NotFound = "NOT_FOUND",
	NotRefundable = "NOT_REFUNDABLE",
	AmountTooHigh = "AMOUNT_TOO_HIGH",
	InvalidAmount = "INVALID_AMOUNT",
	ProcessorRefused = "PROCESSOR_REFUSED",
	/** Another request or the recovery is settling this refund: nothing changed; ask again shortly. */
	InProgress = "IN_PROGRESS",
}

export interface RefundInput {
	accountId: number;
	transactionId: number;
	/** As the merchant sent it; omitted means whatever is left to refund. */
	amountToRefund?: string;
	/** Names the whole operation: asking again with the same id resumes it instead of refunding twice. */
	refundId: string;
}

export interface RefundDone {
	/** Decimal, in the transaction's currency, as the API prints amounts. */
	amount: number;
	refundTransactionId: number;
}

/** Why a customer's card cannot be updated. */
export enum CardUpdateError {
	/** No such customer, or another account's. */
	UnknownCustomer = "UNKNOWN_CUSTOMER",
	/** UNSUBSCRIBED is final; a checkout that never became ACTIVE has no card to update. */
	NotUpdatable = "NOT_UPDATABLE",
	/** The new card already has this product for this email (another live subscription). */
	AlreadySubscribed = "ALREADY_SUBSCRIBED",
	/** A renewal of the customer stayed in flight; nothing was changed. */
	Busy = "BUSY",
	/** A continuation for an attempt whose update never waited for a challenge: nothing to continue. */
	NotPaused = "NOT_PAUSED",
}

/** What a card update did: the card changed (and, for a customer who owed a renewal, it was charged). */
export enum CardUpdateOutcome {
	/** The card changed; nothing was owed. */
	Updated = "UPDATED",
	/** The card changed and the renewal owed was approved on it: ACTIVE again. */
	Recovered = "RECOVERED",
	/** The renewal owed was declined on the new card: nothing changed. */
	RecoveryDeclined = "RECOVERY_DECLINED",
	/** The processor failed on the renewal owed: nothing changed. */
	RecoveryFailed = "RECOVERY_FAILED",
	/** The buyer failed the issuer's challenge on the renewal owed: nothing charged, nothing changed. */
	AuthenticationFailed = "AUTHENTICATION_FAILED",
	/** The issuer asks the buyer for a challenge on the renewal owed (`challengeUrl`); continued afterwards. */
	AwaitingBuyer = "AWAITING_BUYER",
	/** The challenge's time ran out: nothing charged, nothing changed. */
	Abandoned = "ABANDONED",
}

export type CardUpdateResult = PaymentStepResult<CardUpdateOutcome>;

/** The customer a card update session or submission is for. */
export interface CardUpdateTarget {
	customerId: number;
	productId: number;
	environment: Environment;
	email: string;
}

export interface CardUpdateInput {
	accountId: number;
	customerId: number;
	attemptId: string;
	card: OpenSubscriptionInput["card"];
	mid: { id: number; name: string };
	/** The card update session: released if the update ends unpaid without its frame (an abandoned challenge). */
	sessionId: string;
	/** The session's end: the renewal owed may wait for the buyer's challenge until then. */
	challengeUntil: string;
}

/** Its actions; the customer portal's are in portal.ts (BuyerCalls). */
export interface BillingActions extends BuyerCalls {
	"billing.openSubscription": { params: OpenSubscriptionInput; result: { customerId: number } | { error: OpenSubscriptionError } };
	"billing.abandonSubscription": { params: { customerId: number }; result: { customerId: number } | { error: CheckoutStepError } };
	"billing.firstPayment": { params: FirstPaymentInput; result: FirstPaymentResult | { error: CheckoutStepError } };
	/** A first payment after the buyer's challenge (docs/authentication.md); the same answer again for a repeat. */
	"billing.continueFirstPayment": {
		params: { customerId: number; attemptId: string };
		result: FirstPaymentResult | { error: CheckoutStepError };
	};
	"billing.refundTransaction": { params: RefundInput; result: RefundDone | { error: RefundError } };
	/** Reserves a capped MID's room for a checkout's first charge; `reservation` null when no cap applies to it. */
	"billing.reserveMidCap": { params: CheckoutCapInput; result: { reservation: CapReservation | null } | { error: MidCapError } };
	/** Gives back a reservation whose checkout ended before its customer took it. */
	"billing.releaseMidCap": { params: CapReservation; result: { released: boolean } };
	/** Whether the account's customer may get a new card, and what the card must be checked against. */
	"billing.cardUpdateTarget": { params: { accountId: number; customerId: number }; result: CardUpdateTarget | { error: CardUpdateError } };
	"billing.updateCard": {
		params: CardUpdateInput;
		result: CardUpdateResult | { error: CardUpdateError };
	};
	/** A card update after the buyer's challenge on the renewal owed; the same answer again for a repeat. */
	"billing.continueCardUpdate": {
		params: { customerId: number; attemptId: string };
		result: CardUpdateResult | { error: CardUpdateError };
	};
	/** Another billing node moved a sandbox account's test clock to `at` (ISO 8601): this node dates by it from now on. */
	"billing.clockMoved": { params: { accountId: number; at: string }; result: { heard: true } };
	/**
	 * The account's now (ISO 8601): a sandbox account's test clock once moved ahead of the real time, else the real time.
	 * A metrics node asks once per account, then hears the moves (metrics.clockMoved).
	 */
	"billing.clockOf": { params: { accountId: number }; result: { at: string } };
	/** The usage service, hearing of customers for the first time: their periods; those of another account are left out. */
	"billing.usageSubjects": { params: { accountId: number; customerIds: number[] }; result: UsageSubject[] };
}

/**
 * How far ahead of now a run, and so a sandbox's test clock, may go (billing's renewals/renewal-runs.ts): two years,
 * so a yearly product renews twice. Billing dates nothing later than that, so a metrics read never looks further.
 */
export const MAX_RUN_AHEAD_MS = 731 * 24 * 3_600_000;
