// The home page's charts (docs/dashboard.md#home): Chart.js (served from
// node_modules at /vendor/chart.js/, loaded by index.html as window.Chart)
// draws each one on a canvas; beside it, for screen readers and for copying,
// the same numbers as a real table and as a CSV download of the series.

import { minorToDecimal } from "./money.js";
import { el } from "./ui.js";

/** Okabe–Ito colours: told apart with the common colour blindnesses; the legend, table and text say the rest. */
export const COLOURS = {
	blue: "#0072B2",
	green: "#009E73",
	sky: "#56B4E9",
	orange: "#E69F00",
	vermillion: "#D55E00",
	purple: "#CC79A7",
	yellow: "#F0E442",
	black: "#1b1f24",
	grey: "#8a949e",
};

/** The charts on the page and their CSV links, let go before the page draws new ones (a chart holds a resize observer). */
const drawn = new Set();
const links = new Set();

export function destroyCharts() {
	for (const chart of drawn) chart.destroy();
	for (const url of links) URL.revokeObjectURL(url);
	drawn.clear();
	links.clear();
}

/**
 * A chart of one series' points: `bars` stacked by their `stack` (a negative value goes down), `lines` over them,
 * each on the axis `y` (left) or `y1` (right), which `axes` titles and formats. The canvas is an image whose text
 * alternative is `description`; the tooltip says each value as the table does. The home page's cards draw with it,
 * and so does a customer's usage (usage.js).
 */
export function drawChart(canvas, { labels, bars = [], lines = [], axes }) {
	const dataset = (type, spec, order) => ({
		type,
		label: spec.label,
		data: spec.data,
		yAxisID: spec.axis ?? "y",
		stack: spec.stack ?? spec.label,
		backgroundColor: spec.colour,
		borderColor: spec.colour,
		borderWidth: type === "line" ? 2 : 0,
		borderDash: spec.dashed ? [6, 4] : undefined,
		pointRadius: labels.length > 45 ? 0 : 2,
		order,
		format: spec.format ?? axes[spec.axis ?? "y"].format,
	});
	// An axis of lines alone is not stacked (a stacked null would draw as 0); counts tick in whole numbers.
	const scale = ({ title, format, stacked = true, min, whole = false }, position) => ({
		position,
		stacked,
		min,
		title: { display: true, text: title },
		grid: position === "right" ? { drawOnChartArea: false } : {},
		ticks: { callback: value => format(value), precision: whole ? 0 : undefined },
	});
	const chart = new window.Chart(canvas, {
		data: {
			labels,
			// Lines are drawn over the bars (a lower order is drawn last).
			datasets: [...lines.map(l => dataset("line", l, 0)), ...bars.map(b => dataset("bar", b, 1))],
		},
		options: {
			// No motion: the figures change with the controls, and people who asked for reduced motion get none.
			animation: false,
			responsive: true,
			maintainAspectRatio: false,
			interaction: { mode: "index", intersect: false },
			scales: {
				x: { stacked: true, ticks: { autoSkip: true, maxRotation: 0 } },
				y: scale(axes.y, "left"),
				...(axes.y1 ? { y1: scale(axes.y1, "right") } : {}),
			},
			plugins: {
				legend: { position: "bottom", labels: { boxWidth: 12 } },
				tooltip: { callbacks: { label: item => `${item.dataset.label}: ${item.dataset.format(item.raw)}` } },
			},
		},
	});
	drawn.add(chart);
	return chart;
}

/** A bucket's label on the x axis: its first day, or its first and last day when it covers several. */
export const bucketLabel = point => (point.from === point.to ? point.from : `${point.from} – ${point.to}`);

/**
 * The CSV of one chart's series, as the API answered it: one row per point, the currency, the bucket's first and
 * last day, then the chart's fields by their API names. Amounts are exact decimals in the currency's major units
 * (1999 EUR is 19.99), counts as they are, rates as fractions (0.25), an empty cell for a rate with none (null).
 */
export function seriesCsv(series, columns) {
	const header = ["currency", "from", "to", ...columns.map(c => c.field)];
	const cell = (column, point) => {
		const value = column.value(point);
		if (value === null) return "";
		return column.kind === "money" ? minorToDecimal(value, series.currency) : String(value);
	};
	const rows = series.points.map(point => [series.currency, point.from, point.to, ...columns.map(c => cell(c, point))]);
	return `${[header, ...rows].map(row => row.join(",")).join("\r\n")}\r\n`;
}

/** The numbers of a chart as a table: a row per bucket, and the whole range in the footer. */
function numbersTable(title, series, columns) {
	const cells = figures => columns.map(c => el("td", {}, c.format(c.value(figures), series.currency)));
	return el(
		"div",
		{ class: "table-wrap" },
		el(
			"table",
			{ class: "numbers" },
			el("caption", {}, `${title}, ${series.currency}`),
			el(
				"thead",
				{},
				el(
					"tr",
					{},
					el("th", { scope: "col" }, "Period"),
					columns.map(c => el("th", { scope: "col" }, c.title)),
				),
			),
			el(
				"tbody",
				{},
				series.points.map(point => el("tr", {}, el("th", { scope: "row" }, bucketLabel(point)), cells(point))),
			),
			el("tfoot", {}, el("tr", {}, el("th", { scope: "row" }, "Whole range"), cells(series.total))),
		),
	);
}

/**
 * One chart's card: its title, the chart (an image described in words), the table of its numbers in a
 * disclosure, and a link that downloads the series as CSV (`file` names it).
 */
export function chartCard({ id, title, series, spec, columns, description, file }) {
	const canvas = el("canvas", { role: "img", "aria-label": `Chart: ${title}`, "aria-describedby": `${id}-description` }, description);
	const csv = URL.createObjectURL(new Blob([seriesCsv(series, columns)], { type: "text/csv;charset=utf-8" }));
	links.add(csv);
	const card = el(
		"section",
		{ class: "card chart-card", "aria-labelledby": `${id}-title`, "data-chart": id },
		el("h2", { id: `${id}-title` }, title),
		el("div", { class: "chart" }, canvas),
		el("p", { id: `${id}-description`, class: "description" }, description),
		el(
			"div",
			{ class: "chart-tools" },
			el("details", {}, el("summary", {}, `Table of the numbers: ${title}`), numbersTable(title, series, columns)),
			el("a", { href: csv, download: file, class: "download" }, `Download CSV: ${title}`),
		),
	);
	// Drawn once the canvas is in the page, so Chart.js measures its container.
	return { card, draw: () => drawChart(canvas, { labels: series.points.map(bucketLabel), ...spec }) };
}
