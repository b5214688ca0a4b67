// Counters read by key: each MID's counts by day (mid_stats) and each
// account's recovery counts by month (recovery_stats).
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
