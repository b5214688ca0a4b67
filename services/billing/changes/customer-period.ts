// A customer's period as a change in place counts it (rules/): the one its
// first change stored and its renewals moved on, or, for a customer that never
// changed, one derived from its product and its renewal schedule.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { addPeriod } from "../../../shared/time";
import { discountFor } from "../coupons/discount";
import type { CustomerDoc } from "../records/customer";
import type { SubscriptionPeriod } from "./rules/subscription-period";

export const quantityOf = (customer: Pick<CustomerDoc, "quantity">): number => customer.quantity ?? 1;
export const creditOf = (customer: Pick<CustomerDoc, "credit">): number => customer.credit ?? 0;

/** The stored period, while it is the one the schedule is in (its end is the next renewal); else null. */
export function storedPeriod(customer: CustomerDoc): SubscriptionPeriod | null {
	const { period, nextRenewalTimestamp } = customer;
	if (!period || !nextRenewalTimestamp) return null;
	return new Date(period.end).getTime() === nextRenewalTimestamp.getTime() ? revivePeriod(period) : null;
}

/**
 * The period of a customer that never changed (or whose stored one is stale), from its schedule: period n − 1 (n the
 * periods billed) runs from anchor + (n − 1) intervals to the next renewal, at the product's current price × quantity,
 * and was paid in full. Null when it has none: a trial (nothing billed yet), or no renewal.
 */
export function derivedPeriod(customer: CustomerDoc, product: ProductRecord): SubscriptionPeriod | null {
	const renewal = product.renewal;
	const end = customer.nextRenewalTimestamp;
	if (!renewal || !end || customer.periodsBilled < 1) return null;
	// Period n is due at the anchor + (n - anchorPeriod) intervals (a resume moves the anchor to the renewal it sets).
	// Right after a resume the period ends at the anchor (index -1), and later ones count from that anchor, so month
	// ends do not drift (31 July less a month is 30 June, but 31 July plus one is 31 August).
	const periodIndex = customer.periodsBilled - 1 - (customer.anchorPeriod ?? 0);
	const anchor = customer.billingAnchor ?? customer.subscriptionTimestamp;
	const start = periodIndex === 0 ? anchor : addPeriod(anchor, { every: renewal.every * periodIndex, unit: renewal.unit });
	const quantity = quantityOf(customer);
	const price = { productId: product.id, unitAmount: product.amountMinor, quantity };
	return {
		currency: product.currency,
		plan: { ...price, renewal: { ...renewal } },
		pending: null,
		anchor,
		periodIndex,
		start,
		end,
		segments: [{ ...price, from: start }],
		// What was paid for it: less the discount of the coupon its charge used (docs/coupons.md#proration).
		billedForPeriod:
			product.amountMinor * quantity -
			discountFor(customer.periodCoupon ?? { percentOff: null, amountOff: 0 }, product.amountMinor * quantity),
		discount: customer.periodCoupon ?? null,
	};
}

/** The customer's period now: the stored one, else derived; null in a trial. */
export function currentPeriod(customer: CustomerDoc, product: ProductRecord): SubscriptionPeriod | null {
	return storedPeriod(customer) ?? derivedPeriod(customer, product);
}

/** Dates come back from the database as Dates, from a Mixed field too; a period written by JSON (a test) has strings. */
export function revivePeriod(period: SubscriptionPeriod): SubscriptionPeriod {
	const date = (value: Date | string) => new Date(value);
	return {
		...period,
		anchor: date(period.anchor),
		start: date(period.start),
		end: date(period.end),
		segments: period.segments.map(segment => ({ ...segment, from: date(segment.from) })),
	};
}
