// docs/metrics.md's worked example, March 2026 in EUR without tax: its three
// products, the customers' states, and the month's story row by row (the local
// date-time in CET, the customer, its state after). The pure functions'
// examples (metrics.examples.test.ts) and the docs' answer examples
// (metrics-docs.examples.test.ts) both count it.
import type { MetricsProduct, SubscriptionState } from "../../services/billing/entries/subscription-state";
import { CustomerStatus } from "../../services/billing/states";
import type { CouponTerms } from "../../shared/contracts/accounts";

const NO_TAX = { rateBps: 0, inclusive: true };
export const BASIC: MetricsProduct = { id: 1, currency: "EUR", amountMinor: 1000, renewal: { every: 1, unit: "month" }, tax: NO_TAX };
export const PRO: MetricsProduct = { id: 2, currency: "EUR", amountMinor: 10_000, renewal: { every: 1, unit: "year" }, tax: NO_TAX };
export const TEAM: MetricsProduct = { id: 3, currency: "EUR", amountMinor: 600, renewal: { every: 1, unit: "week" }, tax: NO_TAX };

/** SPRING: 20 % off 3 periods, `over` its fields. */
export const coupon = (over: Partial<CouponTerms> & { periodsLeft: number | null }) => ({
	couponId: 7,
	code: "SPRING",
	percentOff: 20,
	amountOff: null,
	currency: null,
	duration: "repeating" as const,
	periods: 3,
	productIds: null,
	...over,
});

/** An ACTIVE customer of `product` whose first charge was made. */
export const paying = (product: MetricsProduct, over: Partial<SubscriptionState> = {}): SubscriptionState => ({
	status: CustomerStatus.Active,
	periodsBilled: 1,
	product,
	...over,
});

const A = (quantity: number) => paying(BASIC, { quantity });

/** On 1 March: A (Basic, 1 seat) and B (Pro, yearly) are subscribers. */
export const MARCH_OPENING: Record<string, SubscriptionState> = { A: A(1), B: paying(PRO) };

/** March's changes: the local date-time, the customer, its state after. */
export const MARCH_STORY: [string, string, SubscriptionState][] = [
	["2026-03-02T10:00", "C", paying(TEAM)],
	["2026-03-04T09:00", "D", paying(BASIC, { periodsBilled: 0 })],
	["2026-03-05T12:00", "E", paying(BASIC, { coupon: coupon({ periodsLeft: 2 }) })],
	["2026-03-10T15:00", "A", A(3)],
	["2026-03-12T08:00", "B", paying(PRO, { status: CustomerStatus.Unsubscribed, endedBy: "dispute" })],
	["2026-03-16T11:00", "C", paying(TEAM, { status: CustomerStatus.Paused })],
	["2026-03-18T09:00", "D", paying(BASIC)],
	["2026-03-24T00:30", "C", paying(TEAM)],
	["2026-03-27T23:30", "A", A(2)],
];

/** The first charges of March's first week, what the cards paid: C's week of Team, E's Basic at 20 % off. */
export const MARCH_FIRST_CHARGES: [string, number, MetricsProduct][] = [
	["2026-03-02T10:00", 600, TEAM],
	["2026-03-05T12:00", 800, BASIC],
];
