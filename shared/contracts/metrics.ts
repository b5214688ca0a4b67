// The subscription metrics' contract (docs/metrics.md): what billing answers
// for GET /api/metrics and the dashboard's charts. Types only; billing and its
// callers (gateway, dashboard pages) both import them. Amounts are integer
// minor units of the series' currency; rates are fractions (0.25 is 25 %).

export const METRICS_GRANULARITIES = ["day", "week", "month"] as const;
export type MetricsGranularity = (typeof METRICS_GRANULARITIES)[number];

/** What billing.metrics takes (the gateway validates the query string into it). */
export interface MetricsQuery {
	accountId: number;
	/** First and last day of the range, YYYY-MM-DD in TIME_ZONE, both included. */
	from: string;
	to: string;
	granularity: MetricsGranularity;
	/** One product's figures; absent: all the account's products. */
	productId?: number;
	/** One MID's figures (the operators' view); absent: all. Never with productId. */
	midId?: number;
	/** One currency; absent: every currency the account has figures in. */
	currency?: string;
}

/** Why a subscriber stopped being one (docs/metrics.md#subscribers). */
export interface ChurnedBy {
	unsubscribed: number;
	suspended: number;
	disputed: number;
	paused: number;
}

/** The figures of one bucket (a day, a week or a month, clipped to the range), or of the whole range. */
export interface MetricsFigures {
	/** MRR and active subscribers at the end of the bucket's last day. */
	mrr: number;
	activeSubscribers: number;
	/** MRR movements in the bucket (contraction and churned as positive amounts). */
	newMrr: number;
	expansionMrr: number;
	contractionMrr: number;
	churnedMrr: number;
	reactivatedMrr: number;
	/** new + expansion − contraction − churned + reactivated. */
	netNewMrr: number;
	newSubscribers: number;
	churnedSubscribers: number;
	reactivatedSubscribers: number;
	churnedBy: ChurnedBy;
	/** Volume, tax included (docs/metrics.md#volume); disputes are shown, not subtracted. */
	grossVolume: number;
	refunds: number;
	disputes: number;
	chargebacks: number;
	netVolume: number;
	/** Renewals and recovery (docs/metrics.md#renewals-and-recovery). */
	renewalsAttempted: number;
	renewalsApprovedFirstTry: number;
	renewalsEnteredRecovery: number;
	renewalsRecoveredByRetries: number;
	renewalsRecoveredByCardUpdate: number;
	renewalsLost: number;
	/** (recovered by retries + by card update) ÷ entered recovery; null when none entered. */
	recoveryRate: number | null;
	/** Churned ÷ (active at the bucket's start + new + reactivated); null when none. */
	churnRate: number | null;
	/** Average revenue per subscriber: Σ closing MRR ÷ Σ closing subscribers over the bucket's days; null when none. */
	arpu: number | null;
}

export interface MetricsPoint extends MetricsFigures {
	/** The bucket's first and last day within the range (YYYY-MM-DD); weeks start on Monday. */
	from: string;
	to: string;
}

export interface MetricsSeries {
	currency: string;
	points: MetricsPoint[];
	/** The whole range as one window. */
	total: MetricsFigures;
}

export interface MetricsAnswer {
	from: string;
	to: string;
	granularity: MetricsGranularity;
	productId: number | null;
	midId: number | null;
	timeZone: string;
	/** One per currency, by currency code; none when the account has no figures in the range. */
	series: MetricsSeries[];
}
