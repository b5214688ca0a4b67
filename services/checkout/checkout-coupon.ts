// A checkout's coupon (docs/coupons.md): the promotion code the buyer typed
// in the frame, else the coupon the merchant attached to the session. It is
// checked with the product (step 1, read only), written on the PENDING
// customer, and its redemption taken after the duplicate check (step 4),
// before the session is consumed and money moves: one conditional update on
// the coupon, so its limit holds across checkout nodes. Billing keeps the
// redemption when the payment is approved and gives it back when it is not.
import { isFailure } from "../../shared/call";
import { CouponError, type CouponTerms } from "../../shared/contracts/accounts";
import type { SessionCoupon } from "../../shared/contracts/sessions";
import { answer, type CheckoutAnswer, CheckoutCode } from "./checkout-answers";
import type { CheckoutDeps } from "./deps";

/** Each coupon refusal is the checkout's code of the same name. */
export const COUPON_CODES: Record<CouponError, CheckoutCode> = {
	[CouponError.NotFound]: CheckoutCode.CouponNotFound,
	[CouponError.Inactive]: CheckoutCode.CouponInactive,
	[CouponError.Expired]: CheckoutCode.CouponExpired,
	[CouponError.UsedUp]: CheckoutCode.CouponUsedUp,
	[CouponError.WrongProduct]: CheckoutCode.CouponNotForProduct,
	[CouponError.WrongCurrency]: CheckoutCode.CouponWrongCurrency,
};

/** The checkout's coupon terms (null: none asked for), or the answer refusing it. */
export async function checkoutCoupon(
	deps: CheckoutDeps,
	input: { promotionCode?: string; accountId: number; productId: number },
	sessionCoupon: SessionCoupon | null,
): Promise<{ terms: CouponTerms | null } | { refused: CheckoutAnswer }> {
	// The code the buyer typed wins over the session's: the buyer chose it on the page.
	const ref = input.promotionCode ? { code: input.promotionCode } : sessionCoupon;
	if (!ref) return { terms: null };
	const terms = await deps.call("accounts.couponFor", { accountId: input.accountId, productId: input.productId, ...ref });
	return isFailure(terms) ? { refused: answer(COUPON_CODES[terms.error]) } : { terms };
}

/** Takes the redemption for the customer just opened; the refusal's answer when it is used up or withdrawn meanwhile. */
export async function redeemFor(
	deps: CheckoutDeps,
	coupon: CouponTerms | null,
	opened: { accountId: number; customerId: number },
): Promise<CheckoutAnswer | null> {
	if (!coupon) return null;
	const taken = await deps.call("accounts.redeemCoupon", { ...opened, couponId: coupon.couponId });
	if (!isFailure(taken)) return null;
	// Nothing was charged: the customer is abandoned (its lock let go), and the buyer may try without the code.
	await deps.call("billing.abandonSubscription", { customerId: opened.customerId });
	return answer(COUPON_CODES[taken.error]);
}
