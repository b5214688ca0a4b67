// One currency's series of one scope, from its month documents: pure
// (docs/metrics.md#reading-the-figures). A day's counts are its net changes and
// sums; the closing MRR and active subscribers at the end of a day are the
// running sums of the net changes from the currency's first month, so the
// documents before the range give the opening figures. Points are days, ISO
// weeks (Monday to Sunday) or calendar months, each clipped to the range.
import type { DayCounts, MetricsFigures, MetricsGranularity, MetricsPoint, ScopeKey } from "../../shared/contracts/metrics";
import { dayNumber, dayText, weekStart } from "./metrics-days";
import type { MetricsMonthDoc } from "./models";
import { type DayFigures, windowFigures } from "./window-figures";

export interface SeriesInput {
	/** The currency's month documents up to the range's end, in any order; those before it give the opening figures. */
	months: Pick<MetricsMonthDoc, "month" | "days">[];
	scope: ScopeKey;
	/** Real days, `from` not after `to`. */
	from: string;
	to: string;
	granularity: MetricsGranularity;
}

export interface Series {
	points: MetricsPoint[];
	total: MetricsFigures;
	/** Some figure of the range is not 0: an opening MRR or subscriber, or a count on one of its days. */
	hasFigures: boolean;
}

const bucketOf: Record<MetricsGranularity, (day: number) => number | string> = {
	day: day => day,
	week: weekStart,
	month: day => dayText(day).slice(0, 7),
};

const anyCount = (counts: Partial<DayCounts>) => Object.values(counts).some(value => typeof value === "number" && value !== 0);

/** The scope's counts of the range's days, and its closing figures at the end of the day before the range. */
function split(input: SeriesInput): { opening: { mrr: number; subscribers: number }; inRange: Map<string, Partial<DayCounts>> } {
	const opening = { mrr: 0, subscribers: 0 };
	const inRange = new Map<string, Partial<DayCounts>>();
	for (const doc of input.months) {
		for (const [dd, scopes] of Object.entries(doc.days ?? {})) {
			const counts = scopes?.[input.scope];
			const day = `${doc.month}-${dd}`;
			if (!counts || day > input.to) continue;
			if (day >= input.from) inRange.set(day, counts);
			else {
				opening.mrr += counts.mrr ?? 0;
				opening.subscribers += counts.subscribers ?? 0;
			}
		}
	}
	return { opening, inRange };
}

export function seriesOf(input: SeriesInput): Series {
	const { opening, inRange } = split(input);
	const start = dayNumber(input.from)!;
	const days: DayFigures[] = [];
	/** Where each bucket starts in `days`. */
	const buckets: { key: number | string; first: number }[] = [];
	let { mrr, subscribers } = opening;
	for (let day = start, last = dayNumber(input.to)!; day <= last; day++) {
		const counts = inRange.get(dayText(day)) ?? {};
		mrr += counts.mrr ?? 0;
		subscribers += counts.subscribers ?? 0;
		const key = bucketOf[input.granularity](day);
		if (buckets.length === 0 || buckets[buckets.length - 1].key !== key) buckets.push({ key, first: days.length });
		days.push({ counts, mrr, subscribers });
	}
	const points = buckets.map(({ first }, i) => {
		const end = i + 1 < buckets.length ? buckets[i + 1].first : days.length;
		const activeBefore = first === 0 ? opening.subscribers : days[first - 1].subscribers;
		return { from: dayText(start + first), to: dayText(start + end - 1), ...windowFigures(days.slice(first, end), activeBefore) };
	});
	return {
		points,
		total: windowFigures(days, opening.subscribers),
		hasFigures: opening.mrr !== 0 || opening.subscribers !== 0 || [...inRange.values()].some(anyCount),
	};
}
