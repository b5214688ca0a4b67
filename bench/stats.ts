// Small statistics for the benchmark: latency percentiles from raw samples
// (every sample is kept, so there is no histogram rounding) and medians.

export interface Percentiles {
	count: number;
	p50: number;
	p95: number;
	p99: number;
	max: number;
	mean: number;
}

/** Nearest-rank percentiles of samples in milliseconds, rounded to 0.1 ms. */
export function percentiles(samples: number[]): Percentiles {
	if (samples.length === 0) return { count: 0, p50: NaN, p95: NaN, p99: NaN, max: NaN, mean: NaN };
	const sorted = Float64Array.from(samples).sort();
	const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
	const sum = sorted.reduce((a, b) => a + b, 0);
	return {
		count: sorted.length,
		p50: round(rank(50)),
		p95: round(rank(95)),
		p99: round(rank(99)),
		max: round(sorted[sorted.length - 1]),
		mean: round(sum / sorted.length),
	};
}

export function median(values: number[]): number {
	const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
	if (finite.length === 0) return NaN;
	const mid = Math.floor(finite.length / 2);
	return finite.length % 2 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2;
}

export function round(value: number, digits = 1): number {
	const factor = 10 ** digits;
	return Math.round(value * factor) / factor;
}

/** The median of a figure over repeated runs, rounded. */
export function medianOf<T>(runs: T[], pick: (run: T) => number): number {
	return round(median(runs.map(pick)));
}
