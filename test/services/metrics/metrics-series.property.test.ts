// The series of GET /api/metrics against a simple model, with fast-check (services/metrics/metrics-series.ts):
// for random day counts over a few months, any granularity's points cover the range day after day and sum to the
// day view's sums; each point's closing MRR and subscribers are the running sums of every day up to its last; its
// churn rate's start is the running sum of the day before; the total is the sum of the points.
import fc from "fast-check";
import { dayNumber, dayText } from "../../../services/metrics/metrics-days";
import { seriesOf } from "../../../services/metrics/metrics-series";
import type { MetricsMonthDoc } from "../../../services/metrics/models";
import type { DayCounts, MetricsFigures, MetricsPoint } from "../../../shared/contracts/metrics";

const FIRST = dayNumber("2025-12-01")!;
const SPAN = 150;

/** Every summed figure of the answer (the closing ones and the rates are checked apart). */
const SUMMED: (keyof MetricsFigures)[] = [
	"newMrr",
	"expansionMrr",
	"contractionMrr",
	"churnedMrr",
	"reactivatedMrr",
	"netNewMrr",
	"newSubscribers",
	"churnedSubscribers",
	"reactivatedSubscribers",
	"grossVolume",
	"refunds",
	"disputes",
	"chargebacks",
	"netVolume",
	"renewalsAttempted",
	"renewalsApprovedFirstTry",
	"renewalsEnteredRecovery",
	"renewalsRecoveredByRetries",
	"renewalsRecoveredByCardUpdate",
	"renewalsLost",
];

const amount = fc.integer({ min: 0, max: 50_000 });
const small = fc.integer({ min: 0, max: 5 });
const countsArb: fc.Arbitrary<Partial<DayCounts>> = fc.record(
	{
		mrr: fc.integer({ min: -20_000, max: 20_000 }),
		subscribers: fc.integer({ min: -3, max: 3 }),
		newMrr: amount,
		expansionMrr: amount,
		contractionMrr: amount,
		churnedMrr: amount,
		reactivatedMrr: amount,
		newSubscribers: small,
		churnedSubscribers: small,
		reactivatedSubscribers: small,
		churnedPaused: small,
		grossVolume: amount,
		refunds: amount,
		disputes: amount,
		chargebacks: amount,
		renewalsAttempted: fc.integer({ min: 5, max: 10 }),
		renewalsApprovedFirstTry: small,
		renewalsRecoveredByRetries: small,
		renewalsRecoveredByCardUpdate: small,
		renewalsLost: small,
	},
	{ requiredKeys: [] },
);

/** Days (offsets from FIRST) with counts in `all`, and a range inside the span (maybe before every count). */
const caseArb = fc.record({
	counted: fc.dictionary(fc.integer({ min: 0, max: SPAN - 1 }).map(String), countsArb, { maxKeys: 40 }),
	a: fc.integer({ min: 0, max: SPAN - 1 }),
	b: fc.integer({ min: 0, max: SPAN - 1 }),
	granularity: fc.constantFrom("day" as const, "week" as const, "month" as const),
});

function monthDocs(counted: Record<string, Partial<DayCounts>>): Pick<MetricsMonthDoc, "month" | "days">[] {
	const byMonth = new Map<string, Pick<MetricsMonthDoc, "month" | "days">>();
	for (const [offset, counts] of Object.entries(counted)) {
		const day = dayText(FIRST + Number(offset));
		const month = byMonth.get(day.slice(0, 7)) ?? byMonth.set(day.slice(0, 7), { month: day.slice(0, 7), days: {} }).get(day.slice(0, 7))!;
		month.days[day.slice(8)] = { all: counts, p1: { mrr: 1, subscribers: 1 } };
	}
	return [...byMonth.values()];
}

/** The model: the running sum of a net change over every counted day up to `day`, included. */
function runningSum(counted: Record<string, Partial<DayCounts>>, field: "mrr" | "subscribers", day: number): number {
	return Object.entries(counted)
		.filter(([offset]) => FIRST + Number(offset) <= day)
		.reduce((sum, [, counts]) => sum + (counts[field] ?? 0), 0);
}

const sumOf = (points: MetricsPoint[], field: keyof MetricsFigures) => points.reduce((sum, p) => sum + (p[field] as number), 0);

describe("The series against a running-sum model", () => {
	test("When random days are counted, then every granularity's points add up to the day view, close at the running sums, and total to their sum", () => {
		fc.assert(
			fc.property(caseArb, ({ counted, a, b, granularity }) => {
				// Arrange
				const [from, to] = [dayText(FIRST + Math.min(a, b)), dayText(FIRST + Math.max(a, b))];
				const months = monthDocs(counted);

				// Act
				const byDay = seriesOf({ months, scope: "all", from, to, granularity: "day" });
				const view = seriesOf({ months, scope: "all", from, to, granularity });

				// Assert: the points cover the range, one after the other.
				expect(view.points[0].from).toBe(from);
				expect(view.points[view.points.length - 1].to).toBe(to);
				for (let i = 1; i < view.points.length; i++) expect(dayNumber(view.points[i].from)).toBe(dayNumber(view.points[i - 1].to)! + 1);
				for (const field of SUMMED) {
					expect(sumOf(view.points, field)).toBe(sumOf(byDay.points, field));
					expect(view.total[field]).toBe(sumOf(view.points, field));
				}
				for (const point of view.points) {
					const last = dayNumber(point.to)!;
					expect([point.mrr, point.activeSubscribers]).toEqual([
						runningSum(counted, "mrr", last),
						runningSum(counted, "subscribers", last),
					]);
					const exposed =
						runningSum(counted, "subscribers", dayNumber(point.from)! - 1) + point.newSubscribers + point.reactivatedSubscribers;
					expect(point.churnRate).toBe(exposed > 0 ? point.churnedSubscribers / exposed : null);
				}
				expect([view.total.mrr, view.total.activeSubscribers]).toEqual([
					view.points[view.points.length - 1].mrr,
					view.points[view.points.length - 1].activeSubscribers,
				]);
				expect(view.total.arpu).toBe(byDay.total.arpu);
			}),
			{ numRuns: 300 },
		);
	});
});
