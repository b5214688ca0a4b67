// Counters read by key: each MID's counts by day (mid_stats), each MID's
// monthly cap counter (mid_caps) and each account's recovery counts by month
// (recovery_stats).
import { Schema } from "mongoose";

/** A MID's counts for one day (mid-stats.ts), keyed `<midId>:<YYYY-MM-DD>`; amounts in minor units by currency. */
export interface MidStatsDoc {
	_id: string;
	midId: number;
	day: string;
	sales?: number;
	declined?: number;
	refunds?: number;
	disputes?: number;
	chargebacks?: number;
	salesAmount?: Record<string, number>;
	refundAmount?: Record<string, number>;
	disputeAmount?: Record<string, number>;
}

export const midStatsSchema = new Schema<MidStatsDoc>(
	{
		_id: String,
		midId: Number,
		day: String,
		sales: Number,
		declined: Number,
		refunds: Number,
		disputes: Number,
		chargebacks: Number,
		salesAmount: Schema.Types.Mixed,
		refundAmount: Schema.Types.Mixed,
		disputeAmount: Schema.Types.Mixed,
	},
	{ versionKey: false, minimize: false },
);

/** A charge in flight's reservation on a MID's cap counter (mid-stats/cap-reservations.ts). */
export interface HeldReservation {
	/** The charge's idempotency key (its key in `reservations` has the dots as underscores). */
	key: string;
	amount: number;
	currency: string;
	/** When it was taken: one older than the review age is settled by what the processor says of its key. */
	at: Date;
}

/**
 * A MID's cap counter for one month (mid-stats/cap-reservations.ts), keyed `<midId>:<YYYY-MM>`: what the month's sales and the
 * charges in flight take of its cap, in minor units by currency. Every write is one conditional update of it.
 */
export interface MidCapDoc {
	_id: string;
	midId: number;
	month: string;
	/** Sales approved plus the reservations made, by currency. */
	taken: Record<string, number>;
	/** The reservations of charges in flight, by their charge's key. */
	reservations: Record<string, HeldReservation>;
}

export const midCapSchema = new Schema<MidCapDoc>(
	{ _id: String, midId: Number, month: String, taken: Schema.Types.Mixed, reservations: Schema.Types.Mixed },
	{ versionKey: false, minimize: false },
);

/** Recovery counts of an account for a month (recovery.ts), keyed `<accountId>:<YYYY-MM>`. */
export interface RecoveryStatsDoc {
	_id: string;
	accountId: number;
	month: string;
	/** Renewals declined for the first time in their period. */
	entered: number;
	/** Renewals approved after a decline in their period. */
	recovered: number;
	/** Minor units recovered, by currency. */
	revenue: Record<string, number>;
}

export const recoveryStatsSchema = new Schema<RecoveryStatsDoc>(
	{ _id: String, accountId: Number, month: String, entered: Number, recovered: Number, revenue: Schema.Types.Mixed },
	{ versionKey: false, minimize: false },
);
