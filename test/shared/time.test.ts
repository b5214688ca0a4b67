import fc from "fast-check";
import { DateTime } from "luxon";
import { addPeriod, formatDateTime, zoneOf } from "../../shared/time";

describe("formatDateTime", () => {
	test("When a winter instant is shown in CET, then it is UTC+1 with milliseconds and no zone", () => {
		expect(formatDateTime(new Date("2026-01-15T13:03:05.123Z"), "CET")).toBe("2026-01-15T14:03:05.123");
	});

	test("When a summer instant is shown in CET, then daylight-saving time applies (UTC+2)", () => {
		expect(formatDateTime(new Date("2026-07-01T00:00:00.000Z"), "CET")).toBe("2026-07-01T02:00:00.000");
	});

	test("When another zone is configured, then it is used", () => {
		expect(formatDateTime(new Date("2026-07-01T00:00:00.007Z"), "America/New_York")).toBe("2026-06-30T20:00:00.007");
	});

	test.each(["CET", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"])(
		"When instants around %s's daylight-saving changes are shown, then each reads as luxon formats it (offsets are cached per quarter hour)",
		zone => {
			const format = (ms: number) => DateTime.fromMillis(ms, { zone }).toFormat("yyyy-LL-dd'T'HH:mm:ss.SSS");
			const changes = [
				Date.UTC(2026, 2, 29, 1),
				Date.UTC(2026, 9, 25, 1),
				Date.UTC(2026, 3, 5, 15),
				Date.UTC(2026, 9, 4, 15, 30),
				Date.UTC(2026, 2, 8, 7),
				Date.UTC(2026, 10, 1, 6),
			];
			for (const change of changes) {
				for (let ms = change - 3_600_000; ms <= change + 3_600_000; ms += 59_999)
					expect(formatDateTime(new Date(ms), zone)).toBe(format(ms));
			}
		},
	);
});

describe("addPeriod (calendar arithmetic in the local zone)", () => {
	const at = (text: string) => DateTime.fromISO(text, { zone: "CET" }).toJSDate();
	const show = (date: Date) => DateTime.fromJSDate(date, { zone: "CET" }).toFormat("yyyy-LL-dd HH:mm");

	test.each([
		["2026-01-31T10:00", { every: 1, unit: "month" }, "2026-02-28 10:00"],
		["2028-01-31T10:00", { every: 1, unit: "month" }, "2028-02-29 10:00"],
		["2026-01-31T10:00", { every: 2, unit: "month" }, "2026-03-31 10:00"],
		["2028-02-29T10:00", { every: 1, unit: "year" }, "2029-02-28 10:00"],
		["2026-03-28T10:00", { every: 1, unit: "day" }, "2026-03-29 10:00"],
		["2026-10-24T10:00", { every: 1, unit: "week" }, "2026-10-31 10:00"],
		["2026-03-01T02:30", { every: 1, unit: "month" }, "2026-04-01 02:30"],
	] as const)("When %s plus %p, then %s", (start, period, expected) => {
		expect(show(addPeriod(at(start), period, "CET"))).toBe(expected);
	});

	test("When a day is added across the spring daylight-saving change, then the local time of day holds though 23 hours pass", () => {
		const before = at("2026-03-28T10:00");
		const after = addPeriod(before, { every: 1, unit: "day" }, "CET");

		expect(show(after)).toBe("2026-03-29 10:00");
		expect(after.getTime() - before.getTime()).toBe(23 * 3_600_000);
	});
});

describe("zoneOf (luxon's zone with cached offsets)", () => {
	const zones = ["CET", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "UTC"];
	// 1900 to 2100: local mean times, wartime and double summer times, and the changes to come.
	const instant = fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2100, 0, 1) });
	const period = fc.record({ every: fc.integer({ min: 1, max: 36 }), unit: fc.constantFrom("day", "week", "month", "year") });

	test("When any instant plus any period is computed in the cached zone, then it is luxon's result in the plain zone", () => {
		fc.assert(
			fc.property(instant, period, fc.constantFrom(...zones), (ms, { every, unit }, zone) => {
				const plain = DateTime.fromMillis(ms, { zone }).plus({ [`${unit}s`]: every });
				const cached = DateTime.fromMillis(ms, { zone: zoneOf(zone) }).plus({ [`${unit}s`]: every });
				expect(cached.toMillis()).toBe(plain.toMillis());
				expect(cached.toISO()).toBe(plain.toISO());
			}),
			{ numRuns: 2000 },
		);
	});

	test("When any local date-time is read in the cached zone, then it is the instant luxon reads in the plain zone", () => {
		fc.assert(
			fc.property(instant, fc.constantFrom(...zones), (ms, zone) => {
				const local = new Date(ms).toISOString().slice(0, 23);
				expect(DateTime.fromISO(local, { zone: zoneOf(zone) }).toMillis()).toBe(DateTime.fromISO(local, { zone }).toMillis());
			}),
			{ numRuns: 2000 },
		);
	});

	test("When a name is not an IANA zone's, then luxon gets the name as it is", () => {
		expect(zoneOf("UTC+2")).toBe("UTC+2");
		expect(addPeriod(new Date(Date.UTC(2026, 0, 31, 23)), { every: 1, unit: "month" }, "UTC+2")).toEqual(
			new Date(Date.UTC(2026, 1, 28, 23)),
		);
	});
});
