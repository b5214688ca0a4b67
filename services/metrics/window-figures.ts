// The figures of a window of days (a bucket of a series, or the whole range)
// from its days' counts and closing figures: pure (docs/metrics.md#over-a-window).
// Closing MRR and subscribers are the last day's; movements and counts are
// summed; the rates are window-rates.ts's. Net volume is gross less refunds
// less chargebacks (docs/metrics.md#volume).
import type { DayCount, DayCounts, MetricsFigures } from "../../shared/contracts/metrics";
import { averageRevenuePerSubscriber, churnRate, recoveryRate } from "./window-rates";

/** One day of one scope: what it counted, and the scope's MRR and active subscribers at its end (running sums). */
export interface DayFigures {
	counts: Partial<DayCounts>;
	mrr: number;
	subscribers: number;
}

/** Net volume: gross less refunds less chargebacks (negative on a day a large chargeback lands). */
export const netVolume = (sums: Record<"gross" | "refunds" | "chargebacks", number>) => sums.gross - sums.refunds - sums.chargebacks;

type SummedCount = Exclude<DayCount, "mrr" | "subscribers">;

/** Every count that is summed over a window (all but the net changes): the compiler asks for a new count's row. */
const SUMMED: Record<SummedCount, true> = {
	newMrr: true,
	expansionMrr: true,
	contractionMrr: true,
	churnedMrr: true,
	reactivatedMrr: true,
	newSubscribers: true,
	churnedSubscribers: true,
	reactivatedSubscribers: true,
	churnedUnsubscribed: true,
	churnedSuspended: true,
	churnedDisputed: true,
	churnedPaused: true,
	grossVolume: true,
	usageVolume: true,
	refunds: true,
	disputes: true,
	chargebacks: true,
	renewalsAttempted: true,
	renewalsApprovedFirstTry: true,
	renewalsRecoveredByRetries: true,
	renewalsRecoveredByCardUpdate: true,
	renewalsLost: true,
};
export const SUMMED_COUNTS = Object.keys(SUMMED) as SummedCount[];

/** The counts of some days, summed. */
export function sumOf(days: Pick<DayFigures, "counts">[]): Record<SummedCount, number> {
	const sums = Object.fromEntries(SUMMED_COUNTS.map(count => [count, 0])) as Record<SummedCount, number>;
	for (const { counts } of days) for (const count of SUMMED_COUNTS) sums[count] += counts[count] ?? 0;
	return sums;
}

/** A window's figures: `days` in order (at least one), `activeBefore` the active subscribers at the end of the day before its first. */
export function windowFigures(days: DayFigures[], activeBefore: number): MetricsFigures {
	const s = sumOf(days);
	const last = days[days.length - 1];
	return {
		mrr: last.mrr,
		activeSubscribers: last.subscribers,
		newMrr: s.newMrr,
		expansionMrr: s.expansionMrr,
		contractionMrr: s.contractionMrr,
		churnedMrr: s.churnedMrr,
		reactivatedMrr: s.reactivatedMrr,
		netNewMrr: s.newMrr + s.expansionMrr - s.contractionMrr - s.churnedMrr + s.reactivatedMrr,
		newSubscribers: s.newSubscribers,
		churnedSubscribers: s.churnedSubscribers,
		reactivatedSubscribers: s.reactivatedSubscribers,
		churnedBy: {
			unsubscribed: s.churnedUnsubscribed,
			suspended: s.churnedSuspended,
			disputed: s.churnedDisputed,
			paused: s.churnedPaused,
		},
		grossVolume: s.grossVolume,
		usageVolume: s.usageVolume,
		refunds: s.refunds,
		disputes: s.disputes,
		chargebacks: s.chargebacks,
		netVolume: netVolume({ gross: s.grossVolume, refunds: s.refunds, chargebacks: s.chargebacks }),
		renewalsAttempted: s.renewalsAttempted,
		renewalsApprovedFirstTry: s.renewalsApprovedFirstTry,
		renewalsEnteredRecovery: s.renewalsAttempted - s.renewalsApprovedFirstTry,
		renewalsRecoveredByRetries: s.renewalsRecoveredByRetries,
		renewalsRecoveredByCardUpdate: s.renewalsRecoveredByCardUpdate,
		renewalsLost: s.renewalsLost,
		recoveryRate: recoveryRate({
			entered: s.renewalsAttempted - s.renewalsApprovedFirstTry,
			recoveredByRetries: s.renewalsRecoveredByRetries,
			recoveredByCardUpdate: s.renewalsRecoveredByCardUpdate,
		}),
		churnRate: churnRate({
			subscribersAtStart: activeBefore,
			new: s.newSubscribers,
			reactivated: s.reactivatedSubscribers,
			churned: s.churnedSubscribers,
		}),
		arpu: averageRevenuePerSubscriber(days),
	};
}
