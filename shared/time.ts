// Date-times in the API are local date-times in TIME_ZONE with milliseconds
// and no zone designator (`2026-11-22T14:03:05.123`), as the spec requires.
import { DateTime, IANAZone } from "luxon";
import { config } from "./config";

const QUARTER_HOUR_MS = 15 * 60_000;
const MAX_CACHED_OFFSETS = 10_000;

/**
 * The zone's UTC offset (minutes) over each quarter of an hour, from luxon,
 * cached: asking luxon (Intl) for every date was the largest single cost of
 * a customer read. A quarter whose start and end differ (a daylight-saving
 * change inside it) is not cached, and each date in it goes to luxon.
 */
const quarterOffsets = new Map<string, number | null>();

function offsetMinutes(ms: number, zone: string): number {
	const quarter = Math.floor(ms / QUARTER_HOUR_MS);
	const key = `${zone}|${quarter}`;
	let offset = quarterOffsets.get(key);
	if (offset === undefined) {
		const start = DateTime.fromMillis(quarter * QUARTER_HOUR_MS, { zone }).offset;
		const end = DateTime.fromMillis((quarter + 1) * QUARTER_HOUR_MS - 1, { zone }).offset;
		offset = start === end ? start : null;
		if (quarterOffsets.size >= MAX_CACHED_OFFSETS) quarterOffsets.clear();
		quarterOffsets.set(key, offset);
	}
	return offset ?? DateTime.fromMillis(ms, { zone }).offset;
}

/** An IANA zone whose offsets come from the cache above: luxon's calendar arithmetic asks for several per call. */
class CachedZone extends IANAZone {
	override offset(ts: number): number {
		return offsetMinutes(ts, this.name);
	}
}

const zones = new Map<string, IANAZone | string>();

/** The zone for luxon, its offsets cached; a name luxon does not read as an IANA zone (UTC, offsets) goes to luxon as it is. */
export function zoneOf(name: string): IANAZone | string {
	let zone = zones.get(name);
	if (zone === undefined) {
		const lowered = name.toLowerCase();
		zone = lowered === "utc" || lowered === "gmt" || !IANAZone.isValidZone(name) ? name : new CachedZone(name);
		zones.set(name, zone);
	}
	return zone;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `yyyy-LL-dd'T'HH:mm:ss.SSS` in the zone (what luxon's toFormat gives, without its per-call cost). */
export function formatDateTime(date: Date, zone: string = config().timeZone): string {
	const ms = date.getTime();
	const offset = offsetMinutes(ms, zone);
	// Local mean times before 1900-ish have offsets in seconds; luxon rounds those its own way.
	if (!Number.isInteger(offset)) return DateTime.fromMillis(ms, { zone }).toFormat("yyyy-LL-dd'T'HH:mm:ss.SSS");
	const local = new Date(ms + offset * 60_000);
	return (
		`${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
		`T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${pad(local.getUTCMilliseconds(), 3)}`
	);
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
	return DateTime.fromJSDate(date, { zone: zoneOf(zone) })
		.plus({ [`${period.unit}s`]: period.every })
		.toJSDate();
}

export function addDays(date: Date, days: number, zone: string = config().timeZone): Date {
	return addPeriod(date, { every: days, unit: "day" }, zone);
}
