// A period a coupon discounted (docs/coupons.md#proration), against the same changes on the undiscounted period as
// the model: after any sequence of prorated changes in one period, what the buyer paid for it (the first charge
// less the discount, plus each change's due, less each change's credit) is the period's list value less the coupon's
// discount of it (discountFor, half up), exactly; a quote's lines add up to what it makes due; and no change ever
// credits more than was paid. PROPERTY_RUNS sets the runs (default 300).
import fc from "fast-check";
import { priceChange } from "../../../services/billing/changes/rules/proration";
import type { PeriodDiscount, SubscriptionPeriod } from "../../../services/billing/changes/rules/subscription-period";
import { discountFor } from "../../../services/billing/coupons/discount";
import { changeTo, firstPeriod, local } from "../../factories/subscription-period";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const ZONE = "CET";

const discount: fc.Arbitrary<PeriodDiscount> = fc.oneof(
	fc.record({ percentOff: fc.integer({ min: 1, max: 100 }), amountOff: fc.constant(null) }),
	fc.record({ percentOff: fc.constant(null), amountOff: fc.integer({ min: 1, max: 50_000 }) }),
);
const change = fc.record({
	unitAmount: fc.integer({ min: 0, max: 100_000 }),
	quantity: fc.integer({ min: 1, max: 20 }),
	/** Where in what is left of the period it happens, in millionths. */
	share: fc.integer({ min: 1, max: 999_999 }),
});

function answer<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
	if (!result.ok) throw new Error(JSON.stringify(result.error));
	return result.value;
}

test("When a discounted period changes any number of times, then the buyer has paid its list value less the coupon's discount of it, exactly, and no credit exceeds what was paid", () => {
	fc.assert(
		fc.property(fc.integer({ min: 1, max: 100_000 }), discount, fc.array(change, { minLength: 1, maxLength: 8 }), (price, d, changes) => {
			const start = local("2026-03-10T09:30");
			let list: SubscriptionPeriod = firstPeriod(start, { unitAmount: price, zone: ZONE });
			let paid: SubscriptionPeriod = { ...list, billedForPeriod: price - discountFor(d, price), discount: d };
			let paidSoFar = paid.billedForPeriod;
			let at = start.getTime();
			for (const [i, c] of changes.entries()) {
				at += Math.max(1000, Math.floor(((list.end.getTime() - at) * c.share) / 1_000_000));
				if (at >= list.end.getTime() - 1000) break;
				const to = changeTo(c.unitAmount, { productId: i + 2, quantity: c.quantity });
				const model = answer(priceChange(list, to, new Date(at), ZONE));
				const quote = answer(priceChange(paid, to, new Date(at), ZONE));
				// The lines add up to what is due or credited; a credit is never more than was paid.
				expect(quote.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(quote.due - quote.credit);
				expect(quote.credit).toBeLessThanOrEqual(paidSoFar);
				paidSoFar += quote.due - quote.credit;
				list = model.state;
				paid = quote.state;
				const listValue = list.billedForPeriod;
				expect(paid.billedForPeriod).toBe(listValue - discountFor(d, listValue));
				expect(paidSoFar).toBe(paid.billedForPeriod);
			}
		}),
		{ numRuns: RUNS },
	);
});

test("When a change to another interval starts a new period the coupon still discounts, then that period is charged less its discount and keeps it", () => {
	fc.assert(
		fc.property(fc.integer({ min: 1, max: 100_000 }), discount, fc.integer({ min: 1, max: 100_000 }), (price, d, yearly) => {
			const start = local("2026-01-31T23:15");
			const paid: SubscriptionPeriod = { ...firstPeriod(start, { unitAmount: price, zone: ZONE }), discount: d };
			paid.billedForPeriod = price - discountFor(d, price);
			const to = { ...changeTo(yearly, { renewal: { every: 1, unit: "year" } }), discount: d };
			const quote = answer(priceChange(paid, to, local("2026-02-10T12:00"), ZONE));
			expect(quote.state.billedForPeriod).toBe(yearly - discountFor(d, yearly));
			expect(quote.state.discount).toEqual(d);
			expect(quote.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(quote.due - quote.credit);
			expect(quote.credit).toBeLessThanOrEqual(paid.billedForPeriod);
		}),
		{ numRuns: RUNS },
	);
});
