// The JSON Schemas of the accounts service's actions' parameters (Ajv; nothing is coerced).

import { RETRY_DAYS_LIMITS } from "../../shared/config";
import {
	AUTHENTICATION_POLICIES,
	BILLING_KINDS,
	BLOCK_REASONS,
	CANCELLATION_REASONS,
	CARD_TYPES,
	COUPON_DURATIONS,
	EMAIL_LANGUAGES,
	ENVIRONMENTS,
	INVOICE_LANGUAGES,
	PERIOD_UNITS,
	PORTAL_CANCEL_MODES,
	PORTAL_LANGUAGES,
} from "../../shared/contracts/accounts";
import { CURRENCY_CODES, MAX_AMOUNT } from "../../shared/money";
import { id, params, shortText } from "../../shared/schemas";
import { PRICE_MODELS } from "../../shared/usage-pricing";

const environment = { enum: ENVIRONMENTS };
// http(s) with a host: "http://" alone is a URI, but not one a webhook can be sent to.
const webhookUrl = {
	anyOf: [
		{ type: "string", format: "uri", pattern: "^https?://([^\\s/?#@]+@)?[A-Za-z0-9\\[][^\\s/?#@]*([/?#]\\S*)?$", maxLength: 2000 },
		{ type: "null" },
	],
	errorMessage: "must be an http or https URL with a host (2,000 characters at most), or null to remove it",
};
// Distinct days, in any order (they are kept sorted); empty: no retries, a declined renewal suspends at once.
const renewalRetryDays = {
	type: "array",
	items: { type: "integer", minimum: RETRY_DAYS_LIMITS.min, maximum: RETRY_DAYS_LIMITS.max },
	maxItems: RETRY_DAYS_LIMITS.count,
	uniqueItems: true,
};
const bin = { type: "string", pattern: "^([0-9]{6}|[0-9]{8})$" };
// Any of the four, the others keep their value (or default); at least one on a change.
const disputeProtection = params(
	{
		unsubscribe: { type: "boolean" },
		blockCard: { type: "boolean" },
		blockEmail: { type: "boolean" },
		refundEarlyFraudWarnings: { type: "boolean" },
	},
	[],
);
// Any of them, the others keep their value (or default); at least one on a change. A null address or name: the service's.
const emailAddress = { type: "string", format: "email", maxLength: 254 };
const orNull = (schema: object) => ({ anyOf: [schema, { type: "null" }] });
const emails = params(
	{
		enabled: { type: "boolean" },
		from: orNull(emailAddress),
		// No line breaks: a display name goes into the From header.
		fromName: orNull({ ...shortText, pattern: "^[^\\r\\n]*$" }),
		replyTo: orNull(emailAddress),
		language: { enum: EMAIL_LANGUAGES },
		brandColor: orNull({ type: "string", pattern: "^#[0-9a-fA-F]{6}$" }),
	},
	[],
);
// The customer portal's settings (docs/portal.md#settings): any of them, the others keep their value.
const hostName = {
	type: "string",
	minLength: 1,
	maxLength: 253,
	pattern: "^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$",
};
const portal = params(
	{
		enabled: { type: "boolean" },
		changePlan: { type: "boolean" },
		products: { type: "array", items: id, maxItems: 100, uniqueItems: true },
		pause: { type: "boolean" },
		updateCard: { type: "boolean" },
		cancel: { enum: PORTAL_CANCEL_MODES },
		cancellationReasons: { type: "array", items: { enum: CANCELLATION_REASONS }, minItems: 1, uniqueItems: true },
		retentionCouponId: orNull(id),
		returnDomains: { type: "array", items: hostName, maxItems: 20, uniqueItems: true },
		language: { enum: PORTAL_LANGUAGES },
		emailSignIn: { type: "boolean" },
	},
	[],
);
// Basis points: 0 to 100 %.
const taxRateBps = { type: "integer", minimum: 0, maximum: 10_000 };
const nullableText = (maxLength: number) => ({ anyOf: [{ type: "string", minLength: 1, maxLength }, { type: "null" }] });
const numberPrefix = { type: "string", pattern: "^[A-Za-z0-9]{1,12}$", errorMessage: "must be 1 to 12 letters or digits" };
// Any of them, the others keep their value (or default); at least one on a change (docs/invoices.md#settings).
const invoicing = params(
	{
		legalName: nullableText(200),
		address: nullableText(500),
		taxId: nullableText(50),
		email: orNull(emailAddress),
		invoicePrefix: numberPrefix,
		creditNotePrefix: numberPrefix,
		language: { enum: INVOICE_LANGUAGES },
		taxRateBps,
		pricesIncludeTax: { type: "boolean" },
	},
	[],
);
// As the checkout takes it: billing blocks a customer's email, which a checkout took.
const email = { type: "string", format: "email", maxLength: 254 };
// An operator's: no run of 13 digits or more (a card number typed in) is stored as a blocked email.
const typedEmail = { ...email, not: { pattern: "[0-9]([ -]?[0-9]){12}" }, errorMessage: { not: "must not hold a card number" } };
const nullableId = { anyOf: [id, { type: "null" }] };
// The checkout's keyed hash of a card number (HMAC-SHA256): never the number.
const fingerprint = { type: "string", pattern: "^[0-9a-f]{64}$" };
const renewal = {
	anyOf: [params({ every: { type: "integer", minimum: 1, maximum: 366 }, unit: { enum: PERIOD_UNITS } }), { type: "null" }],
};
// docs/usage.md#prices: unit amounts are decimal strings of minor units (Stripe's unit_amount_decimal), the rest integers.
const unitAmount = { type: "string", pattern: "^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,12})?$", maxLength: 25 };
const minor = { type: "integer", minimum: 0, maximum: 1_000_000_000_000 };
const usageTier = params(
	{
		upTo: { anyOf: [{ type: "integer", minimum: 1, maximum: 1_000_000_000_000 }, { type: "null" }] },
		unitAmount,
		flatAmount: { ...minor, default: 0 },
	},
	["upTo", "unitAmount"],
);
const usagePrice = params(
	{
		meter: { type: "string", pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" },
		model: { enum: PRICE_MODELS },
		unitAmount,
		packageSize: { type: "integer", minimum: 1, maximum: 1_000_000_000 },
		tiers: { type: "array", minItems: 1, maxItems: 20, items: usageTier },
		minimumAmount: minor,
	},
	["meter", "model"],
);
const productFields = {
	name: shortText,
	amount: { type: "number", exclusiveMinimum: 0, maximum: MAX_AMOUNT },
	currency: { enum: CURRENCY_CODES, errorMessage: "must be an active ISO 4217 code in upper case, such as EUR" },
	billing: { enum: BILLING_KINDS },
	trialDays: { type: "integer", minimum: 0, maximum: 365 },
	renewal,
	allowMultipleSubscriptions: { type: "boolean" },
	authentication: { enum: AUTHENTICATION_POLICIES },
	merchantAccountGroup: shortText,
	active: { type: "boolean" },
	taxRateBps: { anyOf: [taxRateBps, { type: "null" }] },
	usagePrices: { type: "array", maxItems: 20, items: usagePrice },
};

const weight = { type: "integer", minimum: 0, maximum: 1000 };
const monthlyCap = {
	anyOf: [
		params({
			amount: { type: "number", exclusiveMinimum: 0, maximum: MAX_AMOUNT },
			currency: { enum: CURRENCY_CODES, errorMessage: "must be an active ISO 4217 code in upper case, such as EUR" },
		}),
		{ type: "null" },
	],
};

/** A processor with its key (and webhook secret) sealed to payments by the gateway, beside `fields` of its own. */
function sealedKeys(fields: Record<string, object>, last4: string, required: string[]) {
	return {
		...params(
			{
				...fields,
				sealedSecretKey: { type: "string", maxLength: 4096 },
				keyMode: { enum: ["test", "live"] },
				secretKeyLast4: { type: "string", pattern: last4 },
				sealedWebhookSecret: { type: "string", maxLength: 4096 },
				webhookSecretLast4: { type: "string", pattern: last4 },
			},
			["type", "sealedSecretKey", "keyMode", "secretKeyLast4", ...required],
		),
		// The webhook secret comes with its last 4 characters, or not at all.
		dependencies: { sealedWebhookSecret: ["webhookSecretLast4"], webhookSecretLast4: ["sealedWebhookSecret"] },
	};
}

/**
 * A MID's processor as the gateway service hands it over (the Stripe key and webhook secret already sealed to payments:
 * processor-keys.ts); null: none.
 */
const processorInput = {
	anyOf: [
		params({ type: { const: "sandbox" } }),
		sealedKeys({ type: { const: "stripe" } }, "^[A-Za-z0-9]{4}$", []),
		sealedKeys(
			{
				type: { const: "adyen" },
				// Adyen's merchant account names: letters, digits, and _ . - (its Customer Area allows no others).
				merchantAccount: { type: "string", pattern: "^[A-Za-z0-9_.-]{1,80}$" },
				// The live endpoints' prefix, as Adyen's Customer Area shows it (API URLs and response), e.g. 1797a841fbb37ca7-AdyenDemo.
				liveUrlPrefix: { type: "string", pattern: "^[A-Za-z0-9]{1,64}-[A-Za-z0-9]{1,64}$" },
			},
			"^[!-~]{4}$",
			["merchantAccount"],
		),
		{ type: "null" },
	],
};

// Promotion codes: letters, digits, - and _ (matched without regard to case).
// No run of 13 digits (a card number typed in) is stored as a code.
const couponCode = {
	type: "string",
	pattern: "^[A-Za-z0-9_-]{3,40}$",
	not: { pattern: "[0-9]([ -]?[0-9]){12}" },
	errorMessage: { not: "must not hold a card number" },
};
const couponRef = { accountId: id, couponId: id, code: couponCode };

export const schemas = {
	create: params(
		{
			name: shortText,
			environment,
			webhookUrl,
			renewalRetryDays,
			disputeProtection,
			emails,
			invoicing,
			portal: { ...portal, minProperties: 1 },
		},
		["name", "environment"],
	),
	update: params(
		{
			accountId: id,
			webhookUrl,
			environment,
			renewalRetryDays: { anyOf: [renewalRetryDays, { type: "null" }] },
			disputeProtection: { ...disputeProtection, minProperties: 1 },
			emails: { ...emails, minProperties: 1 },
			invoicing: { ...invoicing, minProperties: 1 },
			portal: { ...portal, minProperties: 1 },
		},
		["accountId"],
	),
	get: params({ accountId: id }),
	updatePortalSettings: { ...portal, properties: { ...portal.properties, accountId: id }, required: ["accountId"] } as const,
	updateEmailSettings: { ...emails, properties: { ...emails.properties, accountId: id }, required: ["accountId"] } as const,
	rotateToken: params({ accountId: id, graceSeconds: { type: "integer", minimum: 0, maximum: 30 * 24 * 3600 } }, ["accountId"]),
	authenticate: params({ tokenHash: { type: "string", pattern: "^[0-9a-f]{64}$" } }),
	createMerchantAccount: params(
		{
			accountId: id,
			name: shortText,
			group: shortText,
			cardTypes: { type: "array", items: { enum: CARD_TYPES }, minItems: 1, maxItems: CARD_TYPES.length },
			active: { type: "boolean", default: true },
			processor: processorInput,
			weight: { ...weight, default: 1 },
			monthlyCap: { ...monthlyCap, default: null },
		},
		["accountId", "name", "group", "cardTypes"],
	),
	updateMerchantAccount: params(
		{
			accountId: id,
			id,
			name: shortText,
			cardTypes: { type: "array", items: { enum: CARD_TYPES }, minItems: 1, maxItems: CARD_TYPES.length },
			active: { type: "boolean" },
			processor: processorInput,
			weight,
			monthlyCap,
		},
		["accountId", "id"],
	),
	listMerchantAccounts: params({ accountId: id, group: shortText }, ["accountId"]),
	merchantAccountProcessor: params({ midId: id }),
	createProduct: params(
		{
			accountId: id,
			...productFields,
			renewal: { ...renewal, default: null },
			allowMultipleSubscriptions: { type: "boolean", default: false },
			authentication: { enum: AUTHENTICATION_POLICIES, default: "WHEN_REQUIRED" },
			active: { type: "boolean", default: true },
		},
		["accountId", "name", "amount", "currency", "billing", "merchantAccountGroup"],
	),
	updateProduct: params({ accountId: id, productId: id, ...productFields }, ["accountId", "productId"]),
	getProduct: params({ accountId: id, productId: id }),
	renewalTerms: params({ accountId: id, productId: id }),
	listProducts: params({ accountId: id }),
	listBlacklistedBins: params({ accountId: id }),
	bin: params({ accountId: id, bin }),
	isBinBlacklisted: params({ accountId: id, cardPrefix: { type: "string", pattern: "^[0-9]{6,8}$" } }),
	checkoutContext: params({ accountId: id, productId: id }),
	// At least one of card and email: blockBuyer says so (NOTHING_TO_BLOCK).
	blockBuyer: params(
		{
			accountId: id,
			card: params({
				fingerprint,
				bin: { type: "string", pattern: "^[0-9]{6}$" },
				last4: { type: "string", pattern: "^[0-9]{4}$" },
			}),
			email,
			reason: { enum: BLOCK_REASONS },
			disputeId: nullableId,
			transactionId: nullableId,
		},
		["accountId", "reason"],
	),
	isBuyerBlocked: params({ accountId: id, fingerprint, email: { type: "string", maxLength: 254 } }, ["accountId", "fingerprint"]),
	// An operator blocks an email only: a card is blocked by a dispute, by its fingerprint, and no card number is taken here.
	addBlockedBuyer: params({ accountId: id, email: typedEmail }),
	listBlockedBuyers: params({ accountId: id }),
	removeBlockedBuyer: params({ accountId: id, kind: { enum: ["card", "email"] }, value: { type: "string", minLength: 1, maxLength: 254 } }),
	createCoupon: params(
		{
			accountId: id,
			code: couponCode,
			percentOff: { type: "integer", minimum: 1, maximum: 100 },
			amountOff: { type: "number", exclusiveMinimum: 0, maximum: MAX_AMOUNT },
			currency: { enum: CURRENCY_CODES, errorMessage: "must be an active ISO 4217 code in upper case, such as EUR" },
			duration: { enum: COUPON_DURATIONS },
			durationInPeriods: { type: "integer", minimum: 1, maximum: 120 },
			productIds: { type: "array", items: id, maxItems: 100 },
			maxRedemptions: { type: "integer", minimum: 1, maximum: 1_000_000 },
			redeemBy: { type: "string", format: "date-time" },
		},
		["accountId", "code", "duration"],
	),
	listCoupons: params({ accountId: id }),
	deactivateCoupon: params({ accountId: id, couponId: id }),
	// One of couponId and code: couponFor answers COUPON_NOT_FOUND for neither.
	couponFor: params({ ...couponRef, productId: id }, ["accountId", "productId"]),
	redeemCoupon: params({ accountId: id, couponId: id, customerId: id }),
	settleCoupon: params({ couponId: id, customerId: id }),
	none: params({}),
};
