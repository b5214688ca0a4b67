// The usage service's contract (docs/usage.md): meters, what a period's usage
// came to, and what billing tells it and asks of it. Types only.

export const AGGREGATIONS = ["count", "sum", "max", "unique_count", "latest"] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** A filter value an event's property must equal for the meter to count it. */
export type FilterValue = string | number | boolean;

export interface MeterView {
	code: string;
	name: string;
	aggregation: Aggregation;
	/** The property it reads: sum, max and latest a number, unique_count any string or number; null for count. */
	property: string | null;
	/** Properties an event must have, with these values, to be counted. */
	filters: Record<string, FilterValue>;
	createdAt: string;
}

/**
 * A meter's aggregate of one customer's period, quantities in millionths of a unit (shared/usage-pricing.ts):
 * `latest` is the value of the event with the greatest timestamp.
 */
export interface UsageValues {
	count: number;
	sum: number;
	max: number;
	unique: number;
	latest: number;
}

export const NO_USAGE: UsageValues = { count: 0, sum: 0, max: 0, unique: 0, latest: 0 };

/** What a meter's aggregation bills of its values, in millionths of a unit. */
export function quantityOf(aggregation: Aggregation, values: UsageValues): number {
	switch (aggregation) {
		case "count":
			return values.count * 1_000_000;
		case "unique_count":
			return values.unique * 1_000_000;
		case "sum":
			return values.sum;
		case "max":
			return values.max;
		case "latest":
			return values.latest;
	}
}

/** One meter's usage in a period. */
export interface MeterUsage {
	meter: string;
	/** The meter's name, for invoices. */
	name: string;
	aggregation: Aggregation;
	values: UsageValues;
}

/** The late events of the period before, for one meter: its values when it was billed, and now (docs/usage.md#time). */
export interface MeterAdjustment {
	meter: string;
	name: string;
	aggregation: Aggregation;
	/** The period it adjusts. */
	period: number;
	billed: UsageValues;
	final: UsageValues;
}

/** What a closed period's charge bills of usage: the period's usage and the adjustments of the one before. */
export interface ClosedPeriod {
	period: number;
	start: string | null;
	end: string;
	usage: MeterUsage[];
	adjustments: MeterAdjustment[];
}

/** What billing knows of a customer's period when usage first hears of the customer (billing.usageSubjects). */
export interface UsageSubject {
	customerId: number;
	/** The period's number: the charges made on the schedule so far (a trial is period 0). */
	period: number;
	start: string;
	/** The period's scheduled end; null: none scheduled. */
	end: string | null;
	/** When the subscription ended; null while it runs. */
	endedAt: string | null;
}

export interface UsageActions {
	/**
	 * Billing, as a charge bills a period: the period's usage and the late events of the one before; idempotent per
	 * customer and period (a retried renewal gets the same answer). `final`: the subscription ends at `end`.
	 */
	"usage.closePeriod": {
		params: {
			accountId: number;
			customerId: number;
			period: number;
			/** The period's start as billing knows it: kept when usage never heard of the customer. */
			start: string;
			end: string;
			nextEnd: string | null;
			meters: string[];
			final?: boolean;
		};
		result: ClosedPeriod;
	};
	/** The customer's usage in its current period, for the meters named (billing's preview); null: no usage heard of. */
	"usage.currentUsage": {
		params: { accountId: number; customerId: number; meters: string[] };
		result: { period: number; start: string | null; end: string | null; usage: MeterUsage[] } | null;
	};
	/** An operator's new meter (the admin API, the dashboard; accounts for the demo account's). */
	"usage.createMeter": {
		params: {
			accountId: number;
			code: string;
			name: string;
			aggregation: Aggregation;
			property?: string;
			filters?: Record<string, FilterValue>;
		};
		result: MeterView;
	};
	/** The account's meters, by code: billing prices them, accounts checks a product's prices name them. */
	"usage.meters": { params: { accountId: number; codes?: string[] }; result: MeterView[] };
	/** A billing node moved the account's test clock: usage dates events by it. */
	"usage.clockMoved": { params: { accountId: number; at: string }; result: unknown };
}
