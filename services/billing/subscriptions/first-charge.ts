// What a checkout's first payment asks of the card: the product's price less
// the coupon's discount (coupons/discount.ts), with its tax (pricing/), and
// the first period billed, for its invoice.
import type { FirstPaymentInput } from "../../../shared/contracts/billing";
import { NO_TAX } from "../../../shared/tax";
import { addPeriod } from "../../../shared/time";
import { applyCoupon, type CustomerCoupon, type DiscountLine } from "../coupons/discount";
import { billedGross, planBilled } from "../pricing/billed";
import type { Billed } from "../records/transaction";

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
	/** When it is paid, in the account's time: the first period starts there. */
	now: Date,
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
