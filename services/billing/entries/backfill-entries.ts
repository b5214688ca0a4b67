// What a record older than the metrics counts (docs/metrics.md#backfill):
// pure. A customer that was a subscriber counts as new on the day of its
// first charge, at its MRR as of now, and, when it is no longer one, as
// churned with its cause on the day it stopped: one entry per day. A
// transaction counts its volume on its day (no renewal figures: an older
// renewal's try cannot be told); a dispute, its amount on the day it opened.
import type { CustomerDoc } from "../records/customer";
import type { MetricsEntry } from "../records/metrics";
import { customerEntry } from "./metrics-entries";
import { type Contribution, type MetricsProduct, mrrOf, subscriptionState } from "./subscription-state";

/** What a customer's transactions tell of its past (backfill/metrics-backfill.ts reads them). */
export interface CustomerHistory {
	/** Its first approved SUBSCRIPTION_START: its first charge. */
	firstChargeAt: Date | null;
	/** Its last declined RENEWAL: the try that suspended it, when it is SUSPENDED. */
	lastDeclineAt: Date | null;
}

type OlderCustomer = Pick<
	CustomerDoc,
	| "accountId"
	| "status"
	| "periodsBilled"
	| "quantity"
	| "coupon"
	| "midId"
	| "subscriptionTimestamp"
	| "unsubscriptionTimestamp"
	| "pause"
	| "firstDeclinedAt"
	| "lastTimeBilled"
>;

/** The day it stopped being a subscriber, as best the record tells (docs/metrics.md#backfill). */
function stoppedAt(customer: OlderCustomer, record: Contribution, history: CustomerHistory): Date {
	const at =
		record.cause === "paused"
			? customer.pause?.pausedAt
			: record.cause === "suspended"
				? (history.lastDeclineAt ?? customer.firstDeclinedAt)
				: customer.unsubscriptionTimestamp;
	return at ?? customer.lastTimeBilled ?? customer.subscriptionTimestamp;
}

/** Entries of the same day as one: one event per day. */
export function byDay(entries: MetricsEntry[]): MetricsEntry[] {
	const days = new Map<string, MetricsEntry>();
	for (const entry of entries) {
		const seen = days.get(entry.day);
		if (!seen) {
			days.set(entry.day, structuredClone(entry));
			continue;
		}
		for (const [scope, counts] of Object.entries(entry.counts) as [keyof MetricsEntry["counts"], Record<string, number>][]) {
			const into = (seen.counts[scope] ?? {}) as Record<string, number>;
			seen.counts[scope] = into;
			for (const [count, n] of Object.entries(counts)) into[count] = (into[count] ?? 0) + n;
		}
	}
	return [...days.values()];
}

/**
 * What an older customer counts: `record` is the contribution it is counted at (its state now, or the baseline its
 * first counted update started from), `product` that contribution's product. None unless it was a subscriber.
 */
export function customerBackfillEntries(
	customer: OlderCustomer,
	record: Contribution,
	product: MetricsProduct,
	history: CustomerHistory,
): MetricsEntry[] {
	if (record.standing === "none") return [];
	const { baseline: _, ...counted } = record;
	const subscriber: Contribution =
		counted.standing === "subscriber"
			? counted
			: { ...counted, standing: "subscriber", cause: null, mrr: mrrOf(subscriptionState(customer, product)) };
	const joined = history.firstChargeAt ?? customer.subscriptionTimestamp;
	const entries = [customerEntry(customer.accountId, null, subscriber, joined)];
	if (counted.standing === "lapsed") {
		const left = stoppedAt(customer, counted, history);
		entries.push(customerEntry(customer.accountId, subscriber, counted, left < joined ? joined : left));
	}
	return byDay(entries.filter((entry): entry is MetricsEntry => entry !== null));
}
