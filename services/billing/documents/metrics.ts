// The subscription metrics' counters (docs/metrics.md#days-and-keys): one
// document per account, currency and month, holding each day's counts in each
// scope, so a range of days is a few reads by key, never a scan. A thing
// counted is an entry (MetricsEntry), written in the same update as the change
// it counts, on the outbox event that announces it, and applied once by the
// relay: the month's `applied` keeps the ids of the events applied, so an
// entry applied again after a crash changes nothing (metrics/metrics-counters.ts).
import { Schema } from "mongoose";

/** Why a subscriber stopped being one. */
export const CHURN_CAUSES = ["unsubscribed", "suspended", "disputed", "paused"] as const;
export type ChurnCause = (typeof CHURN_CAUSES)[number];

/**
 * - `none`: not a subscriber, and never counted as one (pending, declined, abandoned, a trial, a one-off product);
 * - `subscriber`: counted, with its MRR;
 * - `lapsed`: was a subscriber and is not now, for `cause`.
 */
export type Standing = "none" | "subscriber" | "lapsed";

/** One customer's share of the metrics: what the counters add up (`mrr` is 0 unless a subscriber). */
export interface Contribution {
	standing: Standing;
	/** Set exactly when `standing` is `lapsed`. */
	cause: ChurnCause | null;
	currency: string;
	productId: number;
	/** The customer's MID, for the per-MID figures; absent on contributions counted before the MIDs were. */
	midId?: number;
	mrr: number;
	/**
	 * On a customer older than the metrics that changed before the backfill counted it: the contribution its first
	 * counted change started from, whose own movements (new, churned) are not in the counters yet. The backfill counts
	 * them and removes it (backfill/metrics-backfill.ts).
	 */
	baseline?: Contribution;
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

/** A month's counters of one account in one currency, keyed `<accountId>:<currency>:<YYYY-MM>` (month in TIME_ZONE). */
export interface MetricsMonthDoc {
	_id: string;
	accountId: number;
	currency: string;
	month: string;
	/** `days.<DD>.<scope>.<count>`. */
	days: Record<string, Record<string, Partial<DayCounts>>>;
	/** The ids of the events whose entries were applied; each is dropped once its event has left the outbox. */
	applied: Record<string, number>;
}

/** Per account (keyed by its id): the first month with counts in each currency, from which closing figures are summed. */
export interface MetricsIndexDoc {
	_id: number;
	first: Record<string, string>;
}

/** The collections the backfill walks, each by `_id` (backfill/metrics-backfill.ts). */
export const BACKFILLED = ["customers", "transactions", "disputes"] as const;
export type Backfilled = (typeof BACKFILLED)[number];

/** How far the backfill got in one collection, keyed by its name: every id up to `after` was counted. */
export interface MetricsBackfillDoc {
	_id: Backfilled;
	after: number;
	/** Walked to the ids allocated when it began: a later run does nothing (documents since carry their marks). */
	done: boolean;
}

/**
 * Something to count: the counts of one day of one account and currency, by scope. It rides on the outbox event
 * written in the same update as the change it counts (OutboxEvent.metrics), and is applied under that event's id.
 */
export interface MetricsEntry {
	accountId: number;
	currency: string;
	/** YYYY-MM-DD in TIME_ZONE. */
	day: string;
	counts: Partial<Record<ScopeKey, Partial<DayCounts>>>;
}

export const metricsMonthSchema = new Schema<MetricsMonthDoc>(
	{
		_id: String,
		accountId: Number,
		currency: String,
		month: String,
		days: { type: Schema.Types.Mixed, default: {} },
		applied: { type: Schema.Types.Mixed, default: {} },
	},
	{ versionKey: false, minimize: false },
);

export const metricsIndexSchema = new Schema<MetricsIndexDoc>(
	{ _id: Number, first: { type: Schema.Types.Mixed, default: {} } },
	{ versionKey: false, minimize: false },
);

export const metricsBackfillSchema = new Schema<MetricsBackfillDoc>(
	{ _id: String, after: { type: Number, default: 0 }, done: { type: Boolean, default: false } },
	{ versionKey: false },
);
