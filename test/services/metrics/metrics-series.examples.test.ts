// The series GET /api/metrics answers, built from hand-made month documents (services/metrics/metrics-series.ts):
// days, ISO weeks and calendar months clipped to the range, the opening figures summed from the first month, and a
// range before it. Amounts in cents of EUR. Closing figures by hand (MRR / active subscribers at each day's end):
// 27 Feb 1833/2 · 2 Mar 4433/3 · 10 Mar 6433/3 · 12 Mar 5600/2 · 31 Mar 4600/2 · 1 Apr 5600/3.

import { dayNumber, dayText, monthsBetween, weekStart } from "../../../services/metrics/metrics-days";
import { DEFAULT_METRICS_DAYS, MetricsError, metricsQueryOf } from "../../../services/metrics/metrics-query";
import { type SeriesInput, seriesOf } from "../../../services/metrics/metrics-series";
import type { MetricsMonthDoc } from "../../../services/metrics/models";
import type { DayCounts, MetricsFigures } from "../../../shared/contracts/metrics";

type Day = Partial<DayCounts>;
const month = (text: string, days: Record<string, Record<string, Day>>): Pick<MetricsMonthDoc, "month" | "days"> => ({ month: text, days });

const MONTHS = [
	month("2026-02", { "27": { all: { mrr: 1833, subscribers: 2, newMrr: 1833, newSubscribers: 2 } } }),
	month("2026-03", {
		"02": {
			all: { mrr: 2600, subscribers: 1, newMrr: 2600, newSubscribers: 1, grossVolume: 600 },
			p3: { mrr: 2600, subscribers: 1, newMrr: 2600, newSubscribers: 1, grossVolume: 600 },
		},
		"10": { all: { mrr: 2000, expansionMrr: 2000 } },
		"12": { all: { mrr: -833, subscribers: -1, churnedMrr: 833, churnedSubscribers: 1, churnedDisputed: 1, disputes: 10_000 } },
		"30": { all: { renewalsAttempted: 3, renewalsApprovedFirstTry: 2, grossVolume: 2000 } },
		"31": { all: { mrr: -1000, contractionMrr: 1000 } },
	}),
	month("2026-04", {
		"01": {
			all: {
				mrr: 1000,
				subscribers: 1,
				reactivatedMrr: 1000,
				reactivatedSubscribers: 1,
				renewalsRecoveredByRetries: 1,
				refunds: 400,
				chargebacks: 10_000,
			},
		},
	}),
];

const series = (over: Partial<SeriesInput>) => seriesOf({ months: MONTHS, scope: "all", from: "", to: "", granularity: "day", ...over });

const NOTHING: MetricsFigures = {
	mrr: 0,
	activeSubscribers: 0,
	newMrr: 0,
	expansionMrr: 0,
	contractionMrr: 0,
	churnedMrr: 0,
	reactivatedMrr: 0,
	netNewMrr: 0,
	newSubscribers: 0,
	churnedSubscribers: 0,
	reactivatedSubscribers: 0,
	churnedBy: { unsubscribed: 0, suspended: 0, disputed: 0, paused: 0 },
	grossVolume: 0,
	usageVolume: 0,
	refunds: 0,
	disputes: 0,
	chargebacks: 0,
	netVolume: 0,
	renewalsAttempted: 0,
	renewalsApprovedFirstTry: 0,
	renewalsEnteredRecovery: 0,
	renewalsRecoveredByRetries: 0,
	renewalsRecoveredByCardUpdate: 0,
	renewalsLost: 0,
	recoveryRate: null,
	churnRate: null,
	arpu: null,
};
const figures = (over: Partial<MetricsFigures>): MetricsFigures => ({ ...NOTHING, ...over });
/** What C's checkout on 2 March moved: in the total and in its product alike. */
const C_JOINED: Partial<MetricsFigures> = {
	newMrr: 2600,
	netNewMrr: 2600,
	newSubscribers: 1,
	grossVolume: 600,
	netVolume: 600,
	churnRate: 0,
};

describe("A series by day", () => {
	test("When three days of March are read, then each day's closing figures include February's, and its movements are its own", () => {
		// Act
		const { points, total, hasFigures } = series({ from: "2026-03-01", to: "2026-03-03" });

		// Assert
		expect(points).toEqual([
			{ from: "2026-03-01", to: "2026-03-01", ...figures({ mrr: 1833, activeSubscribers: 2, churnRate: 0, arpu: 917 }) },
			{
				from: "2026-03-02",
				to: "2026-03-02",
				...figures({ ...C_JOINED, mrr: 4433, activeSubscribers: 3, arpu: 1478 }),
			},
			{ from: "2026-03-03", to: "2026-03-03", ...figures({ mrr: 4433, activeSubscribers: 3, churnRate: 0, arpu: 1478 }) },
		]);
		// ARPU over the three days: (1833 + 4433 + 4433) ÷ (2 + 3 + 3) = 1337.4.
		expect(total).toEqual(figures({ ...C_JOINED, mrr: 4433, activeSubscribers: 3, arpu: 1337 }));
		expect(hasFigures).toBe(true);
	});

	test("When one product's scope is read, then only its counts are", () => {
		// Act
		const { total } = series({ scope: "p3", from: "2026-03-01", to: "2026-03-31" });

		// Assert: one subscriber from 2 March: 30 subscriber-days at 2600.
		expect(total).toEqual(figures({ ...C_JOINED, mrr: 2600, activeSubscribers: 1, arpu: 2600 }));
	});
});

describe("A series by ISO week", () => {
	test("When the range starts on a Saturday and a week crosses from March into April, then the first week is clipped to its weekend and the second sums both months' days", () => {
		// Act
		const { points } = series({ from: "2026-03-28", to: "2026-04-05", granularity: "week" });

		// Assert
		expect(points).toEqual([
			{ from: "2026-03-28", to: "2026-03-29", ...figures({ mrr: 5600, activeSubscribers: 2, churnRate: 0, arpu: 2800 }) },
			{
				from: "2026-03-30",
				to: "2026-04-05",
				// ARPU: (5600 + 4600 + 5 × 5600) ÷ (2 + 2 + 5 × 3) = 38200 ÷ 19 = 2010.5, half up.
				...figures({
					mrr: 5600,
					activeSubscribers: 3,
					contractionMrr: 1000,
					reactivatedMrr: 1000,
					netNewMrr: 0,
					reactivatedSubscribers: 1,
					grossVolume: 2000,
					refunds: 400,
					chargebacks: 10_000,
					netVolume: -8400,
					renewalsAttempted: 3,
					renewalsApprovedFirstTry: 2,
					renewalsEnteredRecovery: 1,
					renewalsRecoveredByRetries: 1,
					recoveryRate: 1,
					churnRate: 0,
					arpu: 2011,
				}),
			},
		]);
	});
});

describe("A series by calendar month", () => {
	test("When the range starts and ends inside months, then the first and last are clipped, and churn rate counts from each month's opening subscribers", () => {
		// Act
		const { points, total } = series({ from: "2026-02-15", to: "2026-04-10", granularity: "month" });

		// Assert
		expect(points.map(p => [p.from, p.to])).toEqual([
			["2026-02-15", "2026-02-28"],
			["2026-03-01", "2026-03-31"],
			["2026-04-01", "2026-04-10"],
		]);
		expect(points[0]).toMatchObject({ mrr: 1833, activeSubscribers: 2, newMrr: 1833, newSubscribers: 2, churnRate: 0 });
		// March: 1833 + 2600 + 2000 − 1000 − 833 = 4600; 1 churned of 2 at the start + 1 new.
		expect(points[1]).toMatchObject({
			mrr: 4600,
			activeSubscribers: 2,
			netNewMrr: 2767,
			churnedSubscribers: 1,
			churnedBy: { unsubscribed: 0, suspended: 0, disputed: 1, paused: 0 },
			churnRate: 1 / 3,
			disputes: 10_000,
			netVolume: 2600,
			renewalsEnteredRecovery: 1,
			recoveryRate: 0,
		});
		// April: recovered, but none entered recovery in it.
		expect(points[2]).toMatchObject({ mrr: 5600, activeSubscribers: 3, reactivatedSubscribers: 1, recoveryRate: null, churnRate: 0 });
		expect(total).toMatchObject({
			mrr: 5600,
			newMrr: 4433,
			netNewMrr: 5600,
			churnRate: 1 / 4,
			recoveryRate: 1,
			netVolume: 2600 - 400 - 10_000,
		});
	});

	test("When the range is before the currency's first month, then every figure is 0 and the series has no figures", () => {
		// Act
		const { points, total, hasFigures } = series({ from: "2026-01-01", to: "2026-01-31", granularity: "month" });

		// Assert
		expect(points).toEqual([{ from: "2026-01-01", to: "2026-01-31", ...NOTHING }]);
		expect(total).toEqual(NOTHING);
		expect(hasFigures).toBe(false);
	});

	test("When the range is after every count, then the closing figures carry on and nothing moves", () => {
		// Act
		const { points, hasFigures } = series({ from: "2026-06-01", to: "2026-06-02" });

		// Assert
		expect(points.map(p => [p.mrr, p.activeSubscribers, p.netNewMrr])).toEqual([
			[5600, 3, 0],
			[5600, 3, 0],
		]);
		expect(hasFigures).toBe(true);
	});
});

describe("The query and its days", () => {
	test("When from and to are left out, then the range is the 30 days that end today, by day", () => {
		// Act
		const query = metricsQueryOf({ accountId: 1 }, "2026-03-05");

		// Assert
		expect(query).toEqual({ accountId: 1, from: "2026-02-04", to: "2026-03-05", granularity: "day" });
		expect(DEFAULT_METRICS_DAYS).toBe(30);
	});

	test.each([
		[{ from: "2026-02-30" }, MetricsError.BadDate],
		[{ from: "2026-01-01", to: "2025-13-01" }, MetricsError.BadDate],
		[{ from: "1969-12-31", to: "1970-01-05" }, MetricsError.BadDate],
		[{ from: "2026-03-02", to: "2026-03-01" }, MetricsError.FromAfterTo],
		[{ from: "2026-03-06" }, MetricsError.FromAfterTo],
		[{ from: "2023-01-01", to: "2026-01-01" }, MetricsError.TooLong],
		[{ productId: 1, midId: 2 }, MetricsError.ProductAndMid],
	])("When the query is %j, then it is refused as %s", (request, error) => {
		expect(metricsQueryOf({ accountId: 1, ...request }, "2026-03-05")).toBe(error);
	});

	test("When the range is exactly 1,096 days, then it is taken", () => {
		expect(metricsQueryOf({ accountId: 1, from: "2023-01-01", to: "2025-12-31" }, "2026-03-05")).toMatchObject({ from: "2023-01-01" });
	});

	test("When days are counted, then real dates round-trip, weeks start on Monday and months run across years", () => {
		expect(dayText(dayNumber("2024-02-29")!)).toBe("2024-02-29");
		expect([dayNumber("2025-02-29"), dayNumber("2026-1-01"), dayNumber("0000-00-00")]).toEqual([null, null, null]);
		expect(dayText(weekStart(dayNumber("2026-04-05")!))).toBe("2026-03-30");
		expect(dayText(weekStart(dayNumber("2026-03-30")!))).toBe("2026-03-30");
		expect(dayText(weekStart(dayNumber("1970-01-01")!))).toBe("1969-12-29");
		expect(monthsBetween("2025-11", "2026-02")).toEqual(["2025-11", "2025-12", "2026-01", "2026-02"]);
		expect(monthsBetween("2026-03", "2026-02")).toEqual([]);
	});
});
