// Property tests of services/billing/changes/rules/proration.ts: random sequences of
// changes (random prices, 1–50 seats, every mode, other intervals) at random
// instants, and renewals, against a model that integrates the billed price
// over time with exact rationals (BigInt) and rounds each period's integral
// half up, once. Over every sequence, what the buyer paid less the credit they
// still hold equals the model's amount to the cent, and no credit is ever
// negative. Starts include months of 28, 29, 30 and 31 days, and the months
// CET (the service's default TIME_ZONE) changes to and from summer time in.
// Each change is paid as the API pays it (changes/rules/change-amounts.ts), and
// that step is also checked alone, with tax, against a model of its own: the
// lines' gross add up to the total, due is never negative and what the total
// is below zero goes to the credit, so lines, due and credit reconcile.
//
// PROPERTY_RUNS sets the runs per property (default 300), PROPERTY_SEED the seed
// (default: fast-check's random one, printed with any counterexample).
import fc from "fast-check";
import { DateTime } from "luxon";
import { changeAmounts } from "../../../services/billing/changes/rules/change-amounts";
import { applyCredit } from "../../../services/billing/changes/rules/credit";
import { priceChange, renewPeriod } from "../../../services/billing/changes/rules/proration";
import type { ChangeMode, PlanChange, SubscriptionPeriod } from "../../../services/billing/changes/rules/subscription-period";
import type { RenewalPeriod } from "../../../shared/contracts/accounts";
import { NO_TAX } from "../../../shared/tax";
import { firstPeriod, local } from "../../factories/subscription-period";

const ZONE = "CET";
const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const settings = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

// ---- The model: the billed price as a function of time, integrated exactly ----

/** n / d rounded half up, for n ≥ 0 and d > 0. */
const roundHalfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);
const second = (ms: number) => BigInt(Math.floor(ms / 1000));
/** The calendar, from luxon directly: anchor + k intervals in the zone. */
const calendar = (anchor: number, renewal: RenewalPeriod, k: number) =>
	DateTime.fromMillis(anchor, { zone: ZONE })
		.plus({ [`${renewal.unit}s`]: renewal.every * k })
		.toMillis();
const sameInterval = (a: RenewalPeriod, b: RenewalPeriod) => a.every === b.every && a.unit === b.unit;

interface ModelPlan {
	rate: bigint;
	renewal: RenewalPeriod;
}

/** What the buyer owes: each closed period's ∫ rate dt / its full length, rounded; the open period's in full. */
class Model {
	closed = 0n;
	plan: ModelPlan;
	pending: ModelPlan | null = null;
	anchor: number;
	index = 0;
	start: number;
	end: number;
	/** Where the billed rate changes in the open period: (second, rate per period). */
	rates: { at: bigint; rate: bigint }[];

	constructor(start: number, plan: ModelPlan) {
		this.plan = plan;
		this.anchor = start;
		this.start = start;
		this.end = calendar(start, plan.renewal, 1);
		this.rates = [{ at: second(start), rate: plan.rate }];
	}

	/** ∫ rate dt over [start, until) in minor units × seconds. */
	private integral(until: number): bigint {
		const to = second(until);
		return this.rates.reduce((sum, { at, rate }, i) => {
			const next = i + 1 < this.rates.length ? this.rates[i + 1].at : to;
			const end = next < to ? next : to;
			return end > at ? sum + rate * (end - at) : sum;
		}, 0n);
	}

	private length = () => second(this.end) - second(this.start);
	/** The open period's value, rounded once. */
	openValue = () => roundHalfUp(this.integral(this.end), this.length());
	owed = () => this.closed + this.openValue();

	private open(start: number, plan: ModelPlan, anchor: number, index: number) {
		this.plan = plan;
		this.pending = null;
		this.anchor = anchor;
		this.index = index;
		this.start = start;
		this.end = calendar(anchor, plan.renewal, index + 1);
		this.rates = [{ at: second(start), rate: plan.rate }];
	}

	change(plan: ModelPlan, mode: ChangeMode, at: number) {
		if (mode === "at_period_end") this.pending = plan;
		else if (mode === "now_without_proration") [this.plan, this.pending] = [plan, null];
		else if (!sameInterval(plan.renewal, this.plan.renewal)) {
			this.closed += roundHalfUp(this.integral(at), this.length());
			this.open(at, plan, at, 0);
		} else {
			this.rates.push({ at: second(at), rate: plan.rate });
			[this.plan, this.pending] = [plan, null];
		}
	}

	renew() {
		this.closed += this.openValue();
		const next = this.pending ?? this.plan;
		const same = sameInterval(next.renewal, this.plan.renewal);
		this.open(this.end, next, same ? this.anchor : this.end, same ? this.index + 1 : 0);
	}
}

// ---- Generators ----

const INTERVALS: RenewalPeriod[] = [
	{ every: 1, unit: "month" },
	{ every: 1, unit: "year" },
	{ every: 3, unit: "month" },
	{ every: 2, unit: "week" },
	{ every: 1, unit: "day" },
];
/** Month lengths 28–31, and the months with CET's clock changes (2025-10-26, 2026-03-29, 2026-10-25), at midnight and in the changed hour. */
const NOTABLE_STARTS = [
	"2026-02-01T00:00",
	"2024-02-01T00:00",
	"2026-04-01T00:00",
	"2026-01-01T00:00",
	"2026-01-31T10:00",
	"2026-03-01T00:00",
	"2026-03-15T02:30",
	"2026-02-28T23:59:59",
	"2025-10-01T00:00",
	"2025-09-26T02:30",
	"2026-10-25T02:30",
].map(iso => local(iso, ZONE).getTime());
const start = fc.oneof(
	fc.constantFrom(...NOTABLE_STARTS),
	fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2032, 0, 1) }),
	fc.integer({ min: Date.UTC(2020, 0, 1) / 1000, max: Date.UTC(2032, 0, 1) / 1000 }).map(s => s * 1000),
);
const FRACTION = 2 ** 20;
const price = fc.oneof(
	{ weight: 8, arbitrary: fc.integer({ min: 0, max: 100_000 }) },
	{ weight: 1, arbitrary: fc.integer({ min: 0, max: 1_000_000_000_000 }) },
);
const interval = fc.oneof({ weight: 4, arbitrary: fc.constant(INTERVALS[0]) }, { weight: 1, arbitrary: fc.constantFrom(...INTERVALS) });
const change = fc.record({
	kind: fc.constant("change" as const),
	/** How far into what is left of the period, in 2^-20ths. */
	step: fc.oneof(fc.integer({ min: 0, max: FRACTION - 1 }), fc.constantFrom(0, 1, FRACTION / 2, FRACTION - 1)),
	ms: fc.integer({ min: 0, max: 999 }),
	productId: fc.integer({ min: 1, max: 5 }),
	unitAmount: price,
	quantity: fc.integer({ min: 1, max: 50 }),
	mode: fc.constantFrom<ChangeMode>("now_prorated", "now_prorated", "now_without_proration", "at_period_end"),
	renewal: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: interval }),
});
const step = fc.oneof({ weight: 4, arbitrary: change }, { weight: 1, arbitrary: fc.constant({ kind: "renew" as const }) });
const scenario = fc.record({
	start,
	renewal: interval,
	unitAmount: price,
	quantity: fc.integer({ min: 1, max: 50 }),
	steps: fc.array(step, { minLength: 1, maxLength: 25 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;
type ChangeStep = Extract<Scenario["steps"][number], { kind: "change" }>;

// ---- The system under test, driven like the billing service will drive it ----

function answer<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
	if (!result.ok) throw new Error(`unexpected error ${JSON.stringify(result.error)}`);
	return result.value;
}

interface Wallet {
	paid: number;
	credit: number;
}

/** Charges `due` after the credit, or adds `credit`; the wallet's credit never goes negative. */
function settle(wallet: Wallet, due: number, credit: number): void {
	const applied = answer(applyCredit(wallet.credit, due));
	wallet.paid += applied.charged;
	wallet.credit = applied.creditLeft + credit;
	expect(applied.charged).toBeGreaterThanOrEqual(0);
	expect(wallet.credit).toBeGreaterThanOrEqual(0);
}

/** A change's instant: `step` of the way from the clock to the period's end, with `ms` milliseconds. */
function instantOf(clock: number, state: SubscriptionPeriod, { step, ms }: ChangeStep): number {
	const from = Math.floor(Math.max(clock, state.start.getTime()) / 1000);
	const to = Math.floor(state.end.getTime() / 1000);
	return (from + Math.floor(((to - from) * step) / FRACTION)) * 1000 + ms;
}

function runChange(state: SubscriptionPeriod, item: ChangeStep, at: number, wallet: Wallet, model: Model) {
	const planChange: PlanChange = { ...item, currency: "EUR", renewal: item.renewal ?? state.plan.renewal };
	const result = priceChange(state, planChange, new Date(at), ZONE);
	const otherInterval = !sameInterval(planChange.renewal, state.plan.renewal);
	if (item.mode === "now_without_proration" && otherInterval) {
		expect(result).toEqual({ ok: false, error: { code: "INTERVAL_CHANGE_WITHOUT_PRORATION" } });
		return state;
	}
	const quote = answer(result);
	// due or credit, not both; the lines add up to it exactly; a credit never exceeds what was paid for the period
	expect(quote.due * quote.credit).toBe(0);
	expect(quote.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(quote.due - quote.credit);
	expect(quote.credit).toBeLessThanOrEqual(Math.max(state.billedForPeriod, 0));
	// Paid as the API pays it: the lines (no tax here) make the same due or credit, the wallet's credit first.
	const paid = changeAmounts(
		quote.lines.map(line => ({ amount: line.amount, rule: NO_TAX })),
		wallet.credit,
	)!;
	expect([paid.total, paid.due, paid.creditAdded]).toEqual([quote.due - quote.credit, quote.due, quote.credit]);
	expect(paid.charged + paid.creditUsed).toBe(paid.due);
	wallet.paid += paid.charged;
	wallet.credit = paid.creditAfter;
	expect(wallet.credit).toBeGreaterThanOrEqual(0);
	model.change({ rate: BigInt(item.unitAmount) * BigInt(item.quantity), renewal: planChange.renewal }, item.mode, at);
	return quote.state;
}

function run({ start, renewal, unitAmount, quantity, steps }: Scenario): void {
	let state = firstPeriod(new Date(start), { unitAmount, quantity, renewal, zone: ZONE });
	const wallet: Wallet = { paid: state.billedForPeriod, credit: 0 };
	const model = new Model(start, { rate: BigInt(unitAmount) * BigInt(quantity), renewal });
	let clock = start;
	for (const item of steps) {
		if (item.kind === "renew") {
			const renewal = answer(renewPeriod(state, ZONE));
			settle(wallet, renewal.amount, 0);
			model.renew();
			clock = state.end.getTime();
			state = renewal.state;
		} else {
			clock = instantOf(clock, state, item);
			state = runChange(state, item, clock, wallet, model);
		}
		// The period after each step: billed its model value rounded once, on the model's calendar
		expect([state.start.getTime(), state.end.getTime()]).toEqual([model.start, model.end]);
		expect(BigInt(state.billedForPeriod)).toBe(model.openValue());
	}
	expect(BigInt(wallet.paid - wallet.credit)).toBe(model.owed());
}

describe("Proration against a model integrating the price over time", () => {
	test("When any sequence of changes and renewals runs, then paid − credit left equals the model's rounded integrals to the cent, and no credit goes negative", () => {
		fc.assert(fc.property(scenario, run), settings);
	});

	test("When a prorated change's new plan is charged for the rest of the period, then its line is that share of the price rounded half up", () => {
		const item = change.filter(c => c.mode === "now_prorated" && c.renewal === null);
		fc.assert(
			fc.property(start, interval, price, item, (from, renewal, unitAmount, c) => {
				const state = firstPeriod(new Date(from), { unitAmount, renewal, zone: ZONE });
				const at = instantOf(from, state, c);
				const quote = answer(priceChange(state, { ...c, currency: "EUR", renewal }, new Date(at), ZONE));
				const charge = quote.lines.find(line => line.kind === "new_plan_charge")!.amount;
				const period = second(state.end.getTime()) - second(state.start.getTime());
				const exact2 = 2n * BigInt(c.unitAmount) * BigInt(c.quantity) * (second(state.end.getTime()) - second(at));
				// |charge − exact| ≤ ½, and exactly ½ rounds up
				expect(2n * BigInt(charge) * period - exact2 <= period && exact2 - 2n * BigInt(charge) * period < period).toBe(true);
			}),
			settings,
		);
	});

	test("When a change's lines are taxed and paid from credit, then Σ gross = total = due − creditAdded, due is never negative, and the credit reconciles, as the model says", () => {
		// The model, in BigInt: an excluded tax is added to its line, rounded half away from zero; an included one adds
		// nothing. Amounts up to €9bn: amount × rate stays a safe integer, as shared/tax.ts needs.
		const halfAway = (n: bigint, d: bigint) => (n < 0n ? -1n : 1n) * (((n < 0n ? -n : n) * 2n + d) / (2n * d));
		const line = fc.record({
			amount: fc.oneof(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: -900_000_000_000, max: 900_000_000_000 })),
			rule: fc.record({ rateBps: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 10_000 })), inclusive: fc.boolean() }),
		});
		const credit = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_000_000_000 }));
		fc.assert(
			fc.property(fc.array(line, { minLength: 1, maxLength: 2 }), credit, (lines, held) => {
				const gross = lines.map(({ amount, rule }) =>
					rule.inclusive ? BigInt(amount) : BigInt(amount) + halfAway(BigInt(amount) * BigInt(rule.rateBps), 10_000n),
				);
				const total = gross.reduce((sum, g) => sum + g, 0n);
				const due = total > 0n ? total : 0n;
				const used = due < BigInt(held) ? due : BigInt(held);

				const amounts = changeAmounts(lines, held);

				expect(amounts).toEqual({
					gross: gross.map(Number),
					total: Number(total),
					due: Number(due),
					creditAdded: Number(total < 0n ? -total : 0n),
					creditUsed: Number(used),
					charged: Number(due - used),
					creditAfter: Number(BigInt(held) - used + (total < 0n ? -total : 0n)),
				});
				expect(amounts!.due - amounts!.creditAdded).toBe(amounts!.total);
				expect(amounts!.due * amounts!.creditAdded).toBe(0);
			}),
			settings,
		);
	});

	test("When credit is applied to an amount due, then charged + credit used = the amount, and neither is negative", () => {
		const amount = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
		fc.assert(
			fc.property(amount, amount, (credit, due) => {
				const { charged, creditLeft } = answer(applyCredit(credit, due));
				expect(charged).toBeGreaterThanOrEqual(0);
				expect(creditLeft).toBeGreaterThanOrEqual(0);
				expect(charged + (credit - creditLeft)).toBe(due);
				expect(charged === 0 || creditLeft === 0).toBe(true);
			}),
			settings,
		);
	});
});
