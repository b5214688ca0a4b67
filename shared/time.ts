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
