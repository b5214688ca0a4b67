import { formatDateTime } from "../../shared/time";

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
});
