// The subscription metrics' contract (docs/metrics.md): the entries billing
// computes and hands to the metrics service (metrics.apply), and what the
// metrics service answers for GET /api/metrics and the dashboard's charts.
// Billing, the metrics service and the callers (gateway, dashboard pages) all
// import them. Amounts are integer minor units of the series' currency; rates
// are fractions (0.25 is 25 %).

export const METRICS_GRANULARITIES = ["day", "week", "month"] as const;
export type MetricsGranularity = (typeof METRICS_GRANULARITIES)[number];

/** What metrics.figures takes (the gateway validates the query string into it). */
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
	/** Of grossVolume, what paid for usage (docs/metrics.md#usage): never part of MRR. */
	usageVolume: number;
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

/** What one day counts in one scope: sums of what happened that day, in minor units or numbers of things; absent is 0. */
export interface DayCounts {
	/** The scope's MRR and subscribers after less before: each day's net change (closing figures are their running sums). */
	mrr: number;
	subscribers: number;
	newMrr: number;
	expansionMrr: number;
	/** Positive amounts, as the churned MRR. */
	contractionMrr: number;
	churnedMrr: number;
	reactivatedMrr: number;
	newSubscribers: number;
	churnedSubscribers: number;
	reactivatedSubscribers: number;
	churnedUnsubscribed: number;
	churnedSuspended: number;
	churnedDisputed: number;
	churnedPaused: number;
	grossVolume: number;
	usageVolume: number;
	refunds: number;
	disputes: number;
	chargebacks: number;
	renewalsAttempted: number;
	renewalsApprovedFirstTry: number;
	renewalsRecoveredByRetries: number;
	renewalsRecoveredByCardUpdate: number;
	renewalsLost: number;
}

export type DayCount = keyof DayCounts;

/**
 * Where a count is kept: `all` (every product of the currency), `p<productId>` (one product) or `m<midId>` (one
 * MID, the operators' view). Every count is kept in all three.
 */
export type ScopeKey = "all" | `p${number}` | `m${number}`;

/**
 * Something to count: the counts of one day of one account and currency, by scope. Billing writes it on the outbox
 * event written in the same update as the change it counts (OutboxEvent.metrics); the metrics service applies it
 * under that event's id.
 */
export interface MetricsEntry {
	accountId: number;
	currency: string;
	/** YYYY-MM-DD in TIME_ZONE. */
	day: string;
	counts: Partial<Record<ScopeKey, Partial<DayCounts>>>;
}

/** An entry to apply, under the id of the outbox event that carries it. */
export interface Applicable {
	eventId: string;
	entry: MetricsEntry;
}

/** `<accountId>:<currency>:<YYYY-MM>`: the month document an entry of that day is counted in. */
export const monthKey = (accountId: number, currency: string, month: string) => `${accountId}:${currency}:${month}`;

export interface MetricsActions {
	/**
	 * Billing's outbox relay, before the events that carry `entries` leave the outbox: each entry is counted once by
	 * its event's id, however often it is applied. `released`: events of earlier calls that have left the outbox since
	 * (their ids, under the month key they were counted in), whose ids the counters may forget.
	 */
	"metrics.apply": {
		params: { entries: Applicable[]; released?: { eventId: string; month: string }[] };
		result: { applied: number };
	};
	/** A sandbox account's test clock moved to `at` (ISO 8601): this node reads the account's figures by it from now on. */
	"metrics.clockMoved": { params: { accountId: number; at: string }; result: { heard: true } };
}
