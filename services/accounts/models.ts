// The accounts service's collections: merchant accounts (our customers, the
// merchants), their API tokens, products, merchant accounts (MIDs), the BIN
// blacklist and blocked buyers. Only this service imports this file.

import { type Connection, type Model, Schema } from "mongoose";
import {
	AUTHENTICATION_POLICIES,
	type AuthenticationPolicy,
	BILLING_KINDS,
	type BillingKind,
	BLOCK_REASONS,
	BLOCKED_BUYER_KINDS,
	type BlockedBuyer,
	type BlockedBuyerKind,
	CARD_TYPES,
	type CardType,
	COUPON_DURATIONS,
	type CouponDuration,
	type DisputeProtection,
	type EmailSettings,
	ENVIRONMENTS,
	type Environment,
	INVOICE_LANGUAGES,
	type InvoiceSettings,
	type MidProcessor,
	PERIOD_UNITS,
	type PortalSettings,
	type RenewalPeriod,
} from "../../shared/contracts/accounts";
import { createIdAllocator, type IdAllocator } from "../../shared/id-allocator";
import type { UsagePrice } from "../../shared/usage-pricing";

export interface AccountDoc {
	_id: number;
	name: string;
	environment: Environment;
	webhookUrl: string | null;
	webhookSecret: string;
	/** Days a declined renewal is retried on; null: the service's default (RENEWAL_RETRY_DAYS). */
	renewalRetryDays: number[] | null;
	/** The sandbox demo account of `npm start`, served at /demo. */
	demo: boolean;
	/** Stored complete when the account is created (the defaults for what it was not given: protectionOf). */
	disputeProtection: DisputeProtection;
	/** Emails to buyers; absent on an account never given any: the defaults (emailsOf). */
	emails?: Partial<EmailSettings>;
	/** Set before the account's first blocked buyer is stored, and kept: until then its checkouts ask nothing more. */
	buyerBlocks?: boolean;
	/** The invoice settings the operator set; those absent are at their defaults (invoice-settings.ts). */
	invoicing?: Partial<InvoiceSettings>;
	/** The customer portal's settings the merchant set; those absent are at their defaults (portal-settings.ts). */
	portal?: Partial<PortalSettings>;
	createdAt: Date;
}

/** Only the SHA-256 of a token is stored; the token itself is shown once. */
export interface ApiTokenDoc {
	_id: string;
	accountId: number;
	createdAt: Date;
	/** Set when the token is rotated out: it keeps working until then. */
	expiresAt: Date | null;
}

export interface ProductDoc {
	_id: number;
	accountId: number;
	name: string;
	/** Minor units of `currency`. */
	amount: number;
	currency: string;
	billing: BillingKind;
	trialDays: number;
	renewal: RenewalPeriod | null;
	allowMultipleSubscriptions: boolean;
	authentication: AuthenticationPolicy;
	merchantAccountGroup: string;
	active: boolean;
	/** Basis points; absent or null: the account's rate. */
	taxRateBps?: number | null;
	/** Its usage, billed in arrears at each renewal (docs/usage.md#prices); absent: none. */
	usagePrices?: UsagePrice[];
	createdAt: Date;
}

export interface MerchantAccountDoc {
	_id: number;
	accountId: number;
	name: string;
	group: string;
	cardTypes: CardType[];
	active: boolean;
	/** Its processor; null: none (a production MID created without one). */
	processor: MidProcessor | null;
	weight: number;
	/** Minor units of `currency` a calendar month; absent or null: no cap. */
	monthlyCap?: { amount: number; currency: string } | null;
	createdAt: Date;
}

/** Keyed by `<accountId>:<bin>`: a checkout asks for its card's two prefixes by key. */
export interface BlacklistedBinDoc {
	_id: string;
	accountId: number;
	bin: string;
	createdAt: Date;
}

const options = { versionKey: false } as const;

const accountSchema = new Schema<AccountDoc>(
	{
		_id: Number,
		name: { type: String, required: true },
		environment: { type: String, enum: ENVIRONMENTS, required: true },
		webhookUrl: { type: String, default: null },
		renewalRetryDays: { type: [Number], default: null },
		webhookSecret: { type: String, required: true },
		demo: { type: Boolean, default: false },
		disputeProtection: {
			type: new Schema(
				{ unsubscribe: Boolean, blockCard: Boolean, blockEmail: Boolean, refundEarlyFraudWarnings: Boolean },
				{ _id: false },
			),
			default: undefined,
		},
		emails: {
			type: new Schema(
				{ enabled: Boolean, from: String, fromName: String, replyTo: String, language: String, brandColor: String },
				{ _id: false },
			),
			default: undefined,
		},
		buyerBlocks: Boolean,
		portal: { type: Schema.Types.Mixed, default: undefined },
		invoicing: {
			type: new Schema(
				{
					legalName: String,
					address: String,
					taxId: String,
					email: String,
					invoicePrefix: String,
					creditNotePrefix: String,
					language: { type: String, enum: INVOICE_LANGUAGES },
					taxRateBps: Number,
					pricesIncludeTax: Boolean,
				},
				{ _id: false },
			),
			default: undefined,
		},
		createdAt: { type: Date, required: true },
	},
	options,
);

const apiTokenSchema = new Schema<ApiTokenDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true, index: true },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, default: null },
	},
	options,
);

const productSchema = new Schema<ProductDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true, index: true },
		name: { type: String, required: true },
		amount: { type: Number, required: true, min: 1, validate: Number.isSafeInteger },
		currency: { type: String, required: true },
		billing: { type: String, enum: BILLING_KINDS, required: true },
		trialDays: { type: Number, required: true, min: 0 },
		renewal: { type: new Schema({ every: Number, unit: { type: String, enum: PERIOD_UNITS } }, { _id: false }), default: null },
		allowMultipleSubscriptions: { type: Boolean, required: true },
		authentication: { type: String, enum: AUTHENTICATION_POLICIES, required: true },
		merchantAccountGroup: { type: String, required: true },
		active: { type: Boolean, required: true },
		taxRateBps: { type: Number, default: null },
		usagePrices: { type: [Schema.Types.Mixed], default: undefined },
		createdAt: { type: Date, required: true },
	},
	options,
);

const merchantAccountSchema = new Schema<MerchantAccountDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		name: { type: String, required: true },
		group: { type: String, required: true },
		cardTypes: { type: [String], enum: CARD_TYPES, required: true },
		active: { type: Boolean, required: true },
		processor: { type: Schema.Types.Mixed, default: null },
		weight: { type: Number, required: true },
		monthlyCap: { type: Schema.Types.Mixed, default: null },
		createdAt: { type: Date, required: true },
	},
	options,
);
merchantAccountSchema.index({ accountId: 1, group: 1 });

const blacklistedBinSchema = new Schema<BlacklistedBinDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		bin: { type: String, required: true },
		createdAt: { type: Date, required: true },
	},
	options,
);
blacklistedBinSchema.index({ accountId: 1, bin: 1 }, { unique: true });

/** Keyed by `<accountId>:card:<fingerprint>` or `<accountId>:email:<email>`: a checkout asks for its card and email by key. */
export interface BlockedBuyerDoc extends Omit<BlockedBuyer, "createdAt"> {
	_id: string;
	createdAt: Date;
}

const blockedBuyerSchema = new Schema<BlockedBuyerDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		kind: { type: String, enum: BLOCKED_BUYER_KINDS, required: true },
		value: { type: String, required: true },
		cardBin: { type: String, default: null },
		cardLast4: { type: String, default: null },
		reason: { type: String, enum: BLOCK_REASONS, required: true },
		disputeId: { type: Number, default: null },
		transactionId: { type: Number, default: null },
		createdAt: { type: Date, required: true },
	},
	options,
);
// The operators' list (newest first); checkouts read by key.
blockedBuyerSchema.index({ accountId: 1, createdAt: -1 });

/** The MIDs of one group of one account, keyed by `<accountId>:<group>`: a checkout reads its product's group by key. */
export interface MerchantAccountGroupDoc {
	_id: string;
	accountId: number;
	group: string;
	merchantAccountIds: number[];
}

const merchantAccountGroupSchema = new Schema<MerchantAccountGroupDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		group: { type: String, required: true },
		merchantAccountIds: { type: [Number], default: [] },
	},
	options,
);

/**
 * A coupon, keyed by its numeric id; its promotion code is unique per account (a unique index on `(accountId, code)`,
 * read by that exact pair). `redeemed` counts redemptions taken; `pending` names the customers whose checkout holds
 * one not yet paid: a redemption is `$inc` with a `$push` in one conditional update, given back (`$inc -1`, `$pull`)
 * if its payment ends unpaid, or kept (`$pull` only) once paid (coupons.ts).
 */
export interface CouponDoc {
	_id: number;
	accountId: number;
	code: string;
	percentOff: number | null;
	/** Minor units of `currency`. */
	amountOff: number | null;
	currency: string | null;
	duration: CouponDuration;
	durationInPeriods: number | null;
	productIds: number[] | null;
	maxRedemptions: number | null;
	redeemed: number;
	pending: number[];
	redeemBy: Date | null;
	active: boolean;
	createdAt: Date;
}

const couponSchema = new Schema<CouponDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		code: { type: String, required: true },
		percentOff: { type: Number, default: null },
		amountOff: { type: Number, default: null },
		currency: { type: String, default: null },
		duration: { type: String, enum: COUPON_DURATIONS, required: true },
		durationInPeriods: { type: Number, default: null },
		productIds: { type: [Number], default: null },
		maxRedemptions: { type: Number, default: null },
		redeemed: { type: Number, required: true, min: 0 },
		pending: { type: [Number], default: [] },
		redeemBy: { type: Date, default: null },
		active: { type: Boolean, required: true },
		createdAt: { type: Date, required: true },
	},
	options,
);
couponSchema.index({ accountId: 1, code: 1 }, { unique: true });

export const binKey = (accountId: number, bin: string) => `${accountId}:${bin}`;
export const groupKey = (accountId: number, group: string) => `${accountId}:${group}`;
export const blockedBuyerKey = (accountId: number, kind: BlockedBuyerKind, value: string) => `${accountId}:${kind.toLowerCase()}:${value}`;

export interface AccountsDb {
	accounts: Model<AccountDoc>;
	apiTokens: Model<ApiTokenDoc>;
	products: Model<ProductDoc>;
	merchantAccounts: Model<MerchantAccountDoc>;
	blacklistedBins: Model<BlacklistedBinDoc>;
	blockedBuyers: Model<BlockedBuyerDoc>;
	merchantAccountGroups: Model<MerchantAccountGroupDoc>;
	coupons: Model<CouponDoc>;
	ids: { accounts: IdAllocator; products: IdAllocator; merchantAccounts: IdAllocator; coupons: IdAllocator };
}

export function createAccountsDb(connection: Connection): AccountsDb {
	return {
		accounts: connection.model("Account", accountSchema, "accounts"),
		apiTokens: connection.model("ApiToken", apiTokenSchema, "api_tokens"),
		products: connection.model("Product", productSchema, "products"),
		merchantAccounts: connection.model("MerchantAccount", merchantAccountSchema, "merchant_accounts"),
		blacklistedBins: connection.model("BlacklistedBin", blacklistedBinSchema, "bin_blacklist"),
		blockedBuyers: connection.model("BlockedBuyer", blockedBuyerSchema, "blocked_buyers"),
		merchantAccountGroups: connection.model("MerchantAccountGroup", merchantAccountGroupSchema, "merchant_account_groups"),
		coupons: connection.model("Coupon", couponSchema, "coupons"),
		ids: {
			accounts: createIdAllocator(connection, "accounts", 10),
			products: createIdAllocator(connection, "products", 10),
			merchantAccounts: createIdAllocator(connection, "merchant_accounts", 10),
			coupons: createIdAllocator(connection, "coupons", 10),
		},
	};
}
