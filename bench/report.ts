// What a run prints and writes: a table of the medians, the targets of issue 6
// met or missed, and a chart (SVG) of latency percentiles and throughput per
// scenario.

/** One line of the table and one group of bars in the chart. */
export interface Row {
	scenario: string;
	/** e.g. "embedded c=16" */
	setting: string;
	throughput: number | null;
	unit: string;
	p50: number | null;
	p95: number | null;
	p99: number | null;
	/** e.g. "0.58 of baseline", "efficiency 0.41" */
	note: string;
	/** The target this row's figure is held to, when it has one (also in the targets table). */
	target?: Target;
}

export interface Target {
	name: string;
	target: string;
	measured: string;
	met: boolean | null;
}

const fmt = (value: number | null, digits = 1) =>
	value === null || !Number.isFinite(value) ? "–" : value >= 100 ? value.toFixed(0) : value.toFixed(digits);

function table(headers: string[], lines: string[][]): string {
	const widths = headers.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
	const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
	return [line(headers), `|${widths.map(w => "-".repeat(w + 2)).join("|")}|`, ...lines.map(line)].join("\n");
}

/** Markdown, so the same text goes to the terminal and into bench/README.md. */
export function resultsTable(rows: Row[]): string {
	return table(
		["scenario", "setting", "figure", "p50 ms", "p95 ms", "p99 ms", "target", "note"],
		rows.map(r => [
			r.scenario,
			r.setting,
			r.throughput === null ? "–" : `${fmt(r.throughput)} ${r.unit}`,
			fmt(r.p50),
			fmt(r.p95),
			fmt(r.p99),
			r.target ? `${r.target.target}: ${verdict(r.target)}` : "",
			r.note,
		]),
	);
}

const verdict = (t: Target) => (t.met === null ? "not measured" : t.met ? "met" : "MISSED");

/** A target, and the rows whose figure it checks show it. */
export function target(t: Target, ...rows: (Row | undefined)[]): Target {
	for (const row of rows) if (row) row.target = t;
	return t;
}

export function targetsTable(targets: Target[]): string {
	return table(
		["target", "wanted", "measured", ""],
		targets.map(t => [t.name, t.target, t.measured, verdict(t)]),
	);
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Horizontal bars on a log scale (the values span 1 ms to seconds), one panel per measure. */
export function chart(rows: Row[], title: string): string {
	const labelWidth = 300;
	const barArea = 460;
	const rowHeight = 34;
	const colors = { p50: "#4e79a7", p95: "#f28e2b", p99: "#e15759", throughput: "#59a14f" };
	const latencyRows = rows.filter(r => r.p50 !== null);
	// Rates only: counts (commands per checkout) have no place on a per-second axis.
	const throughputRows = rows.filter(r => r.throughput !== null && r.unit.endsWith("/s"));
	const parts: string[] = [];
	let y = 40;

	const panel = (
		heading: string,
		items: Row[],
		bars: { key: "p50" | "p95" | "p99" | "throughput"; label: string }[],
		unit: (r: Row) => string,
	) => {
		const values = items.flatMap(r => bars.map(b => r[b.key] ?? NaN)).filter(v => Number.isFinite(v) && v > 0);
		if (values.length === 0) return;
		const lo = Math.floor(Math.log10(Math.min(...values, 1)));
		const hi = Math.ceil(Math.log10(Math.max(...values) * 1.01));
		const x = (v: number) => labelWidth + ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * barArea;
		parts.push(`<text x="10" y="${y}" font-weight="bold">${escapeXml(heading)}</text>`);
		for (const [i, b] of bars.entries()) {
			parts.push(
				`<rect x="${labelWidth + i * 90}" y="${y - 11}" width="10" height="10" fill="${colors[b.key]}"/><text x="${labelWidth + 14 + i * 90}" y="${y - 2}">${b.label}</text>`,
			);
		}
		y += 14;
		const top = y;
		for (const r of items) {
			parts.push(`<text x="10" y="${y + 14}">${escapeXml(`${r.scenario}, ${r.setting}`)}</text>`);
			const h = (rowHeight - 6) / bars.length;
			bars.forEach((b, i) => {
				const v = r[b.key];
				if (v === null || !Number.isFinite(v) || v <= 0) return;
				const by = y + i * h;
				parts.push(
					`<rect x="${labelWidth}" y="${by}" width="${Math.max(1, x(v) - labelWidth)}" height="${h - 1}" fill="${colors[b.key]}"/>`,
				);
				parts.push(
					`<text x="${x(v) + 4}" y="${by + h - 2}" font-size="9">${fmt(v)}${b.key === "throughput" ? ` ${escapeXml(unit(r))}` : ""}</text>`,
				);
			});
			y += rowHeight;
		}
		for (let p = lo; p <= hi; p++) {
			const gx = labelWidth + ((p - lo) / (hi - lo)) * barArea;
			parts.push(
				`<line x1="${gx}" y1="${top}" x2="${gx}" y2="${y}" stroke="#ccc"/><text x="${gx}" y="${y + 12}" font-size="9" text-anchor="middle">${10 ** p >= 1 ? (10 ** p).toLocaleString("en") : 10 ** p}</text>`,
			);
		}
		y += 40;
	};

	panel(
		"Latency (ms, log scale)",
		latencyRows,
		[
			{ key: "p50", label: "p50" },
			{ key: "p95", label: "p95" },
			{ key: "p99", label: "p99" },
		],
		() => "ms",
	);
	panel("Throughput (per second, log scale)", throughputRows, [{ key: "throughput", label: "throughput" }], r => r.unit);
	const width = labelWidth + barArea + 120;
	return [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="sans-serif" font-size="11">`,
		`<rect width="100%" height="100%" fill="white"/>`,
		`<text x="10" y="18" font-size="13" font-weight="bold">${escapeXml(title)}</text>`,
		...parts,
		"</svg>",
	].join("\n");
}
