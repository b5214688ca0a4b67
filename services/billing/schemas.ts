// The JSON Schemas of billing's actions' parameters (Ajv; nothing is coerced).
import { DISPUTE_EVIDENCE_FIELDS } from "../../shared/contracts/payments";
import { dateRangeParams, listParams } from "../../shared/list-page";
import { id, params, shortText } from "../../shared/schemas";
import { CHANGE_MODES } from "./changes/rules/subscription-period";
import { CustomerStatus, DisputeStatus, TransactionStatus, TransactionType } from "./states";

const environment = { enum: ["sandbox", "production"] };
const by = { enum: ["merchant", "buyer"] };
// Why a subscription ends, in the merchant's or the buyer's words (subscriptions/period-end-cancel.ts).
const reason = { type: "string", minLength: 1, maxLength: 100 };
const comment = { type: "string", maxLength: 1000 };
const attemptId = { type: "string", pattern: "^[A-Za-z0-9_-]{8,64}$" };
const cardExpiry = { type: "string", pattern: "^(0[1-9]|1[0-2])[0-9]{2}$" };
const period = params({ every: { type: "integer", minimum: 1 }, unit: { enum: ["day", "week", "month", "year"] } });

// A coupon's terms as accounts.couponFor answers them (shared/contracts/accounts.ts CouponTerms).
const couponTerms = params({
	couponId: id,
	code: { type: "string", maxLength: 40 },
	percentOff: { anyOf: [{ type: "integer", minimum: 1, maximum: 100 }, { type: "null" }] },
	amountOff: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }] },
	currency: { anyOf: [{ type: "string", pattern: "^[A-Z]{3}$" }, { type: "null" }] },
	duration: { enum: ["once", "repeating", "forever"] },
	periods: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }] },
	productIds: { anyOf: [{ type: "array", items: id }, { type: "null" }] },
});
// What a first payment charges (shared/contracts/billing.ts FirstPaymentInput["product"]).
const firstPaymentProduct = params(
	{
		billing: { enum: ["CHARGE", "PREAUTHORIZE", "SCHEDULE"] },
		amountMinor: { type: "integer", minimum: 1 },
		currency: { type: "string", pattern: "^[A-Z]{3}$" },
		currencyId: { type: "integer" },
		trialDays: { type: "integer", minimum: 0 },
		renewal: { anyOf: [period, { type: "null" }] },
		authentication: { enum: ["ALWAYS", "WHEN_REQUIRED"] },
		tax: params({ rateBps: { type: "integer", minimum: 0, maximum: 10_000 }, inclusive: { type: "boolean" } }),
	},
	["billing", "amountMinor", "currency", "currencyId", "trialDays", "renewal"],
);
// A MID cap's reservation (shared/contracts/billing.ts CapReservation).
const capReservation = params({
	midId: id,
	period: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}$" },
	key: { type: "string", minLength: 1, maxLength: 200 },
	amount: { type: "integer", minimum: 1 },
	currency: { type: "string", pattern: "^[A-Z]{3}$" },
});
const card = params({
	cardToken: { type: "string", maxLength: 100 },
	fingerprint: { type: "string", pattern: "^[0-9a-f]{64}$" },
	bin: { type: "string", pattern: "^[0-9]{6}$" },
	last4: { type: "string", pattern: "^[0-9]{4}$" },
	brand: { type: "string", maxLength: 20 },
	expiry: cardExpiry,
});

export const schemas = {
	openSubscription: params(
		{
			accountId: id,
			attemptId,
			environment,
			product: params({ id, allowMultipleSubscriptions: { type: "boolean" } }),
			buyer: params({ email: { type: "string", maxLength: 254 }, name: shortText, lastName: { type: "string", maxLength: 200 } }),
			card,
			mid: params({ id, name: shortText }),
			sessionId: { type: "string", maxLength: 36 },
			additionalData: { anyOf: [{ type: "object" }, { type: "null" }] },
			coupon: { anyOf: [couponTerms, { type: "null" }] },
			capReservation: { anyOf: [capReservation, { type: "null" }] },
		},
		["accountId", "attemptId", "environment", "product", "buyer", "card", "mid", "sessionId", "additionalData"],
	),
	abandonSubscription: params({ customerId: id }),
	cardUpdateTarget: params({ accountId: id, customerId: id }),
	updateCard: params({
		accountId: id,
		customerId: id,
		attemptId,
		card,
		mid: params({ id, name: shortText }),
		sessionId: { type: "string", maxLength: 36 },
		challengeUntil: { type: "string", format: "date-time" },
	}),
	continueCardUpdate: params({ customerId: id, attemptId }),
	continueFirstPayment: params({ customerId: id, attemptId }),
	firstPayment: params({
		customerId: id,
		environment,
		attemptId,
		challengeUntil: { type: "string", format: "date-time" },
		product: firstPaymentProduct,
	}),
	getById: params({ accountId: id, id }),
	refundTransaction: params(
		{
			accountId: id,
			transactionId: id,
			amountToRefund: { type: "string", maxLength: 40 },
			refundId: { type: "string", pattern: "^[A-Za-z0-9_:-]{8,100}$" },
		},
		["accountId", "transactionId", "refundId"],
	),
	unsubscribe: params({ accountId: id, customerId: id }),
	buyerSubscriptions: params({ accountId: id, customerId: id }),
	buyerByEmail: params({ accountId: id, email: { type: "string", minLength: 3, maxLength: 254 } }),
	// `by`: set by the customer portal's calls only (the gateway refuses it from a request).
	pauseCustomer: params({ accountId: id, id, resumeAt: { type: "string", format: "date-time" }, by }, ["accountId", "id"]),
	resumeCustomer: params({ accountId: id, id, by }, ["accountId", "id"]),
	// The customer portal's cancellation at once (the API's unsubscribe takes no reason): the spec's unsubscribe.
	cancelNow: params({ accountId: id, customerId: id, reason, comment, by }, ["accountId", "customerId"]),
	// A cancellation at the period's end; `by` is set by the portal's calls only (the gateway refuses it from a request).
	scheduleCancellation: params(
		{
			accountId: id,
			id,
			reason,
			comment,
			by,
		},
		["accountId", "id"],
	),
	undoCancellation: params({ accountId: id, id, by }, ["accountId", "id"]),
	// Exactly one of couponId and promotionCode, which the action checks (ONE_COUPON).
	attachCoupon: params({ accountId: id, id, couponId: id, promotionCode: { type: "string", pattern: "^[A-Za-z0-9_-]{3,40}$" } }, [
		"accountId",
		"id",
	]),
	// A subscription's change (changes/): at least one of productId and quantity, which the action checks.
	changeQuote: params(
		{ accountId: id, id, productId: id, quantity: { type: "integer", minimum: 1, maximum: 10_000 }, mode: { enum: CHANGE_MODES }, by },
		["accountId", "id", "mode"],
	),
	changeSubscription: params(
		{
			accountId: id,
			id,
			productId: id,
			quantity: { type: "integer", minimum: 1, maximum: 10_000 },
			mode: { enum: CHANGE_MODES },
			quoteId: { type: "string", pattern: "^q_[0-9a-f]{32}$" },
			idempotencyKey: { type: "string", minLength: 1, maxLength: 255 },
		},
		["accountId", "id", "mode"],
	),
	runRenewals: params({ at: { type: "string", format: "date-time" } }, []),
	recoverRefunds: params({}, []),
	backfillMetrics: params({ pages: { type: "integer", minimum: 1 }, pageSize: { type: "integer", minimum: 1, maximum: 1000 } }, []),
	recovery: params({ accountId: id }),
	advanceClock: params({ accountId: id, advanceTo: { type: "string", format: "date-time" } }),
	clockMoved: params({ accountId: id, at: { type: "string", format: "date-time" } }),
	clockOf: params({ accountId: id }),
	usageSubjects: params({ accountId: id, customerIds: { type: "array", minItems: 1, maxItems: 1000, items: id } }),
	listCustomers: params({ accountId: id, email: { type: "string", maxLength: 254 } }, ["accountId"]),
	listTransactions: params({ accountId: id, customerId: id }),
	customers: params(
		{
			accountId: id,
			...listParams,
			...dateRangeParams,
			// Something besides blanks: the filter is trimmed.
			email: { type: "string", minLength: 1, maxLength: 254, pattern: "\\S" },
			status: { enum: Object.values(CustomerStatus) },
			productId: id,
		},
		["accountId"],
	),
	transactions: params(
		{
			accountId: id,
			...listParams,
			...dateRangeParams,
			customerId: id,
			type: { enum: Object.values(TransactionType) },
			status: { enum: Object.values(TransactionStatus) },
		},
		["accountId"],
	),
	reserveMidCap: params({
		accountId: id,
		midId: id,
		cap: params({ amount: { type: "number", exclusiveMinimum: 0 }, currency: { type: "string", pattern: "^[A-Z]{3}$" } }),
		key: { type: "string", pattern: "^[A-Za-z0-9_-]{8,64}:charge$" },
		productId: id,
		product: firstPaymentProduct,
		coupon: { anyOf: [couponTerms, { type: "null" }] },
	}),
	releaseMidCap: capReservation,
	disputes: params({ accountId: id, ...listParams, ...dateRangeParams, status: { enum: Object.values(DisputeStatus) } }, ["accountId"]),
	// The body as Stripe sent it, and its Stripe-Signature header when there was one (the gateway's processors route).
	stripeEvent: params(
		{ midId: id, payload: { type: "string", minLength: 1, maxLength: 1_048_576 }, signature: { type: "string", maxLength: 4096 } },
		["midId", "payload"],
	),
	// The body as Adyen sent it (the gateway's processors route).
	adyenNotification: params({ midId: id, payload: { type: "string", minLength: 1, maxLength: 1_048_576 } }),
	// Text fields as Stripe names them, each at most Stripe's 20,000 characters; at least one.
	submitDisputeEvidence: params({
		accountId: id,
		id,
		evidence: {
			...params(Object.fromEntries(DISPUTE_EVIDENCE_FIELDS.map(field => [field, { type: "string", minLength: 1, maxLength: 20_000 }])), []),
			minProperties: 1,
		},
	}),
	customerTransactions: params(
		{
			accountId: id,
			id,
			...listParams,
			...dateRangeParams,
			type: { enum: Object.values(TransactionType) },
			status: { enum: Object.values(TransactionStatus) },
		},
		["accountId", "id"],
	),
};
