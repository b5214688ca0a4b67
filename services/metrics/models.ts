// The metrics service's collections (docs/metrics.md#days-and-keys): one
// document per account, currency and month, holding each day's counts in each
// scope, so a range of days is a few reads by key, never a scan; and per
// account the first month it has counts in, per currency, from which closing
// figures are summed. The month's `applied` keeps the ids of the events whose
// entries were applied, so an entry applied again after a crash changes
// nothing (counters.ts).
import { type Connection, type Model, Schema } from "mongoose";
import type { DayCounts } from "../../shared/contracts/metrics";

/** A month's counters of one account in one currency, keyed `<accountId>:<currency>:<YYYY-MM>` (month in TIME_ZONE). */
export interface MetricsMonthDoc {
	_id: string;
	accountId: number;
	currency: string;
	month: string;
	/** `days.<DD>.<scope>.<count>`. */
	days: Record<string, Record<string, Partial<DayCounts>>>;
	/** The ids of the events whose entries were applied; each is dropped once its event has left billing's outbox. */
	applied: Record<string, number>;
}

/** Per account (keyed by its id): the first month with counts in each currency, from which closing figures are summed. */
export interface MetricsIndexDoc {
	_id: number;
	first: Record<string, string>;
}

const metricsMonthSchema = new Schema<MetricsMonthDoc>(
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

const metricsIndexSchema = new Schema<MetricsIndexDoc>(
	{ _id: Number, first: { type: Schema.Types.Mixed, default: {} } },
	{ versionKey: false, minimize: false },
);

export interface MetricsDb {
	/** The counters by `<account>:<currency>:<YYYY-MM>`. */
	metricsMonths: Model<MetricsMonthDoc>;
	/** Each account's first month, per currency. */
	metricsIndex: Model<MetricsIndexDoc>;
}

export function createMetricsDb(connection: Connection): MetricsDb {
	return {
		metricsMonths: connection.model("MetricsMonth", metricsMonthSchema, "metrics_months"),
		metricsIndex: connection.model("MetricsIndex", metricsIndexSchema, "metrics_index"),
	};
}
