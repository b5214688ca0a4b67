// Date-times in the API are local date-times in TIME_ZONE with milliseconds
// and no zone designator (`2026-11-22T14:03:05.123`), as the spec requires.
import { DateTime } from "luxon";
import { config } from "./config";

const API_FORMAT = "yyyy-LL-dd'T'HH:mm:ss.SSS";

export function formatDateTime(date: Date, zone: string = config().timeZone): string {
	return DateTime.fromJSDate(date, { zone }).toFormat(API_FORMAT);
}

export function formatOptionalDateTime(date: Date | null | undefined, zone?: string): string | null {
	return date ? formatDateTime(date, zone) : null;
}

export interface Period {
	every: number;
	unit: "day" | "week" | "month" | "year";
}

/**
 * Calendar arithmetic in the local zone: 31 Jan + 1 month = 28/29 Feb, and
 * across daylight-saving changes the local time of day holds.
 */
export function addPeriod(date: Date, period: Period, zone: string = config().timeZone): Date {
	return DateTime.fromJSDate(date, { zone }).plus({ [`${period.unit}s`]: period.every }).toJSDate();
}

export function addDays(date: Date, days: number, zone: string = config().timeZone): Date {
	return addPeriod(date, { every: days, unit: "day" }, zone);
}
