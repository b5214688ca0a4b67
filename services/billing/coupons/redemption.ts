// A customer's coupon against the accounts service's redemption count
// (services/accounts/coupons.ts): the checkout took the redemption before the
// payment; billing keeps it when the first payment is approved and gives it
// back when it is declined or abandoned, by the checkout or by the checkout
// recovery after a crash. Both are keyed by the customer, so settling twice
// changes nothing. The coupon is on the PENDING customer from its insert, so
// whatever settles it knows what to give back.
import type { FirstPaymentInput } from "../../../shared/contracts/billing";
import { addPeriod } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { Billed } from "../documents/transaction";
import { billedGross, planBilled } from "../pricing/billed";
import { NO_TAX } from "../pricing/tax";
import { applyCoupon, type CustomerCoupon, type DiscountLine } from "./discount";

/** A customer as these read it (documents/ imports this folder's types, so this folder names none of its). */
interface CouponHolder {
	_id: number;
	coupon?: CustomerCoupon | null;
}

/** What a checkout's first payment asks of the card, and what its coupon becomes once it is paid. */
export interface FirstCharge {
	/** The card's part: the price less the discount, with its tax (pricing/). */
	amount: number;
	discount: DiscountLine | null;
	/** The coupon after the charge (a period less), or null when the charge did not use it. */
	coupon: CustomerCoupon | null;
	/** The first period billed, for its invoice. */
	billed: Billed;
}

/**
 * A checkout's charge or hold, less the coupon's discount, with its tax. A hold is discounted as its capture will be,
 * but uses no period: the capture does (the renewal engine). A SCHEDULE checkout charges nothing now.
 */
export function firstCharge(
	customer: { coupon?: CustomerCoupon | null; productId: number },
	product: FirstPaymentInput["product"],
	now = new Date(),
): FirstCharge {
	const to = product.billing === "CHARGE" && product.renewal ? addPeriod(now, product.renewal) : null;
	const billed = planBilled({ id: customer.productId, amountMinor: product.amountMinor, tax: product.tax ?? NO_TAX }, 1, now, to);
	if (product.billing === "SCHEDULE") return { amount: 0, discount: null, coupon: null, billed };
	const applied = applyCoupon(customer.coupon, {
		productId: customer.productId,
		currency: product.currency,
		listAmount: product.amountMinor,
	});
	const amount = billedGross(billed, applied.discount?.amount ?? 0);
	if (product.billing === "PREAUTHORIZE") return { amount, discount: applied.discount, coupon: null, billed };
	return { amount, discount: applied.discount, coupon: applied.discount ? applied.coupon : null, billed };
}

/** The first payment was approved: the redemption is kept. Best effort: a lost confirmation only leaves its customer named as pending. */
export async function confirmCoupon(deps: BillingDeps, customer: CouponHolder): Promise<void> {
	if (!customer.coupon) return;
	await deps.coupons.confirm({ couponId: customer.coupon.couponId, customerId: customer._id }).catch(() => undefined);
}

/** The first payment ended unpaid: the redemption is given back before the customer's settlement, so a crash in between repeats it. */
export async function releaseCoupon(deps: BillingDeps, customer: CouponHolder): Promise<void> {
	if (!customer.coupon) return;
	await deps.coupons.release({ couponId: customer.coupon.couponId, customerId: customer._id });
}
