// What a renewal bills (issue 36, 37): the product's price × quantity, less the
// coupon's discount (coupons/discount.ts), with its tax (pricing/), less the
// customer's credit. A customer that changed in place has a stored period: its
// renewal bills the plan in force (or the change waiting for the period's end)
// at its product's current price, and the next period is renewPeriod's. One
// that never changed, with no seats, credit or coupon, is billed as before.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { addPeriod } from "../../../shared/time";
import { creditOf, quantityOf, storedPeriod } from "../changes/customer-period";
import { applyCredit } from "../changes/rules/credit";
import { renewPeriod } from "../changes/rules/proration";
import type { SubscriptionPeriod } from "../changes/rules/subscription-period";
import { applyCoupon, type DiscountLine, discountFor } from "../coupons/discount";
import { billedGross, planBilled } from "../pricing/billed";
import type { CustomerDoc } from "../records/customer";
import type { Billed, BilledLine } from "../records/transaction";

export interface RenewalBill {
	/** What the card is charged (0: the credit pays it all). */
	amount: number;
	creditUsed: number;
	productId: number;
	/** The coupon's discount on the list price, before tax and credit; null: none (docs/coupons.md). */
	discount: DiscountLine | null;
	/** The period billed with its tax, for the invoice; its end is set once the next renewal is known (renewal-batch.ts). */
	billed: Billed;
	/** What the customer's fields become once it is paid (none for one that never changed and has no credit or coupon). */
	fields: Partial<Pick<CustomerDoc, "period" | "credit" | "productId" | "quantity" | "coupon" | "periodCoupon">> | null;
}

/** When the period a paid renewal starts ends: its next renewal (null: none, a one-off product). */
export function nextRenewalAfter(customer: CustomerDoc, product: ProductRecord, bill: RenewalBill): Date | null {
	const period = bill.fields?.period;
	if (period) return period.end;
	if (!product.renewal) return null;
	const anchor = customer.billingAnchor ?? customer.nextRenewalTimestamp!;
	// Counted from the anchor's period: a resume (subscriptions/pause.ts) moves the anchor to the period it starts.
	const periods = customer.periodsBilled + 1 - (customer.anchorPeriod ?? 0);
	return addPeriod(anchor, { every: product.renewal.every * periods, unit: product.renewal.unit });
}

/** The product a renewal bills: the one of a change waiting for the period's end, else the customer's. */
export function renewalProductId(customer: CustomerDoc): number {
	return storedPeriod(customer)?.pending?.productId ?? customer.productId;
}

/**
 * What the renewal of `customer` bills, `product` being renewalProductId's, with the usage lines of the period it
 * closes (renewal-usage.ts): one charge, to which the coupon, the tax and the credit apply as a whole.
 */
export function renewalBill(customer: CustomerDoc, product: ProductRecord, usage: BilledLine[] = []): RenewalBill {
	const credit = creditOf(customer);
	const period = storedPeriod(customer);
	const renewed = period && renewPeriod(withPrice(period, product.amountMinor));
	const state = renewed?.ok ? renewed.value.state : null;
	const productId = state ? state.plan.productId : customer.productId;
	const from = customer.nextRenewalTimestamp ?? new Date();
	const plan = state
		? planBilled({ ...product, id: productId }, state.plan.quantity, from, state.end)
		: planBilled(product, quantityOf(customer), from, null);
	const billed = { ...plan, lines: [...plan.lines, ...usage] };
	const list = billed.lines.reduce((sum, line) => sum + line.amount, 0);
	const applied = applyCoupon(customer.coupon, { productId, currency: product.currency, listAmount: list });
	const discount = applied.discount;
	const gross = billedGross(billed, discount?.amount ?? 0);
	const paid = applyCredit(credit, gross);
	const charged = paid.ok ? paid.value.charged : gross;
	const creditLeft = paid.ok ? paid.value.creditLeft : credit;
	const fields: RenewalBill["fields"] = {
		...(creditLeft !== credit ? { credit: creditLeft } : {}),
		...(state ? { period: state, credit: creditLeft, productId, quantity: state.plan.quantity } : {}),
		...couponFields(customer, applied, state, plan.lines[0].amount),
	};
	return {
		amount: charged,
		creditUsed: gross - charged,
		productId,
		discount,
		billed,
		fields: Object.keys(fields).length ? fields : null,
	};
}

/**
 * The coupon after a renewal it discounted (a period less) and the period's discount, which a change prorates (the
 * period was paid less it: docs/coupons.md#proration); a period it did not discount clears the one before's.
 */
function couponFields(
	customer: CustomerDoc,
	applied: ReturnType<typeof applyCoupon>,
	state: SubscriptionPeriod | null,
	planAmount: number,
): Partial<Pick<CustomerDoc, "coupon" | "periodCoupon" | "period">> {
	if (!applied.discount) return customer.periodCoupon ? { periodCoupon: null } : {};
	const terms = { percentOff: customer.coupon!.percentOff, amountOff: customer.coupon!.amountOff };
	// What the plan was paid: less the discount's share on the plan alone (a change prorates the plan, not the usage).
	const planDiscount = discountFor(terms, planAmount);
	const period = state ? { period: { ...state, billedForPeriod: state.billedForPeriod - planDiscount, discount: terms } } : {};
	return { coupon: applied.coupon, periodCoupon: terms, ...period };
}

/** The renewing plan at the product's current price (a price the merchant changed since applies from this renewal). */
function withPrice(period: SubscriptionPeriod, unitAmount: number): SubscriptionPeriod {
	return period.pending ? { ...period, pending: { ...period.pending, unitAmount } } : { ...period, plan: { ...period.plan, unitAmount } };
}
