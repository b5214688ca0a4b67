// What billing keeps of the subscription metrics (docs/metrics.md): each
// customer's contribution last counted (`CustomerDoc.counted`) and the
// backfill's progress. A thing counted is an entry (MetricsEntry,
// shared/contracts/metrics.ts), written in the same update as the write it
// counts, on the outbox event that announces it; the relay hands it to the
// metrics service (metrics.apply), which applies it once by the event's id
// into its own month counters.
import { Schema } from "mongoose";

export type { DayCount, DayCounts, MetricsEntry, ScopeKey } from "../../../shared/contracts/metrics";

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
	/** The customer's MID, for the per-MID figures (every customer has one); absent: counted by no MID. */
	midId?: number;
	mrr: number;
	/**
	 * On a customer older than the metrics that changed before the backfill counted it: the contribution its first
	 * counted update started from, whose own movements (new, churned) are not in the counters yet. The backfill counts
	 * them and removes it (backfill/metrics-backfill.ts).
	 */
	baseline?: Contribution;
}

/** The collections the backfill walks, each by `_id` (backfill/metrics-backfill.ts). */
export const BACKFILLED = ["customers", "transactions", "disputes"] as const;
export type Backfilled = (typeof BACKFILLED)[number];

/** How far the backfill got in one collection, keyed by its name: every id up to `after` was counted. */
export interface MetricsBackfillDoc {
	_id: Backfilled;
	after: number;
	/** Walked to the ids allocated when it began: a later run does nothing (records since carry their marks). */
	done: boolean;
}

export const metricsBackfillSchema = new Schema<MetricsBackfillDoc>(
	{ _id: String, after: { type: Number, default: 0 }, done: { type: Boolean, default: false } },
	{ versionKey: false },
);
