// The keys of the metrics' day counters (docs/metrics.md#days-and-keys):
// `<accountId>:<currency>:<productId|all>:<YYYY-MM-DD>`, the day in the
// service's time zone (TIME_ZONE, as mid_stats counts), so a range of days is
// read by key, one document per scope and day, never by a scan. Every
// movement is counted twice: under its product and under `all`.
import { dayOf } from "../mid-stats/mid-stats";
import { type MetricsScope, scopeKey } from "./mrr-movements";

/** The counter of an account's scope on a day (YYYY-MM-DD). */
export const counterKey = (accountId: number, scope: MetricsScope, day: string) => `${accountId}:${scopeKey(scope)}:${day}`;

/** The counter a thing that happened at `at` is counted in: its day in TIME_ZONE. */
export const counterKeyAt = (accountId: number, scope: MetricsScope, at: Date) => counterKey(accountId, scope, dayOf(at));

/** The counter of a product's scope and of its currency's total, on the day of `at`: where one write counts it. */
export function counterKeysAt(accountId: number, currency: string, productId: number, at: Date): [string, string] {
	const day = dayOf(at);
	return [counterKey(accountId, { currency, productId }, day), counterKey(accountId, { currency, productId: "all" }, day)];
}
