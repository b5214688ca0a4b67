// What priceChange and renewPeriod check before they count: the period is
// well formed, the change is in its currency with a positive quantity and a
// valid interval, and `at` falls inside the period after its last change.
import { PERIOD_UNITS, type RenewalPeriod } from "../../../../shared/contracts/accounts";
import type { ChangeError } from "./change-errors";
import { fullAmount, secondsOf } from "./exact-amount";
import { CHANGE_MODES, type PlanChange, type PlanPrice, type SubscriptionPeriod } from "./subscription-period";

const isDate = (value: unknown): value is Date => value instanceof Date && !Number.isNaN(value.getTime());

function renewalError(renewal: RenewalPeriod | null | undefined, field: string): ChangeError | null {
	const valid = renewal && Number.isSafeInteger(renewal.every) && renewal.every >= 1 && PERIOD_UNITS.includes(renewal.unit);
	return valid ? null : { code: "INVALID_RENEWAL", field };
}

/** A price's checks: a non-negative integer amount, a positive integer quantity, and their product a safe integer. */
export function priceError(price: PlanPrice, field: string): ChangeError | null {
	if (!Number.isSafeInteger(price.unitAmount) || price.unitAmount < 0) {
		return { code: "INVALID_AMOUNT", field: `${field}.unitAmount`, value: price.unitAmount };
	}
	if (!Number.isSafeInteger(price.quantity) || price.quantity < 1) return { code: "INVALID_QUANTITY", quantity: price.quantity };
	if (fullAmount(price) > BigInt(Number.MAX_SAFE_INTEGER)) return { code: "AMOUNT_TOO_LARGE", field: `${field}.unitAmount × quantity` };
	return null;
}

function segmentsError(state: SubscriptionPeriod): ChangeError | null {
	const { segments } = state;
	if (segments.length === 0) return { code: "INVALID_STATE", reason: "a period has at least one segment" };
	for (const [i, segment] of segments.entries()) {
		if (!isDate(segment.from)) return { code: "INVALID_DATE", field: `segments[${i}].from` };
		const error = priceError(segment, `segments[${i}]`);
		if (error) return error;
		const previous = i === 0 ? state.start : segments[i - 1].from;
		if (secondsOf(segment.from) < secondsOf(previous)) return { code: "INVALID_STATE", reason: "segments are in time order" };
	}
	if (secondsOf(segments[0].from) !== secondsOf(state.start))
		return { code: "INVALID_STATE", reason: "the first segment starts the period" };
	if (secondsOf(segments[segments.length - 1].from) >= secondsOf(state.end)) {
		return { code: "INVALID_STATE", reason: "segments start before the period ends" };
	}
	return null;
}

/** The period's checks. */
export function stateError(state: SubscriptionPeriod): ChangeError | null {
	for (const field of ["anchor", "start", "end"] as const) if (!isDate(state[field])) return { code: "INVALID_DATE", field };
	if (secondsOf(state.end) <= secondsOf(state.start)) return { code: "INVALID_STATE", reason: "a period ends after it starts" };
	// -1: the period before the anchor, which a resume's renewal ends (changes/customer-period.ts).
	if (!Number.isSafeInteger(state.periodIndex) || state.periodIndex < -1)
		return { code: "INVALID_STATE", reason: "periodIndex is -1 or more" };
	if (!Number.isSafeInteger(state.billedForPeriod))
		return { code: "INVALID_AMOUNT", field: "billedForPeriod", value: state.billedForPeriod };
	const plans = [{ plan: state.plan, field: "plan" }, ...(state.pending ? [{ plan: state.pending, field: "pending" }] : [])];
	for (const { plan, field } of plans) {
		const error = priceError(plan, field) ?? renewalError(plan.renewal, `${field}.renewal`);
		if (error) return error;
	}
	return segmentsError(state);
}

/** The change's checks against its period, and `at`'s: inside [start, end) counted in whole seconds, not before the period's last change. */
export function changeError(state: SubscriptionPeriod, change: PlanChange, at: Date): ChangeError | null {
	if (change.currency !== state.currency) return { code: "CURRENCY_MISMATCH", expected: state.currency, got: change.currency };
	if (!CHANGE_MODES.includes(change.mode)) return { code: "INVALID_MODE", mode: String(change.mode) };
	const error = priceError(change, "change") ?? renewalError(change.renewal, "change.renewal");
	if (error) return error;
	if (!isDate(at)) return { code: "INVALID_DATE", field: "at" };
	if (secondsOf(at) < secondsOf(state.start) || secondsOf(at) >= secondsOf(state.end)) {
		return { code: "AT_OUTSIDE_PERIOD", at, start: state.start, end: state.end };
	}
	const lastChange = state.segments[state.segments.length - 1].from;
	if (secondsOf(at) < secondsOf(lastChange)) return { code: "AT_BEFORE_LAST_CHANGE", at, lastChange };
	return null;
}
