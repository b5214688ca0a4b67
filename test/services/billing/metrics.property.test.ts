// The metrics' pure functions (services/billing/entries/) against a simple model, with fast-check: a price's month's
// worth is the exact fraction rounded half up (a yearly price within 6 minor units of 12 months' worth); a
// subscription's MRR is the model's; and over random histories of customers on several products and currencies, each
// step's movements are one of each scope's kinds at most, with the model's kind and cause, and the counters they make
// equal, at every step, the MRR and subscribers recomputed from every customer's state.
import fc from "fast-check";
import { applyCoupon, type CustomerCoupon } from "../../../services/billing/coupons/discount";
import { customerEntry } from "../../../services/billing/entries/metrics-entries";
import { monthlyAmount } from "../../../services/billing/entries/monthly-amount";
import { MOVEMENT_KINDS, type Movement, movementsBetween, scopeKey } from "../../../services/billing/entries/mrr-movements";
import {
	type ChurnCause,
	type Contribution,
	contributionOf,
	type EndedBy,
	type MetricsProduct,
	mrrOf,
	type SubscriptionState,
} from "../../../services/billing/entries/subscription-state";
import { CustomerStatus } from "../../../services/billing/states";
import type { RenewalPeriod } from "../../../shared/contracts/accounts";

const UNITS = ["day", "week", "month", "year"] as const;
const PER_YEAR = { day: 365n, week: 52n, month: 12n, year: 1n };
const renewalArb = fc.record({ every: fc.integer({ min: 1, max: 12 }), unit: fc.constantFrom(...UNITS) });

/** The model: amount × units a year ÷ (12 × every), half up, in BigInt. */
function modelMonthly(amount: number, renewal: RenewalPeriod): number {
	if (amount <= 0) return 0;
	const n = BigInt(amount) * PER_YEAR[renewal.unit];
	const d = 12n * BigInt(renewal.every);
	return Number((2n * n + d) / (2n * d));
}

/** Half away from zero, for positive amounts: what the tax rounds by. */
const half = (n: bigint, d: bigint) => Number((2n * n + d) / (2n * d));

/** The model of a subscription's MRR: list, less its discount, net of tax, a month's worth. */
function modelMrr(state: SubscriptionState): number {
	const { product } = state;
	if (!product.renewal) return 0;
	const list = product.amountMinor * (state.quantity ?? 1);
	const c = state.coupon;
	const applies = c && (c.periodsLeft === null || c.periodsLeft > 0) && (!c.productIds || c.productIds.includes(product.id));
	const inCurrency = c && (c.currency === null || c.currency === product.currency);
	let discount = 0;
	if (c && applies && inCurrency)
		discount = c.percentOff !== null ? half(BigInt(list) * BigInt(c.percentOff), 100n) : Math.min(c.amountOff ?? 0, list);
	discount = Math.min(discount, list);
	const after = list - discount;
	const { rateBps, inclusive } = product.tax;
	const net = inclusive && after > 0 ? half(BigInt(after) * 10_000n, BigInt(10_000 + rateBps)) : after;
	return modelMonthly(net, product.renewal);
}

describe("Normalising to a month", () => {
	test("A price's month's worth is the exact fraction rounded half up; a monthly price is its own", () => {
		fc.assert(
			fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), renewalArb, (amount, renewal) => {
				expect(monthlyAmount(amount, renewal)).toBe(modelMonthly(amount, renewal));
				expect(monthlyAmount(amount, { every: 1, unit: "month" })).toBe(amount);
			}),
		);
	});

	test("A yearly price's month's worth × 12 is the yearly price within 6 minor units (half a unit a month)", () => {
		fc.assert(
			fc.property(fc.integer({ min: 1, max: 1_000_000_000_000 }), yearly => {
				const monthly = monthlyAmount(yearly, { every: 1, unit: "year" });
				expect(Math.abs(monthly * 12 - yearly)).toBeLessThanOrEqual(6);
			}),
		);
	});

	test("A higher price is never worth less a month", () => {
		fc.assert(
			fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 1e6 }), renewalArb, (amount, more, renewal) => {
				expect(monthlyAmount(amount + more, renewal)).toBeGreaterThanOrEqual(monthlyAmount(amount, renewal));
			}),
		);
	});
});

// Several products in two currencies, one of them one-off; every tax kind.
const PRODUCTS: MetricsProduct[] = [
	{ id: 1, currency: "EUR", amountMinor: 1000, renewal: { every: 1, unit: "month" }, tax: { rateBps: 0, inclusive: true } },
	{ id: 2, currency: "EUR", amountMinor: 10_000, renewal: { every: 1, unit: "year" }, tax: { rateBps: 2000, inclusive: true } },
	{ id: 3, currency: "EUR", amountMinor: 999, renewal: { every: 2, unit: "week" }, tax: { rateBps: 1900, inclusive: false } },
	{ id: 4, currency: "USD", amountMinor: 1499, renewal: { every: 3, unit: "month" }, tax: { rateBps: 0, inclusive: true } },
	{ id: 5, currency: "USD", amountMinor: 50, renewal: { every: 1, unit: "day" }, tax: { rateBps: 825, inclusive: false } },
	{ id: 6, currency: "EUR", amountMinor: 5000, renewal: null, tax: { rateBps: 0, inclusive: true } },
];
const RECURRING = PRODUCTS.filter(p => p.renewal);

const couponArb: fc.Arbitrary<CustomerCoupon | null> = fc.option(
	fc
		.record({
			couponId: fc.constant(9),
			code: fc.constant("SAVE"),
			off: fc.oneof(
				fc.integer({ min: 1, max: 100 }).map(p => ({ percentOff: p, amountOff: null, currency: null })),
				fc.record({ percentOff: fc.constant(null), amountOff: fc.integer({ min: 1, max: 3000 }), currency: fc.constantFrom("EUR", "USD") }),
			),
			duration: fc.constant("repeating" as const),
			periods: fc.constant(null),
			productIds: fc.option(fc.subarray([1, 2, 3, 4, 5]), { nil: null }),
			periodsLeft: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
		})
		.map(({ off, ...rest }) => ({ ...rest, ...off })),
	{ nil: null },
);

describe("A subscription's MRR", () => {
	test("It is the model's: price × seats less the coupon in force, net of tax, a month's worth; never negative", () => {
		fc.assert(
			fc.property(fc.constantFrom(...PRODUCTS), fc.integer({ min: 1, max: 10_000 }), couponArb, (product, quantity, coupon) => {
				const state: SubscriptionState = { status: CustomerStatus.Active, periodsBilled: 1, product, quantity, coupon };
				expect(mrrOf(state)).toBe(modelMrr(state));
				expect(mrrOf(state)).toBeGreaterThanOrEqual(0);
			}),
		);
	});
});

/** What happens to one customer: what the API and the renewals do, each applied only where billing allows it. */
type Step =
	| { op: "checkout"; productId: number; quantity: number; trial: boolean; coupon: CustomerCoupon | null }
	| { op: "charge" | "pause" | "resume" | "suspend" | "cardUpdate" }
	| { op: "change"; productId: number; quantity: number }
	| { op: "coupon"; coupon: CustomerCoupon | null }
	| { op: "unsubscribe"; endedBy: EndedBy };

const productOf = (id: number) => PRODUCTS.find(p => p.id === id)!;
const charged = (s: SubscriptionState): SubscriptionState => {
	const list = s.product.amountMinor * (s.quantity ?? 1);
	const { coupon } = applyCoupon(s.coupon, { productId: s.product.id, currency: s.product.currency, listAmount: list });
	return { ...s, periodsBilled: s.periodsBilled + 1, coupon };
};

/** The customer after a step; the same state when billing would refuse it. */
function apply(s: SubscriptionState | null, step: Step): SubscriptionState | null {
	if (step.op === "checkout") {
		if (s) return s;
		const opened = {
			status: CustomerStatus.Active,
			periodsBilled: 0,
			product: productOf(step.productId),
			quantity: step.quantity,
			coupon: step.coupon,
		};
		return step.trial ? opened : charged(opened);
	}
	if (!s) return s;
	const is = (status: CustomerStatus) => s.status === status;
	switch (step.op) {
		case "charge":
			return is(CustomerStatus.Active) ? charged(s) : s;
		case "pause":
			return is(CustomerStatus.Active) && s.product.renewal ? { ...s, status: CustomerStatus.Paused } : s;
		case "resume":
			return is(CustomerStatus.Paused) ? { ...s, status: CustomerStatus.Active } : s;
		case "suspend":
			return is(CustomerStatus.Active) ? { ...s, status: CustomerStatus.Suspended } : s;
		case "cardUpdate":
			return is(CustomerStatus.Suspended) ? { ...charged(s), status: CustomerStatus.Active } : s;
		case "change": {
			const to = productOf(step.productId);
			const allowed = is(CustomerStatus.Active) && s.product.renewal && to.renewal && to.currency === s.product.currency;
			return allowed ? { ...s, product: to, quantity: step.quantity } : s;
		}
		case "coupon":
			return is(CustomerStatus.Unsubscribed) ? s : { ...s, coupon: step.coupon };
		case "unsubscribe":
			return is(CustomerStatus.Unsubscribed) ? s : { ...s, status: CustomerStatus.Unsubscribed, endedBy: step.endedBy };
	}
}

const checkoutArb = fc.record({
	op: fc.constant("checkout" as const),
	productId: fc.constantFrom(...PRODUCTS.map(p => p.id)),
	quantity: fc.integer({ min: 1, max: 20 }),
	trial: fc.boolean(),
	coupon: couponArb,
});
/** Every lifecycle step about as often as the others, so pauses meet resumes and suspensions card updates. */
const stepArb: fc.Arbitrary<Step> = fc.oneof(
	checkoutArb,
	...(["charge", "pause", "resume", "suspend", "cardUpdate"] as const).map(op => fc.constant({ op })),
	fc.record({
		op: fc.constant("change" as const),
		productId: fc.constantFrom(...RECURRING.map(p => p.id)),
		quantity: fc.integer({ min: 1, max: 20 }),
	}),
	fc.record({ op: fc.constant("coupon" as const), coupon: couponArb }),
	fc.record({ op: fc.constant("unsubscribe" as const), endedBy: fc.constantFrom<EndedBy>("merchant", "dispute") }),
);

/** The model's subscriber: charged at least once, on a renewing product, ACTIVE. */
const modelSubscriber = (s: SubscriptionState | null) =>
	!!s && s.status === CustomerStatus.Active && s.periodsBilled > 0 && !!s.product.renewal;
const CAUSE_OF: Partial<Record<CustomerStatus, ChurnCause>> = { PAUSED: "paused", SUSPENDED: "suspended", UNSUBSCRIBED: "unsubscribed" };
const modelCause = (s: SubscriptionState) =>
	s.status === CustomerStatus.Unsubscribed && s.endedBy === "dispute" ? "disputed" : CAUSE_OF[s.status];

/** What the model expects in the currency total (`all`) of a customer's step: the kind, the MRR moved and the cause. */
function modelAllMovement(before: SubscriptionState | null, after: SubscriptionState, wasEver: boolean) {
	const was = modelSubscriber(before);
	const is = modelSubscriber(after);
	if (was && is) {
		const delta = modelMrr(after) - modelMrr(before!);
		return delta === 0 ? null : { kind: delta > 0 ? "expansion" : "contraction", mrr: delta, subscribers: 0, cause: null };
	}
	if (is) return { kind: wasEver ? "reactivated" : "new", mrr: modelMrr(after), subscribers: 1, cause: null };
	if (was) return { kind: "churned", mrr: -modelMrr(before!), subscribers: -1, cause: modelCause(after) };
	return null;
}

/** The figures recomputed from every customer's state: MRR and subscribers by scope (`EUR:1`, `EUR:all`…). */
function recomputed(customers: (SubscriptionState | null)[]): Map<string, { mrr: number; subscribers: number }> {
	const figures = new Map<string, { mrr: number; subscribers: number }>();
	for (const s of customers) {
		if (!modelSubscriber(s)) continue;
		for (const productId of [s!.product.id, "all"] as const) {
			const key = scopeKey({ currency: s!.product.currency, productId });
			const figure = figures.get(key) ?? { mrr: 0, subscribers: 0 };
			figures.set(key, { mrr: figure.mrr + modelMrr(s!), subscribers: figure.subscribers + 1 });
		}
	}
	return figures;
}

const nonZero = (figures: Map<string, { mrr: number; subscribers: number }>) =>
	new Map([...figures].filter(([, f]) => f.mrr !== 0 || f.subscribers !== 0));

function checkShape(movements: Movement[]) {
	expect(new Set(movements.map(scopeKey)).size).toBe(movements.length);
	for (const m of movements) {
		expect(MOVEMENT_KINDS).toContain(m.kind);
		expect(m.cause !== null).toBe(m.kind === "churned");
		if (m.kind === "new" || m.kind === "reactivated") expect([m.mrr >= 0, m.subscribers]).toEqual([true, 1]);
		if (m.kind === "churned") expect([m.mrr <= 0, m.subscribers]).toEqual([true, -1]);
		if (m.kind === "expansion") expect(m.mrr >= 0 && m.subscribers >= 0).toBe(true);
		if (m.kind === "contraction") expect(m.mrr <= 0 && m.subscribers <= 0).toBe(true);
	}
}

describe("Movements over random histories", () => {
	// Each of 6 customers checks out first (a trial or a charge), then anything happens to any of them.
	const history = fc
		.tuple(
			fc.array(checkoutArb, { minLength: 6, maxLength: 6 }),
			fc.array(fc.record({ customer: fc.integer({ min: 0, max: 5 }), step: stepArb, minutes: fc.integer({ min: 0, max: 600 }) }), {
				maxLength: 80,
			}),
		)
		.map(([checkouts, later]) => [...checkouts.map((step, customer) => ({ customer, step: step as Step, minutes: 0 })), ...later]);

	test("Each step moves each scope at most once, by one kind, as the model says; the day counters always equal the figures recomputed from the customers", () => {
		fc.assert(
			fc.property(history, steps => {
				const customers: (SubscriptionState | null)[] = Array(6).fill(null);
				const counted: (Contribution | null)[] = Array(6).fill(null);
				const ever = Array(6).fill(false);
				const days = new Map<string, { mrr: number; subscribers: number }>();
				let at = Date.UTC(2026, 2, 28, 20);
				for (const { customer, step, minutes } of steps) {
					at += minutes * 60_000;
					const before = customers[customer];
					const after = apply(before, step);
					if (!after) continue;
					const contribution = contributionOf(after);
					const movements = movementsBetween(counted[customer], contribution);

					checkShape(movements);
					const all = movements.find(m => m.productId === "all" && m.currency === after.product.currency) ?? null;
					expect(all && { kind: all.kind, mrr: all.mrr, subscribers: all.subscribers, cause: all.cause }).toEqual(
						modelAllMovement(before, after, ever[customer]),
					);
					// The day counters, as the relay adds the entry up: `<currency>:<scope>:<day>`.
					const entry = customerEntry(42, counted[customer], contribution, new Date(at));
					for (const [scope, counts] of Object.entries(entry?.counts ?? {})) {
						if (scope.startsWith("m")) continue;
						const key = `${entry!.currency}:${scope === "all" ? "all" : scope.slice(1)}:${entry!.day}`;
						const day = days.get(key) ?? { mrr: 0, subscribers: 0 };
						days.set(key, { mrr: day.mrr + (counts?.mrr ?? 0), subscribers: day.subscribers + (counts?.subscribers ?? 0) });
					}
					customers[customer] = after;
					counted[customer] = contribution;
					ever[customer] ||= modelSubscriber(after);

					// Summing each scope's day counters gives, at every step, what the customers' states add up to.
					const summed = new Map<string, { mrr: number; subscribers: number }>();
					for (const [key, day] of days) {
						const scope = key.split(":").slice(0, 2).join(":");
						const figure = summed.get(scope) ?? { mrr: 0, subscribers: 0 };
						summed.set(scope, { mrr: figure.mrr + day.mrr, subscribers: figure.subscribers + day.subscribers });
					}
					expect(nonZero(summed)).toEqual(nonZero(recomputed(customers)));
				}
			}),
			{ numRuns: 300 },
		);
	});

	test("Across a switch of product, the currency's total moves by the difference, and the products' movements add up to it", () => {
		fc.assert(
			fc.property(fc.constantFrom(...RECURRING), fc.constantFrom(...RECURRING), fc.integer({ min: 1, max: 50 }), (from, to, quantity) => {
				fc.pre(from.currency === to.currency && from.id !== to.id);
				const state = (product: MetricsProduct) => ({ status: CustomerStatus.Active, periodsBilled: 3, product, quantity });
				const movements = movementsBetween(contributionOf(state(from)), contributionOf(state(to)));
				const total = movements.filter(m => m.productId === "all").reduce((sum, m) => sum + m.mrr, 0);
				const products = movements.filter(m => m.productId !== "all").reduce((sum, m) => sum + m.mrr, 0);
				expect(total).toBe(mrrOf(state(to)) - mrrOf(state(from)));
				expect(products).toBe(total);
				expect(movements.filter(m => m.productId !== "all").map(m => m.subscribers)).toEqual([-1, 1]);
			}),
		);
	});
});
