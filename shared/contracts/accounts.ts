// The accounts service's contract with the other services: the actions they
// call, what those answer, and the events accounts sends. Types only; the
// accounts service and its callers both import them.
import type { UsagePrice } from "../usage-pricing";
import type { MerchantAccountProcessor, MerchantAccountView } from "./merchant-accounts";

export const ENVIRONMENTS = ["sandbox", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const CARD_TYPES = ["visa", "mastercard", "amex", "discover", "jcb", "diners", "maestro", "unionpay"] as const;
export type CardType = (typeof CARD_TYPES)[number];

export const BILLING_KINDS = ["CHARGE", "PREAUTHORIZE", "SCHEDULE"] as const;
export type BillingKind = (typeof BILLING_KINDS)[number];

export const PERIOD_UNITS = ["day", "week", "month", "year"] as const;
export interface RenewalPeriod {
	every: number;
	unit: (typeof PERIOD_UNITS)[number];
}

/** The account a valid API token belongs to (the gateway caches it until the token's expiry). */
export interface AuthenticatedAccount {
	accountId: number;
	environment: Environment;
	/** When a rotated-out token stops working (epoch ms); null while it is the current token. */
	tokenExpiresAt: number | null;
}

export interface AccountView {
	id: number;
	name: string;
	environment: Environment;
	webhookUrl: string | null;
	/** Days after a renewal's first decline on which it is retried (the service's default unless the account set its own). */
	renewalRetryDays: number[];
	/** What a dispute or an early fraud warning of one of its charges brings; always complete (defaults filled in). */
	disputeProtection: DisputeProtection;
	/** Emails to its buyers (docs/emails.md): off unless turned on; always complete (defaults filled in). */
	emails: EmailSettings;
	/** The seller's details and tax on its invoices (docs/invoices.md#settings); always complete (defaults filled in). */
	invoicing: InvoiceSettings;
	/** The customer portal (docs/portal.md#settings); always complete (defaults filled in). */
	portal: PortalSettings;
}

/** The languages the customer portal is shown in (docs/portal.md). */
export const PORTAL_LANGUAGES = ["en", "de", "es"] as const;
export type PortalLanguage = (typeof PORTAL_LANGUAGES)[number];

/** The reasons a buyer may give for cancelling in the portal, Stripe's list (docs/portal.md#settings). */
export const CANCELLATION_REASONS = [
	"too_expensive",
	"missing_features",
	"switched_service",
	"unused",
	"customer_service",
	"too_complex",
	"low_quality",
	"other",
] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

/** How a buyer may cancel in the portal: not at all, at the period's end, or also at once. */
export const PORTAL_CANCEL_MODES = ["off", "period_end", "period_end_or_now"] as const;

/** What buyers may do in the customer portal (docs/portal.md#settings); always complete (defaults filled in). */
export interface PortalSettings {
	/** Off: no portal link can be made. */
	enabled: boolean;
	/** Change plan or seats, among `products` (and the subscription's own product). */
	changePlan: boolean;
	/** The products a buyer may switch to; empty: only seats of the product it has. */
	products: number[];
	pause: boolean;
	/** Update the card, which also pays a renewal owed. */
	updateCard: boolean;
	cancel: (typeof PORTAL_CANCEL_MODES)[number];
	cancellationReasons: CancellationReason[];
	/** A coupon offered once to a buyer about to cancel; null: none. */
	retentionCouponId: number | null;
	/** Hosts a session's returnUrl may be on (a subdomain of one included). */
	returnDomains: string[];
	/** The portal's language when the session names none. */
	language: PortalLanguage;
	/** Buyers may ask for a sign-in link by email on the portal's page (the account's emails must be on too). */
	emailSignIn: boolean;
}

/** What the customer portal shows of an account (accounts.portalContext). */
export interface PortalContext {
	name: string;
	environment: Environment;
	/** The emails' colour (docs/emails.md#settings); null: a neutral dark grey. */
	brandColor: string | null;
	/** Whether its emails to buyers are on: a sign-in email needs them. */
	emailsEnabled: boolean;
	settings: PortalSettings;
	/** All the account's products, with their tax: the portal picks those a buyer may switch to. */
	products: ProductRecord[];
	/** The retention coupon while it can be redeemed; null: none offered. */
	retentionCoupon: CouponView | null;
}

/** The languages buyers' emails are written in (docs/emails.md#language). */
export const EMAIL_LANGUAGES = ["en", "de"] as const;
export type EmailLanguage = (typeof EMAIL_LANGUAGES)[number];

/** Emails to an account's buyers (docs/emails.md#settings). */
export interface EmailSettings {
	/** Off by default: nothing is sent until an operator turns them on. */
	enabled: boolean;
	/** The sender's address; null: the service's (EMAIL_FROM). */
	from: string | null;
	/** The sender's display name; null: the account's name. */
	fromName: string | null;
	/** Where buyers' answers go; null: none (answers go to `from`). */
	replyTo: string | null;
	language: EmailLanguage;
	/** The merchant's colour for headings and buttons, #rrggbb; null: a neutral dark grey. */
	brandColor: string | null;
}

/** The languages an invoice can be written in (docs/invoices.md#languages). */
export const INVOICE_LANGUAGES = ["en", "de", "es"] as const;
export type InvoiceLanguage = (typeof INVOICE_LANGUAGES)[number];

/** What an account's invoices say of the seller, how they are numbered, and the tax its prices carry. */
export interface InvoiceSettings {
	/** The seller's legal name; null: the account's name. */
	legalName: string | null;
	/** The seller's postal address, lines separated by newlines; null: none printed. */
	address: string | null;
	/** The seller's tax (VAT) id; null: none printed. */
	taxId: string | null;
	/** The seller's email address, printed on its documents; null: none printed. */
	email: string | null;
	/** Invoice numbers are `<prefix>-<year>-<6 digits>` (default INV). */
	invoicePrefix: string;
	/** Credit note numbers are `<prefix>-<year>-<6 digits>` (default CN). */
	creditNotePrefix: string;
	language: InvoiceLanguage;
	/** The tax rate of products that set none, in basis points (2000 = 20 %); default 0. */
	taxRateBps: number;
	/** true (default): prices include the tax, which the invoice splits out; false: tax is added to what the buyer pays. */
	pricesIncludeTax: boolean;
}

/** The tax a product's price carries: its own rate or its account's, included in the price or added to it. */
export interface ProductTax {
	/** Basis points (2000 = 20 %). */
	rateBps: number;
	inclusive: boolean;
}

/** The account's protection against disputes (docs/disputes.md#protection). */
export interface DisputeProtection {
	/** The customer is unsubscribed at once (default true). */
	unsubscribe: boolean;
	/** The card is refused at the account's new checkouts (default true). */
	blockCard: boolean;
	/** The email is refused too (default false: a shared or mistyped address would block the innocent). */
	blockEmail: boolean;
	/** An early fraud warning refunds its charge in full (default true). */
	refundEarlyFraudWarnings: boolean;
}

export const BLOCKED_BUYER_KINDS = ["CARD", "EMAIL"] as const;
export type BlockedBuyerKind = (typeof BLOCKED_BUYER_KINDS)[number];

export const BLOCK_REASONS = ["DISPUTE", "EARLY_FRAUD_WARNING", "MANUAL"] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];

/** A card or an email the account refuses at checkout (BIN_BLACKLIST). */
export interface BlockedBuyer {
	accountId: number;
	kind: BlockedBuyerKind;
	/** The card's keyed fingerprint (the checkout's), or the email lower-cased and trimmed. */
	value: string;
	/** A card's BIN and last four digits, so an operator can recognise it; null for an email. */
	cardBin: string | null;
	cardLast4: string | null;
	reason: BlockReason;
	/** The dispute, or the warned transaction, that blocked it; null when none. */
	disputeId: number | null;
	transactionId: number | null;
	/** Local date-time (TIME_ZONE). */
	createdAt: string;
}

/** What billing blocks when a dispute opens: the card, the email, or both. */
export interface BlockBuyerInput {
	accountId: number;
	card?: { fingerprint: string; bin: string; last4: string };
	email?: string;
	reason: BlockReason;
	disputeId?: number | null;
	transactionId?: number | null;
}

/** Where and how to sign an account's webhooks. */
export interface WebhookTarget {
	accountId: number;
	environment: Environment;
	webhookUrl: string | null;
	webhookSecret: string;
}

export interface ProductView {
	id: number;
	accountId: number;
	name: string;
	/** Decimal, in `currency`. */
	amount: number;
	currency: string;
	currencyId: number;
	billing: BillingKind;
	trialDays: number;
	renewal: RenewalPeriod | null;
	allowMultipleSubscriptions: boolean;
	/** 3-D Secure at checkout (docs/authentication.md): ALWAYS asked for, or only WHEN_REQUIRED by the issuer. */
	authentication: AuthenticationPolicy;
	merchantAccountGroup: string;
	active: boolean;
	/** Its own tax rate in basis points; null: the account's (invoicing.taxRateBps). */
	taxRateBps: number | null;
	/** Its meters' prices, billed in arrears at each renewal beside `amount` (docs/usage.md#prices); empty: none. */
	usagePrices: UsagePrice[];
}

export const AUTHENTICATION_POLICIES = ["ALWAYS", "WHEN_REQUIRED"] as const;
export type AuthenticationPolicy = (typeof AUTHENTICATION_POLICIES)[number];

/** What other services get of a product: the view plus the amount in minor units. */
export interface ProductRecord extends ProductView {
	amountMinor: number;
	/** The tax its price carries, resolved from the product and its account when read. */
	tax: ProductTax;
}

/** MIDs: the admin API's view and their processors (merchant-accounts.ts). */
export type { MerchantAccountProcessor, MerchantAccountView, MidProcessor } from "./merchant-accounts";

/** Everything a checkout needs from the account in one call. */
export interface CheckoutContext {
	environment: Environment;
	product: ProductRecord | null;
	merchantAccounts: MerchantAccountView[];
	/** The account has blocked a buyer: the checkout asks isBuyerBlocked (false: it never blocked anyone, and asks nothing). */
	blocksBuyers: boolean;
}

/** What billing needs to renew a customer of the product. */
export interface RenewalTerms {
	product: ProductRecord;
	retryDays: number[];
	/** The MIDs of the product's group, active or not. */
	merchantAccounts: MerchantAccountView[];
}

export const COUPON_DURATIONS = ["once", "repeating", "forever"] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];

/**
 * What a coupon takes off a charge, as billing applies it (docs/coupons.md): `percentOff` (an integer percent) or
 * `amountOff` (minor units of `currency`), for the first charge (`once`), `periods` charges (`repeating`) or all
 * (`forever`), on `productIds` only when named.
 */
export interface CouponTerms {
	couponId: number;
	/** The promotion code, upper case. */
	code: string;
	percentOff: number | null;
	amountOff: number | null;
	currency: string | null;
	duration: CouponDuration;
	/** The number of charges a `repeating` coupon discounts; null for the others. */
	periods: number | null;
	productIds: number[] | null;
}

/** A coupon as the admin API and the dashboard show it. */
export interface CouponView {
	id: number;
	accountId: number;
	code: string;
	/** Integer percent (1 to 100), or null for a fixed amount. */
	percentOff: number | null;
	/** Decimal in `currency`, or null for a percentage. */
	amountOff: number | null;
	currency: string | null;
	duration: CouponDuration;
	durationInPeriods: number | null;
	productIds: number[] | null;
	maxRedemptions: number | null;
	/** Redemptions taken: paid ones and those of checkouts still paying. */
	redeemed: number;
	/** Local date-time (TIME_ZONE) after which it is refused; null: no end. */
	redeemBy: string | null;
	active: boolean;
	createdAt: string;
}

/** Why a coupon cannot be used: the checkout's codes of the same name (docs/coupons.md#errors). */
export enum CouponError {
	NotFound = "COUPON_NOT_FOUND",
	Inactive = "COUPON_INACTIVE",
	Expired = "COUPON_EXPIRED",
	UsedUp = "COUPON_USED_UP",
	WrongProduct = "COUPON_NOT_FOR_PRODUCT",
	WrongCurrency = "COUPON_WRONG_CURRENCY",
}

/** A coupon named by its id (a merchant's) or by its promotion code (a buyer's or a merchant's). */
export interface CouponRef {
	accountId: number;
	couponId?: number;
	code?: string;
}

export interface AccountsActions {
	"accounts.authenticate": { params: { tokenHash: string }; result: AuthenticatedAccount | null };
	/** Answers 404 (ApiError NOT_FOUND) for an unknown account. */
	"accounts.get": { params: { accountId: number }; result: AccountView };
	"accounts.webhookTarget": { params: { accountId: number }; result: WebhookTarget };
	/** null for an unknown account. */
	"accounts.checkoutContext": { params: { accountId: number; productId: number }; result: CheckoutContext | null };
	/** Whether the card's first 6 or 8 digits are on the account's BIN blacklist. */
	"accounts.isBinBlacklisted": { params: { accountId: number; cardPrefix: string }; result: boolean };
	/**
	 * Blocks the card, the email or both (at least one) at the account's checkouts. Idempotent: an entry already
	 * there is kept as it is. `blocked`: how many of those asked are now blocked. 404 (ApiError NOT_FOUND) for an unknown account.
	 */
	"accounts.blockBuyer": { params: BlockBuyerInput; result: { blocked: number } };
	/** Whether the card (its keyed fingerprint) or the email is blocked by the account. */
	"accounts.isBuyerBlocked": { params: { accountId: number; fingerprint: string; email?: string }; result: boolean };
	/** The MID's processor (payments); null for an unknown MID. */
	"accounts.merchantAccountProcessor": { params: { midId: number }; result: MerchantAccountProcessor | null };
	"accounts.getProduct": { params: { accountId: number; productId: number }; result: ProductRecord | null };
	/** What the customer portal shows of the account (docs/portal.md); throws 404 for an unknown account. */
	"accounts.portalContext": { params: { accountId: number }; result: PortalContext };
	/** null for an unknown account or product. */
	"accounts.renewalTerms": { params: { accountId: number; productId: number }; result: RenewalTerms | null };
	/** The account's MIDs (of one group if named); 404 (ApiError NOT_FOUND) for an unknown account. */
	"accounts.listMerchantAccounts": { params: { accountId: number; group?: string }; result: MerchantAccountView[] };
	/** The coupon's terms if a new subscription to the product may use it now (read only: redeemCoupon takes it). */
	"accounts.couponFor": { params: CouponRef & { productId: number }; result: CouponTerms | { error: CouponError } };
	/**
	 * Takes one redemption for the customer: one conditional update on the coupon, idempotent per customer (a repeat
	 * answers the same). Refused when the coupon is used up, inactive or expired meanwhile.
	 */
	"accounts.redeemCoupon": {
		params: { accountId: number; couponId: number; customerId: number };
		result: { redeemed: true } | { error: CouponError };
	};
	/** The customer's payment was made: its redemption is kept for good (idempotent). */
	"accounts.confirmCoupon": { params: { couponId: number; customerId: number }; result: { confirmed: boolean } };
	/** The customer's payment ended unpaid: its redemption, if not yet confirmed, is given back (idempotent). */
	"accounts.releaseCoupon": { params: { couponId: number; customerId: number }; result: { released: boolean } };
	/** The demo account of `npm start`, or null when there is none. */
	"accounts.demoAccount": { params: Record<string, never>; result: { accountId: number; products: ProductView[] } | null };
}

export interface AccountsEvents {
	/** Broadcast: every node drops what it cached of the account. */
	"accounts.updated": { accountId: number };
	/** Broadcast: every gateway drops the account's cached token lookups. */
	"accounts.tokensRotated": { accountId: number };
	/** Balanced: one notifications node sends the account's waiting webhooks. */
	"accounts.webhookUrlSet": { accountId: number };
}
