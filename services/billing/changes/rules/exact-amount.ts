// Exact arithmetic for proration: a period's value is a rational number
// (numerator in minor units × seconds, denominator the period's seconds),
// kept in BigInt because a price × a quantity × a year's seconds passes 2^53
// (€10,000,000.00 × 50 seats × 31,536,000 s ≈ 1.6 × 10^18). It is rounded to
// the minor unit once, half up, at the end.
import type { PlanPrice, PlanSegment } from "./subscription-period";

/** A date's whole seconds since the epoch: proration counts seconds, and milliseconds are dropped. */
export function secondsOf(date: Date): bigint {
	return BigInt(Math.floor(date.getTime() / 1000));
}

/** Seconds from `from` to `to` (whole seconds of each). */
export function secondsBetween(from: Date, to: Date): bigint {
	return secondsOf(to) - secondsOf(from);
}

/** floor(n / d) for d > 0 (BigInt division truncates toward zero). */
function floorDiv(numerator: bigint, denominator: bigint): bigint {
	const quotient = numerator / denominator;
	return numerator % denominator !== 0n && numerator < 0n ? quotient - 1n : quotient;
}

/** numerator / denominator rounded to the nearest integer, a half up (toward +∞): 0.5 → 1, 2.5 → 3, −0.5 → 0. denominator > 0. */
export function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
	return floorDiv(2n * numerator + denominator, 2n * denominator);
}

/** unitAmount × quantity: one full period of the price, in minor units. */
export function fullAmount(price: PlanPrice): bigint {
	return BigInt(price.unitAmount) * BigInt(price.quantity);
}

/**
 * Σ unitAmount × quantity × seconds over the segments, each running to the
 * next one's start, the last to `until`; segments starting at or after
 * `until` count nothing. Divided by the period's seconds, it is the value of
 * the period's time up to `until` (minor units).
 */
export function segmentsNumerator(segments: readonly PlanSegment[], until: Date): bigint {
	const end = secondsOf(until);
	let sum = 0n;
	segments.forEach((segment, i) => {
		const next = i + 1 < segments.length ? secondsOf(segments[i + 1].from) : end;
		const to = next < end ? next : end;
		const from = secondsOf(segment.from);
		if (to > from) sum += fullAmount(segment) * (to - from);
	});
	return sum;
}

/** A BigInt amount as a number, if it is one a number holds exactly. */
export function toSafeNumber(amount: bigint): number | null {
	return amount <= BigInt(Number.MAX_SAFE_INTEGER) && amount >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(amount) : null;
}
