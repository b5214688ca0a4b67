// The checkout's answers: the spec's codes (section 1) with their messages,
// and how the other services' errors map to them. A card update answers with
// the same codes where they apply (card-update-pipeline.ts).
import { SaveCardError } from "../../shared/contracts/payments";
import { SessionCheckoutError } from "../../shared/contracts/sessions";

export enum CheckoutCode {
	Ok = "OK",
	SessionNotFound = "SESSION_NOT_FOUND",
	SessionExpired = "SESSION_EXPIRED",
	SessionUsed = "SESSION_USED",
	DomainMismatch = "DOMAIN_MISMATCH",
	ProductNotFound = "PRODUCT_NOT_FOUND",
	ProductInactive = "PRODUCT_INACTIVE",
	NoMerchantAccount = "NO_MERCHANT_ACCOUNT",
	BinBlacklist = "BIN_BLACKLIST",
	CreditCardValidation = "CREDITCARD_VALIDATION",
	AlreadySubscribed = "ALREADY_SUBSCRIBED",
	PaymentDeclined = "PAYMENT_DECLINED",
	ProcessingError = "PROCESSING_ERROR",
	/** The buyer failed the issuer's challenge (3-D Secure): nothing was charged. */
	AuthenticationFailed = "AUTHENTICATION_FAILED",
	/** To the frame only, never the SDK: the issuer asks the buyer for a challenge, shown at `challengeUrl`. */
	Challenge = "CHALLENGE",
	// A coupon the checkout cannot apply (docs/coupons.md#errors): nothing was charged.
	CouponNotFound = "COUPON_NOT_FOUND",
	CouponInactive = "COUPON_INACTIVE",
	CouponExpired = "COUPON_EXPIRED",
	CouponUsedUp = "COUPON_USED_UP",
	CouponNotForProduct = "COUPON_NOT_FOR_PRODUCT",
	CouponWrongCurrency = "COUPON_WRONG_CURRENCY",
}

export const CHECKOUT_MESSAGES: Record<CheckoutCode, string> = {
	[CheckoutCode.Ok]: "Payment accepted",
	[CheckoutCode.SessionNotFound]: "This checkout session does not exist",
	[CheckoutCode.SessionExpired]: "This checkout session has expired; reload the page to start again",
	[CheckoutCode.SessionUsed]: "This checkout session has already been used",
	[CheckoutCode.DomainMismatch]: "This checkout session belongs to another site",
	[CheckoutCode.ProductNotFound]: "This product does not exist",
	[CheckoutCode.ProductInactive]: "This product is not available",
	[CheckoutCode.NoMerchantAccount]: "This card type is not accepted",
	[CheckoutCode.BinBlacklist]: "This card cannot be used here",
	[CheckoutCode.CreditCardValidation]: "The card could not be verified; check its details or use another card",
	[CheckoutCode.AlreadySubscribed]: "This email and card already have this subscription",
	[CheckoutCode.PaymentDeclined]: "The payment was declined; use another card",
	[CheckoutCode.ProcessingError]: "The payment could not be processed; nothing was charged, please try again",
	[CheckoutCode.AuthenticationFailed]: "The card's authentication failed; nothing was charged",
	[CheckoutCode.Challenge]: "Your bank asks you to confirm this payment",
	[CheckoutCode.CouponNotFound]: "This promotion code does not exist",
	[CheckoutCode.CouponInactive]: "This promotion code is no longer valid",
	[CheckoutCode.CouponExpired]: "This promotion code has expired",
	[CheckoutCode.CouponUsedUp]: "This promotion code has been used up",
	[CheckoutCode.CouponNotForProduct]: "This promotion code does not apply to this product",
	[CheckoutCode.CouponWrongCurrency]: "This promotion code is for another currency",
};

export interface CheckoutAnswer {
	code: CheckoutCode;
	message: string;
	customerId?: number;
	/** CHALLENGE: the page the frame shows. */
	challengeUrl?: string;
	/** OK with a coupon: what it took off the first payment (a decimal in the product's currency). */
	discount?: { couponId: number; code: string | null; amount: number };
}

export interface InvalidCheckout {
	invalid: { field: string; message: string }[];
}

export const answer = (code: CheckoutCode, customerId?: number): CheckoutAnswer =>
	customerId === undefined ? { code, message: CHECKOUT_MESSAGES[code] } : { code, message: CHECKOUT_MESSAGES[code], customerId };

/** The frame's challenge page: the sandbox's own page names the session, which decides who may embed it. */
export function challengeFor(url: string, sessionId: string): CheckoutAnswer {
	const challengeUrl = url.startsWith("/checkout/") ? `${url}&sessionId=${encodeURIComponent(sessionId.toLowerCase())}` : url;
	return { ...answer(CheckoutCode.Challenge), challengeUrl };
}

export const NO_PROCESSOR: CheckoutAnswer = {
	code: CheckoutCode.ProcessingError,
	message: "No payment processor is configured for this production account",
};

export const SESSION_CODES: Record<SessionCheckoutError, CheckoutCode> = {
	[SessionCheckoutError.NotFound]: CheckoutCode.SessionNotFound,
	[SessionCheckoutError.Expired]: CheckoutCode.SessionExpired,
	[SessionCheckoutError.Used]: CheckoutCode.SessionUsed,
	[SessionCheckoutError.DomainMismatch]: CheckoutCode.DomainMismatch,
};

export const UNVERIFIED: Record<SaveCardError, CheckoutAnswer> = {
	[SaveCardError.NoProcessor]: NO_PROCESSOR,
	[SaveCardError.CardNotVerified]: answer(CheckoutCode.CreditCardValidation),
	[SaveCardError.ProcessorError]: answer(CheckoutCode.ProcessingError),
};
