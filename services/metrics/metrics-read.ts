// GET /api/metrics (docs/api.md#get-apimetrics-subscription-metrics): an account's figures over a
// range of days, one series per currency, read by key: the account's index,
// then its month documents with one $in from each currency's first month to
// the range's last, whatever the number of customers (docs/metrics.md).

import { config } from "../../shared/config";
import { MAX_RUN_AHEAD_MS } from "../../shared/contracts/billing";
import { type MetricsAnswer, type MetricsQuery, monthKey, type ScopeKey } from "../../shared/contracts/metrics";
import type { MetricsDeps } from "./deps";
import { dayOf, monthsBetween } from "./metrics-days";
import { MetricsError, type MetricsRequest, metricsQueryOf } from "./metrics-query";
import { seriesOf } from "./metrics-series";
import type { MetricsMonthDoc } from "./models";

const DAYS_OF_MONTH = Array.from({ length: 31 }, (_, i) => String(i + 1).padStart(2, "0"));

/**
 * The scope a filter reads; an unknown product or MID (another account's too) is not found. A product is read by key;
 * a MID is looked for among the account's few MIDs, as MID health does (the operators' view, not a hot path).
 */
async function scopeOf(deps: MetricsDeps, query: MetricsQuery): Promise<{ key: ScopeKey } | MetricsError> {
	if (query.productId !== undefined) {
		return (await deps.productOf(query.accountId, query.productId)) ? { key: `p${query.productId}` } : MetricsError.ProductNotFound;
	}
	if (query.midId !== undefined) {
		const mids = await deps.merchantAccountsOf(query.accountId);
		return mids.some(mid => mid.id === query.midId) ? { key: `m${query.midId}` } : MetricsError.MidNotFound;
	}
	return { key: "all" };
}

export async function readMetrics(deps: MetricsDeps, request: MetricsRequest): Promise<MetricsAnswer | MetricsError> {
	// Today is the account's: a sandbox whose test clock was moved ahead dates its changes at the clock's time.
	const query = metricsQueryOf(request, dayOf(await deps.clocks.now(request.accountId)));
	if (typeof query === "string") return query;
	const found = await scopeOf(deps, query);
	if (typeof found === "string") return found;
	const scope = found.key;
	// An account without counters answers no series (the gateway answered an operator's unknown account 404 already).
	const index = await deps.db.metricsIndex.findById(query.accountId).lean();
	const first = index?.first ?? {};
	const currencies = query.currency !== undefined ? [query.currency] : Object.keys(first).sort();
	const lastMonth = [query.to, dayOf(new Date(deps.now().getTime() + MAX_RUN_AHEAD_MS))].sort()[0].slice(0, 7);
	const keys = currencies.flatMap(currency =>
		first[currency] ? monthsBetween(first[currency], lastMonth).map(month => monthKey(query.accountId, currency, month)) : [],
	);
	// Only this scope's counts of each day: a document holds every product's and MID's.
	const projection = Object.fromEntries([["month", 1], ["currency", 1], ...DAYS_OF_MONTH.map(dd => [`days.${dd}.${scope}`, 1])]);
	const docs: Pick<MetricsMonthDoc, "month" | "currency" | "days">[] = keys.length
		? await deps.db.metricsMonths.find({ _id: { $in: keys } }, projection).lean()
		: [];
	const series = currencies.flatMap(currency => {
		const months = docs.filter(doc => doc.currency === currency);
		const { hasFigures, ...figures } = seriesOf({ months, scope, from: query.from, to: query.to, granularity: query.granularity });
		// A currency asked for answers even with nothing in it; otherwise only those with a figure in the range.
		return hasFigures || query.currency !== undefined ? [{ currency, ...figures }] : [];
	});
	return {
		from: query.from,
		to: query.to,
		granularity: query.granularity,
		productId: query.productId ?? null,
		midId: query.midId ?? null,
		timeZone: config().timeZone,
		series,
	};
}
