// The accounts service's domain errors, and the HTTP answer of each (one exhaustive table).
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum AccountsError {
	UnknownAccount = "UNKNOWN_ACCOUNT",
	UnknownProduct = "UNKNOWN_PRODUCT",
	UnknownBin = "UNKNOWN_BIN",
	UnknownBlockedBuyer = "UNKNOWN_BLOCKED_BUYER",
	UnknownCurrency = "UNKNOWN_CURRENCY",
	InvalidAmount = "INVALID_AMOUNT",
	InvalidTrial = "INVALID_TRIAL",
	NothingToChange = "NOTHING_TO_CHANGE",
	NothingToBlock = "NOTHING_TO_BLOCK",
	/** A product change that is valid alone but not with the product's stored fields (409). */
	AmountConflictsWithCurrency = "AMOUNT_CONFLICTS_WITH_CURRENCY",
	TrialConflictsWithBilling = "TRIAL_CONFLICTS_WITH_BILLING",
	UnknownMerchantAccount = "UNKNOWN_MERCHANT_ACCOUNT",
	/** A MID's processor that its account's environment may not use (409): docs/api.md#merchant-accounts. */
	SandboxInProduction = "SANDBOX_IN_PRODUCTION",
	TestKeyInProduction = "TEST_KEY_IN_PRODUCTION",
	LiveKeyInSandbox = "LIVE_KEY_IN_SANDBOX",
	/** The processor key, sealed, could not be read by payments (a key rotation in between): send it again. */
	UnreadableProcessorKey = "UNREADABLE_PROCESSOR_KEY",
	UnknownCoupon = "UNKNOWN_COUPON",
	/** A coupon takes percentOff, or amountOff with its currency (docs/coupons.md). */
	InvalidCouponDiscount = "INVALID_COUPON_DISCOUNT",
	InvalidCouponDuration = "INVALID_COUPON_DURATION",
	RedeemByPast = "REDEEM_BY_PAST",
	/** Promotion codes are unique per account, whatever their letter case (409). */
	DuplicateCouponCode = "DUPLICATE_COUPON_CODE",
	/** A product's usage prices (docs/usage.md#prices). */
	InvalidUsagePrice = "INVALID_USAGE_PRICE",
	/** Usage prices, fine alone, on a product that does not renew or is PREAUTHORIZE, as stored (409). */
	UsagePricesConflictWithBilling = "USAGE_PRICES_CONFLICT_WITH_BILLING",
}

/** What the admin API answers for each error. */
export const ACCOUNTS_ERRORS: ErrorTable<AccountsError> = {
	[AccountsError.InvalidUsagePrice]: {
		type: ApiErrorType.BadRequest,
		message:
			"usagePrices: each names one of the account's meters, once; per_unit and package take unitAmount (a decimal string of minor units), package a packageSize, graduated and volume ascending tiers whose last alone has upTo null; a product with usage prices renews and is not PREAUTHORIZE",
	},
	[AccountsError.UsagePricesConflictWithBilling]: {
		type: ApiErrorType.Conflict,
		message:
			"Usage is billed in arrears at each renewal: a product with usage prices renews and is not PREAUTHORIZE; send usagePrices, renewal and billing together",
	},
	[AccountsError.UnknownAccount]: { type: ApiErrorType.NotFound, message: "No account with this accountId" },
	[AccountsError.UnknownProduct]: { type: ApiErrorType.NotFound, message: "No product with this productId in the account" },
	[AccountsError.UnknownBin]: { type: ApiErrorType.NotFound, message: "This BIN is not on the account's blacklist" },
	[AccountsError.UnknownBlockedBuyer]: { type: ApiErrorType.NotFound, message: "This card or email is not blocked by the account" },
	[AccountsError.UnknownCurrency]: { type: ApiErrorType.BadRequest, message: "currency must be an active ISO 4217 code such as EUR" },
	[AccountsError.InvalidAmount]: {
		type: ApiErrorType.BadRequest,
		message: "amount must be a positive number with no more decimals than the currency allows",
	},
	[AccountsError.InvalidTrial]: {
		type: ApiErrorType.BadRequest,
		message:
			"trialDays must be 0 or absent for CHARGE, 1 to 365 for SCHEDULE, and 1 to 7 for PREAUTHORIZE (an authorization hold expires after 7 days)",
	},
	[AccountsError.NothingToChange]: { type: ApiErrorType.BadRequest, message: "Nothing to change: send at least one field" },
	[AccountsError.NothingToBlock]: { type: ApiErrorType.BadRequest, message: "Nothing to block: send a card, an email or both" },
	[AccountsError.AmountConflictsWithCurrency]: {
		type: ApiErrorType.Conflict,
		message: "The product's amount would have more decimals than its currency allows: send amount and currency together",
	},
	[AccountsError.TrialConflictsWithBilling]: {
		type: ApiErrorType.Conflict,
		message:
			"trialDays does not fit the product's billing (0 for CHARGE, 1 to 365 for SCHEDULE, 1 to 7 for PREAUTHORIZE): send billing and trialDays together",
	},
	[AccountsError.UnknownMerchantAccount]: { type: ApiErrorType.NotFound, message: "No merchant account with this id in the account" },
	[AccountsError.SandboxInProduction]: {
		type: ApiErrorType.Conflict,
		message: "A production account's merchant accounts need a real gateway: processor type sandbox is for sandbox accounts only",
	},
	[AccountsError.TestKeyInProduction]: {
		type: ApiErrorType.Conflict,
		message:
			"A production account's merchant account needs live keys: Stripe's sk_live_… or rk_live_…, or Adyen's live platform (its liveUrlPrefix)",
	},
	[AccountsError.LiveKeyInSandbox]: {
		type: ApiErrorType.Conflict,
		message:
			"A sandbox account's merchant account takes test keys only (Stripe's sk_test_… or rk_test_…, Adyen's test platform without a liveUrlPrefix): live keys move real money",
	},
	[AccountsError.UnknownCoupon]: { type: ApiErrorType.NotFound, message: "No coupon with this couponId in the account" },
	[AccountsError.InvalidCouponDiscount]: {
		type: ApiErrorType.BadRequest,
		message: "A coupon takes either percentOff, or amountOff with its currency",
	},
	[AccountsError.InvalidCouponDuration]: {
		type: ApiErrorType.BadRequest,
		message: "durationInPeriods is required with duration repeating, and only with it",
	},
	// Judged against the time now, as a pause's resumeAt: a 409, not the request's own fault.
	[AccountsError.RedeemByPast]: { type: ApiErrorType.Conflict, message: "redeemBy must be in the future" },
	[AccountsError.DuplicateCouponCode]: { type: ApiErrorType.Conflict, message: "The account already has a coupon with this code" },
	[AccountsError.UnreadableProcessorKey]: { type: ApiErrorType.BadRequest, message: "The gateway key could not be stored: send it again" },
};
