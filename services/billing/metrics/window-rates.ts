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

/** Of the failed renewals settled in the window, the share won back (by a retry or a card update). */
export function recoveryRate(window: { recoveredByRetries: number; recoveredByCardUpdate: number; lost: number }): number | null {
	const recovered = window.recoveredByRetries + window.recoveredByCardUpdate;
	return recovered + window.lost > 0 ? recovered / (recovered + window.lost) : null;
}
