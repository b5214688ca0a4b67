// The coupon's discount (services/billing/coupons/discount.ts) against a simple model, with fast-check: never
// negative, never more than the charge, a percentage rounded half up; and over a sequence of renewals the sum charged
// is the sum of list prices less the sum of discounts, exactly, with the coupon used for exactly its periods.
import fc from "fast-check";
import { applyCoupon, type CustomerCoupon, discountFor, periodsOf } from "../../../services/billing/coupons/discount";
import type { CouponTerms } from "../../../shared/contracts/accounts";

const amount = fc.integer({ min: 1, max: 1_000_000_000_000 });
const percent = fc.integer({ min: 1, max: 100 });

/** The model: a percentage as an exact fraction, rounded half up with BigInt. */
const modelPercent = (list: number, p: number) => Number((BigInt(list) * BigInt(p) * 2n + 100n) / 200n);

const terms = (over: Partial<CouponTerms>): CouponTerms => ({
	couponId: 7,
	code: "SAVE",
	percentOff: null,
	amountOff: null,
	currency: null,
	duration: "forever",
	periods: null,
	productIds: null,
	...over,
});

describe("discountFor", () => {
	test("A percentage is the list amount × percent / 100 rounded half up, between 0 and the amount", () => {
		fc.assert(
			fc.property(amount, percent, (list, p) => {
				const discount = discountFor({ percentOff: p, amountOff: null }, list);
				expect(discount).toBe(modelPercent(list, p));
				expect(discount).toBeGreaterThanOrEqual(0);
				expect(discount).toBeLessThanOrEqual(list);
				expect(Number.isSafeInteger(discount)).toBe(true);
			}),
		);
	});

	test("A fixed amount takes itself or the whole charge, whichever is less; nothing from nothing", () => {
		fc.assert(
			fc.property(amount, amount, (list, off) => {
				expect(discountFor({ percentOff: null, amountOff: off }, list)).toBe(Math.min(off, list));
				expect(discountFor({ percentOff: null, amountOff: off }, 0)).toBe(0);
			}),
		);
	});
});

describe("A renewal sequence", () => {
	const coupon = fc.oneof(
		fc.record({ percentOff: percent, amountOff: fc.constant(null) }),
		fc.record({ percentOff: fc.constant(null), amountOff: fc.integer({ min: 1, max: 100_000 }) }),
	);
	const duration = fc.oneof(
		fc.constant({ duration: "once" as const, periods: null }),
		fc.integer({ min: 1, max: 12 }).map(periods => ({ duration: "repeating" as const, periods })),
		fc.constant({ duration: "forever" as const, periods: null }),
	);

	test("Sum charged = sum of list prices − sum of discounts, exactly, and the coupon discounts exactly its periods", () => {
		fc.assert(
			fc.property(
				coupon,
				duration,
				fc.array(fc.integer({ min: 1, max: 10_000_000 }), { minLength: 1, maxLength: 30 }),
				(off, d, prices) => {
					const t = terms({ ...off, ...d });
					let current: CustomerCoupon | null = { ...t, periodsLeft: periodsOf(t) };
					// The model: charges left (Infinity: for ever); a charge the coupon takes nothing off uses none.
					let left = d.duration === "once" ? 1 : d.duration === "repeating" ? d.periods! : Number.POSITIVE_INFINITY;
					let charged = 0;
					let discounts = 0;
					for (const listAmount of prices) {
						const applied = applyCoupon(current, { productId: 1, currency: "EUR", listAmount });
						const discount = applied.discount?.amount ?? 0;
						const modelled = left > 0 ? discountFor(t, listAmount) : 0;
						if (modelled > 0) left--;
						expect(discount).toBe(modelled);
						charged += listAmount - discount;
						discounts += discount;
						current = applied.coupon;
					}
					expect(charged).toBe(prices.reduce((a, b) => a + b, 0) - discounts);
					expect(current?.periodsLeft ?? null).toBe(Number.isFinite(left) ? left : null);
				},
			),
		);
	});

	test("A coupon for other products, or in another currency, discounts nothing and keeps its periods", () => {
		fc.assert(
			fc.property(amount, percent, (listAmount, p) => {
				const forOther = { ...terms({ percentOff: p, productIds: [2] }), periodsLeft: 1 };
				expect(applyCoupon(forOther, { productId: 1, currency: "EUR", listAmount })).toEqual({ discount: null, coupon: forOther });
				const inUsd = { ...terms({ amountOff: 5, currency: "USD" }), periodsLeft: null };
				expect(applyCoupon(inUsd, { productId: 1, currency: "EUR", listAmount }).discount).toBeNull();
			}),
		);
	});
});
