// What the metrics see of one customer at one moment (docs/metrics.md): its
// standing (a subscriber, lapsed with a cause, or neither), its product and
// currency, and its MRR. Pure: built from the customer record and its
// product as billing stores them, with no I/O. A subscriber is a customer
// whose first charge was made (not a trial) on a product that renews, while
// it is ACTIVE (a renewal being retried included). Its MRR is the price its
// next charge bills, net of tax, after the coupon that charge takes, normalised
// to a month (monthly-amount.ts); the credit it holds is not subtracted.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { NO_TAX, priceLines } from "../../../shared/tax";
import { type CustomerCoupon, couponInForce, discountFor } from "../coupons/discount";
import type { CustomerDoc } from "../records/customer";
import type { ChurnCause, Contribution } from "../records/metrics";
import { CustomerStatus } from "../states";
import { monthlyAmount } from "./monthly-amount";

export type { ChurnCause, Contribution, Standing } from "../records/metrics";
export { CHURN_CAUSES } from "../records/metrics";

/** What ended a subscription that was UNSUBSCRIBED: the merchant's unsubscribe, or the account's dispute protection. */
export type EndedBy = "merchant" | "dispute";

/** The product fields MRR needs (a ProductRecord has them). */
export type MetricsProduct = Pick<ProductRecord, "id" | "currency" | "amountMinor" | "renewal" | "tax">;

/** A customer as the metrics read it: the fields of its record they use, its product, and what ended it. */
export interface SubscriptionState {
	status: CustomerStatus;
	/** CustomerDoc.periodsBilled: 0 until the first charge (a trial, a hold not captured). */
	periodsBilled: number;
	/** The product in force (CustomerDoc.productId's): a change waiting for the period's end is not in force yet. */
	product: MetricsProduct;
	/** Seats; absent: 1. */
	quantity?: number;
	coupon?: CustomerCoupon | null;
	/** Only read when UNSUBSCRIBED; absent: the merchant. */
	endedBy?: EndedBy | null;
	/** The MID its charges go to (the operators' per-MID figures); absent: none counted by MID. */
	midId?: number;
}

/** The state of a stored customer with its product; `endedBy` says what unsubscribed it, if it was. */
export function subscriptionState(
	customer: Pick<CustomerDoc, "status" | "periodsBilled" | "quantity" | "coupon"> & { midId?: number },
	product: MetricsProduct,
	endedBy: EndedBy | null = null,
): SubscriptionState {
	const { status, periodsBilled, quantity, coupon, midId } = customer;
	return { status, periodsBilled, product, quantity, coupon, endedBy, ...(midId === undefined ? {} : { midId }) };
}

/** The MRR the state's next charge makes, whatever its standing: price × seats less the coupon, net of tax, a month's worth. */
export function mrrOf(state: SubscriptionState): number {
	const { product } = state;
	if (!product.renewal) return 0;
	const list = product.amountMinor * (state.quantity ?? 1);
	const terms = couponInForce(state.coupon, { productId: product.id, currency: product.currency });
	const discount = terms ? discountFor(terms, list) : 0;
	const { net } = priceLines([{ amount: list, rule: product.tax ?? NO_TAX }], discount);
	return monthlyAmount(net, product.renewal);
}

const LAPSED_BY: Partial<Record<CustomerStatus, ChurnCause>> = {
	[CustomerStatus.Paused]: "paused",
	[CustomerStatus.Suspended]: "suspended",
	[CustomerStatus.Unsubscribed]: "unsubscribed",
};

/** The standing and MRR of a state. */
export function contributionOf(state: SubscriptionState): Contribution {
	const base = {
		currency: state.product.currency,
		productId: state.product.id,
		...(state.midId === undefined ? {} : { midId: state.midId }),
	};
	// Never charged, or nothing recurring: never a subscriber, whatever its status.
	if (!state.product.renewal || state.periodsBilled < 1) return { ...base, standing: "none", cause: null, mrr: 0 };
	if (state.status === CustomerStatus.Active) return { ...base, standing: "subscriber", cause: null, mrr: mrrOf(state) };
	const cause = LAPSED_BY[state.status];
	if (!cause) return { ...base, standing: "none", cause: null, mrr: 0 };
	const disputed = state.status === CustomerStatus.Unsubscribed && state.endedBy === "dispute";
	return { ...base, standing: "lapsed", cause: disputed ? "disputed" : cause, mrr: 0 };
}
