// Proration of a subscription's change in place (issue 36): pure functions,
// integer minor units, no floating point in money.
//
// Time is counted in whole seconds, as Stripe counts it. Days would make a
// change at 23:59 and one at 00:01 the next day cost the same, and a "day"
// is a different share of a 28-day and of a 31-day month. A period's length
// is its real length in seconds: its dates come from shared/time.ts's
// addPeriod in the service's time zone (TIME_ZONE, CET by default), so a
// month with the change to summer time is 3,600 s shorter, and one with the
// change back 3,600 s longer, and a change's share of it follows.
//
// Cumulative rounding. The exact value of a period is
//     Σ unitAmount × quantity × segmentSeconds / periodSeconds
// over the prices it has been billed at (its segments), a rational number.
// It is rounded half up to the minor unit ONCE, as a whole; what a change
// makes due is that rounded total minus what was billed for the period so
// far (billedForPeriod): positive, a charge; negative, a credit. Each change
// thus absorbs the rounding remainder of the ones before it, and after any
// sequence of changes in a period the buyer has paid exactly the rounded
// exact value of the period: no minor unit is made or lost, however many
// changes there were. A credit is always for what was paid for the unused
// time, never for a list price. The quote's two lines (the new plan's charge
// for the rest of the period, rounded on its own, and the unused time's
// credit) add up to what is due: the credit line is the remainder.
//
// A change of interval (monthly to yearly) starts a new period at the
// change: the old period's value up to the change is rounded the same way
// (its time counted against the old period's full length), the rest of what
// was billed for it is credited, and the new period is charged in full.
//
// A period discounted by a coupon (its `discount`) is valued at its rounded
// total less that coupon's discount of it (coupons/discount.ts, discountFor,
// half up), the same rule at every change, so the cumulative sums stay exact:
// the buyer has paid the period's discounted value, no more, no less. The
// new plan's charge line is discounted the same way; the credit line is the
// remainder, as always (docs/coupons.md#proration).
//
// docs/subscriptions.md explains all this to merchants, with worked examples.

import { config } from "../../../../shared/config";
import type { RenewalPeriod } from "../../../../shared/contracts/accounts";
import { addPeriod } from "../../../../shared/time";
import { discountFor } from "../../coupons/discount";
import { type ChangeResult, failed, ok } from "./change-errors";
import { changeError, stateError } from "./change-validation";
import { fullAmount, roundHalfUp, secondsBetween, secondsOf, segmentsNumerator, toSafeNumber } from "./exact-amount";
import type { ChangeMode, PeriodDiscount, Plan, PlanChange, PlanPrice, SubscriptionPeriod } from "./subscription-period";

/** One line of a priced change (minor units): a charge is positive, a credit negative. */
export interface ChangeLine extends PlanPrice {
	kind: "unused_time_credit" | "new_plan_charge" | "renewal";
	from: Date;
	to: Date;
	amount: number;
}

export interface NextRenewal extends PlanPrice {
	at: Date;
	/** unitAmount × quantity, before any credit the customer has. */
	amount: number;
}

export interface PricedChange {
	mode: ChangeMode;
	/** The change is to another interval: a new period starts at `at` (now) or at the renewal (at_period_end). */
	intervalChange: boolean;
	/** Their amounts add up to due − credit; none for a change without proration or at the period's end. */
	lines: ChangeLine[];
	/** To charge now (≥ 0), before the customer's credit is used (applyCredit). */
	due: number;
	/** To add to the customer's credit (≥ 0). At most one of due and credit is not 0. */
	credit: number;
	nextRenewal: NextRenewal;
	/** The period after the change, to store in place of the one priced. */
	state: SubscriptionPeriod;
}

export interface PeriodRenewal {
	/** To charge at the renewal, before the customer's credit is used. */
	amount: number;
	line: ChangeLine;
	/** The new period. */
	state: SubscriptionPeriod;
}

const priceOf = ({ productId, unitAmount, quantity }: PlanPrice): PlanPrice => ({ productId, unitAmount, quantity });
const planOf = (change: PlanChange): Plan => ({ ...priceOf(change), renewal: { ...change.renewal } });
const sameRenewal = (a: RenewalPeriod, b: RenewalPeriod) => a.every === b.every && a.unit === b.unit;

/** A value less the period's coupon discount of it (unchanged without one, or when it is too large for a number). */
function discounted(value: bigint, discount: PeriodDiscount | null | undefined): bigint {
	if (!discount) return value;
	const amount = toSafeNumber(value);
	return amount === null ? value : value - BigInt(discountFor(discount, amount));
}

/**
 * What changing `state`'s subscription to `change` at `at` costs, and the
 * period after it. `zone` is the time zone periods are counted in (a new
 * interval's end). Bad input is an error answer, never an exception.
 */
export function priceChange(
	state: SubscriptionPeriod,
	change: PlanChange,
	at: Date,
	zone: string = config().timeZone,
): ChangeResult<PricedChange> {
	const error = stateError(state) ?? changeError(state, change, at);
	if (error) return failed(error);
	const plan = planOf(change);
	const intervalChange = !sameRenewal(plan.renewal, state.plan.renewal);
	switch (change.mode) {
		case "at_period_end":
			return priced(change.mode, intervalChange, [], { ...state, pending: plan });
		case "now_without_proration":
			if (intervalChange) return failed({ code: "INTERVAL_CHANGE_WITHOUT_PRORATION" });
			return priced(change.mode, false, [], { ...state, plan, pending: null });
		case "now_prorated":
			return intervalChange ? newIntervalNow(state, plan, at, zone, change.discount) : prorateNow(state, plan, at);
	}
}

/** Same interval: the new price from `at` to the period's end; the period's rounded total less what was billed for it is due. */
function prorateNow(state: SubscriptionPeriod, plan: Plan, at: Date): ChangeResult<PricedChange> {
	const periodSeconds = secondsBetween(state.start, state.end);
	const before = state.segments.filter(segment => secondsOf(segment.from) < secondsOf(at));
	const segments = [...before, { ...priceOf(plan), from: at }];
	const total = discounted(roundHalfUp(segmentsNumerator(segments, state.end), periodSeconds), state.discount);
	const net = total - BigInt(state.billedForPeriod);
	const charge = discounted(roundHalfUp(fullAmount(plan) * secondsBetween(at, state.end), periodSeconds), state.discount);
	const unused = state.segments[state.segments.length - 1];
	const lines = [
		{ kind: "unused_time_credit" as const, price: unused, from: at, to: state.end, amount: net - charge },
		{ kind: "new_plan_charge" as const, price: plan, from: at, to: state.end, amount: charge },
	];
	const billedForPeriod = toSafeNumber(total);
	if (billedForPeriod === null) return failed({ code: "AMOUNT_TOO_LARGE", field: "billedForPeriod" });
	return priced("now_prorated", false, lines, { ...state, plan, pending: null, segments, billedForPeriod });
}

/** Another interval: the old period ends at `at` (its unused part credited, cumulatively), a new one starts there, charged in full. */
function newIntervalNow(
	state: SubscriptionPeriod,
	plan: Plan,
	at: Date,
	zone: string,
	discount: PeriodDiscount | null | undefined,
): ChangeResult<PricedChange> {
	const periodSeconds = secondsBetween(state.start, state.end);
	const usedValue = discounted(roundHalfUp(segmentsNumerator(state.segments, at), periodSeconds), state.discount);
	const end = addPeriod(at, plan.renewal, zone);
	const charge = discounted(fullAmount(plan), discount);
	const unused = state.segments[state.segments.length - 1];
	const lines = [
		{ kind: "unused_time_credit" as const, price: unused, from: at, to: state.end, amount: usedValue - BigInt(state.billedForPeriod) },
		{ kind: "new_plan_charge" as const, price: plan, from: at, to: end, amount: charge },
	];
	const next: SubscriptionPeriod = {
		currency: state.currency,
		plan,
		pending: null,
		anchor: at,
		periodIndex: 0,
		start: at,
		end,
		segments: [{ ...priceOf(plan), from: at }],
		billedForPeriod: Number(charge),
		discount: discount ?? null,
	};
	return priced("now_prorated", true, lines, next);
}

interface ExactLine {
	kind: ChangeLine["kind"];
	price: PlanPrice;
	from: Date;
	to: Date;
	amount: bigint;
}

/** The priced change: the lines as numbers, due or credit from their sum, and the next renewal of the new state. */
function priced(mode: ChangeMode, intervalChange: boolean, exact: ExactLine[], state: SubscriptionPeriod): ChangeResult<PricedChange> {
	const net = toSafeNumber(exact.reduce((sum, line) => sum + line.amount, 0n));
	const amounts = exact.map(line => toSafeNumber(line.amount));
	if (net === null || amounts.includes(null)) return failed({ code: "AMOUNT_TOO_LARGE", field: "lines" });
	const lines = exact.map((line, i) => ({ kind: line.kind, ...priceOf(line.price), from: line.from, to: line.to, amount: amounts[i]! }));
	const renewing = state.pending ?? state.plan;
	const nextRenewal = { ...priceOf(renewing), at: state.end, amount: Number(fullAmount(renewing)) };
	// 0 − 0 is −0 in a number; `|| 0` keeps the answers plain zeros.
	return ok({ mode, intervalChange, lines, due: Math.max(net, 0) || 0, credit: Math.max(-net, 0) || 0, nextRenewal, state });
}

/**
 * The period after `state`'s, at its end: the pending change's plan if there
 * is one, else the plan in force, charged in full. Period n + 1 of the same
 * interval ends at anchor + n + 2 intervals; a new interval starts a new
 * anchor at the renewal.
 */
export function renewPeriod(state: SubscriptionPeriod, zone: string = config().timeZone): ChangeResult<PeriodRenewal> {
	const error = stateError(state);
	if (error) return failed(error);
	const plan = state.pending ?? state.plan;
	const sameInterval = sameRenewal(plan.renewal, state.plan.renewal);
	const anchor = sameInterval ? state.anchor : state.end;
	const periodIndex = sameInterval ? state.periodIndex + 1 : 0;
	const end = addPeriod(anchor, { every: plan.renewal.every * (periodIndex + 1), unit: plan.renewal.unit }, zone);
	const amount = Number(fullAmount(plan));
	const next: SubscriptionPeriod = {
		currency: state.currency,
		plan,
		pending: null,
		anchor,
		periodIndex,
		start: state.end,
		end,
		segments: [{ ...priceOf(plan), from: state.end }],
		billedForPeriod: amount,
	};
	return ok({ amount, line: { kind: "renewal", ...priceOf(plan), from: state.end, to: end, amount }, state: next });
}
