// What a metrics read may ask (docs/api.md#get-apimetrics-subscription-metrics): the range's days,
// their defaults and limits, and one filter at most. The JSON types are the
// action's schema's (schemas.ts); what a schema cannot say is checked here.
import type { MetricsQuery } from "../../shared/contracts/metrics";
import { dayNumber, dayText } from "./metrics-days";

/** Days one read may cover: three years, a leap day included. */
export const MAX_METRICS_DAYS = 1096;
/** The default range: the 30 days that end today. */
export const DEFAULT_METRICS_DAYS = 30;

/** No day before 1970-01-01 (day 0): there is nothing to count before, and a default `from` is not moved before it. */
const FIRST_DAY = 0;

export enum MetricsError {
	BadDate = "METRICS_BAD_DATE",
	FromAfterTo = "METRICS_FROM_AFTER_TO",
	TooLong = "METRICS_RANGE_TOO_LONG",
	ProductAndMid = "METRICS_PRODUCT_AND_MID",
	ProductNotFound = "METRICS_PRODUCT_NOT_FOUND",
	MidNotFound = "METRICS_MID_NOT_FOUND",
}

/** What metrics.figures takes: MetricsQuery with the range and granularity optional. */
export type MetricsRequest = Omit<MetricsQuery, "from" | "to" | "granularity"> & Partial<Pick<MetricsQuery, "from" | "to" | "granularity">>;

/** The request with its defaults (`to` today, `from` 29 days before `to`, by day), or why it cannot be read. */
export function metricsQueryOf(request: MetricsRequest, today: string): MetricsQuery | MetricsError {
	if (request.productId !== undefined && request.midId !== undefined) return MetricsError.ProductAndMid;
	const to = dayNumber(request.to ?? today);
	const from =
		request.from === undefined ? (to === null ? null : Math.max(FIRST_DAY, to - (DEFAULT_METRICS_DAYS - 1))) : dayNumber(request.from);
	if (from === null || to === null || from < FIRST_DAY || to < FIRST_DAY) return MetricsError.BadDate;
	if (from > to) return MetricsError.FromAfterTo;
	if (to - from + 1 > MAX_METRICS_DAYS) return MetricsError.TooLong;
	return { ...request, from: dayText(from), to: dayText(to), granularity: request.granularity ?? "day" };
}
