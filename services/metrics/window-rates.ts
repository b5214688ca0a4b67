// The figures of a window of days (docs/metrics.md#over-a-window), from the
// day counters' sums: pure. A rate is a fraction (0.25 is 25 %), null when
// its denominator is 0; an average is integer minor units, rounded half up.

/** Of everyone who was a subscriber at some time in the window, the share that churned. */
export function churnRate(window: { subscribersAtStart: number; new: number; reactivated: number; churned: number }): number | null {
	const exposed = window.subscribersAtStart + window.new + window.reactivated;
	return exposed > 0 ? window.churned / exposed : null;
}

/**
 * Average revenue per subscriber (ARPU): the MRR per subscriber, weighted by the days of the window, from each day's
 * closing MRR and subscribers: Σ MRR ÷ Σ subscribers, in minor units of the currency, rounded half up.
 */
export function averageRevenuePerSubscriber(days: { mrr: number; subscribers: number }[]): number | null {
	const subscriberDays = days.reduce((sum, day) => sum + day.subscribers, 0);
	if (subscriberDays <= 0) return null;
	const mrrDays = BigInt(days.reduce((sum, day) => sum + day.mrr, 0));
	const whole = BigInt(subscriberDays);
	return Number((2n * mrrDays + whole) / (2n * whole));
}

/**
 * The recovery rate, as the operators' (docs/recovery.md#ops): renewals recovered (by a retry or a card update,
 * a suspended customer's included) ÷ renewals that entered recovery (their period's first decline), in the window.
 */
export function recoveryRate(window: { entered: number; recoveredByRetries: number; recoveredByCardUpdate: number }): number | null {
	return window.entered > 0 ? (window.recoveredByRetries + window.recoveredByCardUpdate) / window.entered : null;
}
