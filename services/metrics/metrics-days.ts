// Calendar days as the metrics read them: `YYYY-MM-DD` texts (days in
// TIME_ZONE, as counted) and their numbers since 1970-01-01, so a range is
// walked, and weeks and months found, without a time zone: a day is a day,
// whatever its hours (docs/metrics.md#ground-rules).
import { formatDateTime } from "../../shared/time";

const DAY_MS = 86_400_000;
const DAY_TEXT = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/** The day of an instant in TIME_ZONE, `YYYY-MM-DD`: the day billing counts it on. */
export const dayOf = (at: Date) => formatDateTime(at).slice(0, 10);

/** The day's number, or null when the text is not a real calendar day (2026-02-30, 2026-13-01). */
export function dayNumber(text: string): number | null {
	const parts = DAY_TEXT.exec(text);
	if (!parts) return null;
	const date = new Date(0);
	date.setUTCFullYear(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]));
	return dayText(date.getTime() / DAY_MS) === text ? date.getTime() / DAY_MS : null;
}

/** The day's text, `YYYY-MM-DD`. */
export function dayText(day: number): string {
	const date = new Date(day * DAY_MS);
	const pad = (n: number, width = 2) => String(n).padStart(width, "0");
	return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}

/** The Monday that starts the day's ISO week (1970-01-01 was a Thursday). */
export const weekStart = (day: number) => day - ((((day + 3) % 7) + 7) % 7);

/** The months from `first` to `last` (`YYYY-MM`), both included; none when `first` is later. */
export function monthsBetween(first: string, last: string): string[] {
	const months: string[] = [];
	let [year, month] = first.split("-").map(Number);
	for (let text = first; text <= last; text = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}`) {
		months.push(text);
		month = month === 12 ? 1 : month + 1;
		if (month === 1) year++;
	}
	return months;
}
