// What a coupon takes off a charge (docs/coupons.md): pure functions,
// integer minor units. A percentage is rounded half up to the minor unit
// (12.5 → 13): 10 % of 1,005 is 101. A fixed amount takes at most the charge.
// The discount is never negative and never more than the list amount, so a
// charge is never negative. It is taken from the list amount (price ×
// quantity), before the customer's credit and before any tax.
import type { CouponTerms } from "../../../shared/contracts/accounts";

/** A coupon on a customer: its terms and how many more charges it discounts (null: all of them, `forever`). */
export interface CustomerCoupon extends CouponTerms {
	periodsLeft: number | null;
}

/** The discount, in minor units, `coupon` gives on `listAmount` minor units: 0 ≤ discount ≤ listAmount. */
export function discountFor(coupon: Pick<CouponTerms, "percentOff" | "amountOff">, listAmount: number): number {
	if (!Number.isSafeInteger(listAmount) || listAmount <= 0) return 0;
	if (coupon.percentOff !== null) {
		const percent = Math.min(Math.max(Math.trunc(coupon.percentOff), 0), 100);
		// Half up, in integers: listAmount × percent is far below 2^53 for any amount a product may have.
		return Math.min(Math.floor((listAmount * percent + 50) / 100), listAmount);
	}
	return Math.min(Math.max(coupon.amountOff ?? 0, 0), listAmount);
}

/** The charges a new coupon discounts: 1 (`once`), its periods (`repeating`), or all (null, `forever`). */
export function periodsOf(terms: CouponTerms): number | null {
	if (terms.duration === "once") return 1;
	return terms.duration === "repeating" ? (terms.periods ?? 1) : null;
}

/**
 * A charge's discount as its transaction records it (TransactionDoc.discount); the invoices read exactly this shape.
 * `couponId` is the coupon's id; `amount` is positive minor units.
 */
export interface DiscountLine {
	couponId: number;
	code: string | null;
	amount: number;
}

/** The coupon's discount terms if it applies to a charge of this product and currency now (periods left), else null. */
export function couponInForce(
	coupon: CustomerCoupon | null | undefined,
	charge: { productId: number; currency: string },
): Pick<CouponTerms, "percentOff" | "amountOff"> | null {
	if (!coupon) return null;
	const inForce = coupon.periodsLeft === null || coupon.periodsLeft > 0;
	const forProduct = !coupon.productIds || coupon.productIds.includes(charge.productId);
	const inCurrency = coupon.currency === null || coupon.currency === charge.currency;
	return inForce && forProduct && inCurrency ? { percentOff: coupon.percentOff, amountOff: coupon.amountOff } : null;
}

/**
 * What the customer's coupon does to one charge of `listAmount` for `productId` in `currency`: the discount (null when
 * it gives none: used up, another product or currency, nothing to discount) and the coupon after it (one period less).
 */
export function applyCoupon(
	coupon: CustomerCoupon | null | undefined,
	charge: { productId: number; currency: string; listAmount: number },
): { discount: DiscountLine | null; coupon: CustomerCoupon | null } {
	if (!coupon) return { discount: null, coupon: null };
	const amount = couponInForce(coupon, charge) ? discountFor(coupon, charge.listAmount) : 0;
	if (amount === 0) return { discount: null, coupon };
	const periodsLeft = coupon.periodsLeft === null ? null : coupon.periodsLeft - 1;
	return { discount: { couponId: coupon.couponId, code: coupon.code, amount }, coupon: { ...coupon, periodsLeft } };
}
