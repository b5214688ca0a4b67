// A period's price as a month's worth (docs/metrics.md#normalising-to-a-month):
// pure, integer minor units. A month is a twelfth of a year, a year has 52
// weeks and 365 days, so one period of `every` units is worth, per month:
//   month: amount ÷ every          year: amount ÷ (12 × every)
//   week:  amount × 52 ÷ (12 × every)   day: amount × 365 ÷ (12 × every)
// rounded once, half up, to the minor unit (BigInt: price × seats × 365 may
// pass 2^53). A monthly price is its own MRR, exactly.
import type { RenewalPeriod } from "../../../shared/contracts/accounts";

/** Units of each interval in a year: a month's worth is amount × perYear ÷ (12 × every). */
const PER_YEAR: Record<RenewalPeriod["unit"], bigint> = { day: 365n, week: 52n, month: 12n, year: 1n };

/** What `amount` minor units charged every `renewal` come to in a month, rounded half up; 0 for nothing or less. */
export function monthlyAmount(amount: number, renewal: RenewalPeriod): number {
	if (!Number.isSafeInteger(amount) || amount <= 0) return 0;
	const every = Number.isSafeInteger(renewal.every) && renewal.every > 0 ? BigInt(renewal.every) : 1n;
	const numerator = BigInt(amount) * PER_YEAR[renewal.unit];
	const denominator = 12n * every;
	return Number((2n * numerator + denominator) / (2n * denominator));
}
