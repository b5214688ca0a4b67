// The usage service's collections (docs/usage.md#how-it-is-stored). Every read
// and write is by key: an event's key is the merchant's id for it (a repeat is
// a duplicate key), an aggregate's is its customer, meter and period, so a
// renewal reads a handful of keys and never the events.
import { type Connection, type Model, Schema } from "mongoose";
import type { Aggregation, FilterValue } from "../../shared/contracts/usage";

/** An account's meter: `<accountId>:<code>`. */
export interface MeterDoc {
	_id: string;
	accountId: number;
	code: string;
	name: string;
	aggregation: Aggregation;
	property: string | null;
	filters: Record<string, FilterValue>;
	createdAt: Date;
}

/** An event as accepted: `<accountId>:<the merchant's id>`, written once. */
export interface UsageEventDoc {
	_id: string;
	accountId: number;
	customerId: number;
	meter: string;
	timestamp: Date;
	properties: Record<string, unknown>;
	/** The customer's period it counts in. */
	period: number;
	/** What it adds to its aggregate (event-checks.ts), kept so a sweep counts it as its batch did. */
	value: number;
	unique: string | null;
	/** Counted in its period after that period's charge: an adjustment (docs/usage.md#time). */
	late: boolean;
	/** The batch that counted it: a sweep finds a crashed batch's events by it. */
	batch: string;
	/** Counted; or refused after it was stored (its period was closed meanwhile: PERIOD_CLOSED). */
	status: "counted" | "refused";
	receivedAt: Date;
}

/** One customer's aggregate of one meter in one period: `<customerId>:<meter>:<period>`. */
export interface AggregateDoc {
	_id: string;
	accountId: number;
	customerId: number;
	meter: string;
	period: number;
	count: number;
	/** Millionths of a unit (shared/usage-pricing.ts). */
	sum: number;
	max: number;
	unique: number;
	/** `<timestamp, 15 digits>|<value, 20 digits>`: its greatest is the latest event's value ($max). */
	latest: string;
	/** The last batches applied: a sweep re-applying a crashed batch skips the aggregates that have it. */
	applied: string[];
	/** Its period's late events were billed (the period after closed): later ones are refused. */
	sealed: boolean;
}

/** A distinct value of a unique_count aggregate: `<aggregate>:<sha256 of the value>`; `batch` counted it. */
export interface UniqueDoc {
	_id: string;
	batch: string;
}

/** A batch being applied: listed until its aggregates are, so a sweep finishes a crashed node's. */
export interface BatchDoc {
	_id: string;
	accountId: number;
	/** Its events' keys. */
	events: string[];
	owner: string;
	leaseUntil: Date;
}

export interface PeriodBounds {
	period: number;
	/** null: since the subscription began. */
	start: Date | null;
	/** The scheduled end; null: none scheduled (events count in the period until it closes). */
	end: Date | null;
}

/** A batch's events of one customer, in the batch's order: `<customerId>:<batch>`, written once. */
export interface PageDoc {
	_id: string;
	accountId: number;
	customerId: number;
	/** The events' keys (`<accountId>:<the merchant's id>`). */
	events: string[];
	receivedAt: Date;
}

/**
 * A customer's bucket, `<customerId>:b<bucket>` (10 seconds of receipt): its pages, `[page id, its events]`, in the
 * order they came; or its hour, `<customerId>:h<hour>`: the buckets that have pages (event-pages.ts).
 */
export interface ListDoc {
	_id: string;
	pages?: [string, number][];
	buckets?: number[];
}

/** A customer's periods as usage knows them: `<customerId>`. */
export interface PeriodsDoc {
	_id: number;
	accountId: number;
	current: PeriodBounds;
	/** The period before, open for late events until `lateUntil`. */
	previous: PeriodBounds | null;
	lateUntil: Date | null;
	/** The subscription ended: no event counts from here on. */
	endedAt: Date | null;
	/** When usage first heard of the customer: its event lists start after it. */
	createdAt: Date;
}

/** A period as its charge closed it: `<customerId>:<period>`, written once, so a retried renewal bills the same. */
export interface CloseDoc {
	_id: string;
	accountId: number;
	customerId: number;
	period: number;
	start: Date | null;
	end: Date;
	/** ClosedPeriod's usage and adjustments, as answered. */
	usage: unknown[];
	adjustments: unknown[];
	closedAt: Date;
}

const options = { versionKey: false } as const;
const mixed = Schema.Types.Mixed;

const meterSchema = new Schema<MeterDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		code: { type: String, required: true },
		name: { type: String, required: true },
		aggregation: { type: String, required: true },
		property: { type: String, default: null },
		filters: { type: mixed, default: {} },
		createdAt: { type: Date, required: true },
	},
	{ ...options, minimize: false },
);

const eventSchema = new Schema<UsageEventDoc>(
	{
		_id: String,
		accountId: Number,
		customerId: Number,
		meter: String,
		timestamp: Date,
		properties: mixed,
		period: Number,
		value: Number,
		unique: String,
		late: Boolean,
		batch: String,
		status: String,
		receivedAt: Date,
	},
	{ ...options, minimize: false },
);

const aggregateSchema = new Schema<AggregateDoc>(
	{
		_id: String,
		accountId: Number,
		customerId: Number,
		meter: String,
		period: Number,
		count: Number,
		sum: Number,
		max: Number,
		unique: Number,
		latest: String,
		applied: [String],
		sealed: Boolean,
	},
	options,
);

const uniqueSchema = new Schema<UniqueDoc>({ _id: String, batch: String }, options);

const batchSchema = new Schema<BatchDoc>({ _id: String, accountId: Number, events: [String], owner: String, leaseUntil: Date }, options);

const bounds = { period: Number, start: Date, end: Date };
const periodsSchema = new Schema<PeriodsDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		current: { type: bounds, required: true },
		previous: { type: bounds, default: null },
		lateUntil: { type: Date, default: null },
		endedAt: { type: Date, default: null },
		createdAt: { type: Date, required: true },
	},
	options,
);

const pageSchema = new Schema<PageDoc>({ _id: String, accountId: Number, customerId: Number, events: [String], receivedAt: Date }, options);
const listSchema = new Schema<ListDoc>({ _id: String, pages: Schema.Types.Mixed, buckets: [Number] }, options);

const closeSchema = new Schema<CloseDoc>(
	{
		_id: String,
		accountId: Number,
		customerId: Number,
		period: Number,
		start: Date,
		end: Date,
		usage: [mixed],
		adjustments: [mixed],
		closedAt: Date,
	},
	options,
);

export interface UsageDb {
	meters: Model<MeterDoc>;
	events: Model<UsageEventDoc>;
	aggregates: Model<AggregateDoc>;
	uniques: Model<UniqueDoc>;
	batches: Model<BatchDoc>;
	periods: Model<PeriodsDoc>;
	closes: Model<CloseDoc>;
	/** A customer's events, by batch (pages) and by day of receipt (lists): event-list.ts. */
	pages: Model<PageDoc>;
	lists: Model<ListDoc>;
}

export function createUsageDb(connection: Connection): UsageDb {
	return {
		meters: connection.model("Meter", meterSchema, "meters"),
		events: connection.model("UsageEvent", eventSchema, "usage_events"),
		aggregates: connection.model("UsageAggregate", aggregateSchema, "usage_aggregates"),
		uniques: connection.model("UsageUnique", uniqueSchema, "usage_uniques"),
		batches: connection.model("UsageBatch", batchSchema, "usage_batches"),
		periods: connection.model("UsagePeriods", periodsSchema, "usage_periods"),
		closes: connection.model("UsageClose", closeSchema, "usage_closes"),
		pages: connection.model("UsagePage", pageSchema, "usage_pages"),
		lists: connection.model("UsageList", listSchema, "usage_lists"),
	};
}
