// The dashboard's home page (docs/dashboard.md#home): how the business is
// doing, from GET /dashboard/api/metrics (docs/metrics.md defines every
// figure). Controls choose the range, the granularity, a product and the
// currency; each change reloads the figures. The range's totals are headline
// figures; four charts show the buckets, each with its table and CSV.

import { COLOURS, chartCard, destroyCharts } from "./charts.js";
import { moneyOfMinor } from "./money.js";
import { api, busy, el, field, percent, say, view } from "./ui.js";

const DAY = 86_400_000;
const addDays = (day, n) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const lengthOf = (from, to) => Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1;

/** The presets, ending today (the service's day, in its time zone: the API's default `to`). */
const PRESETS = {
	"30d": { label: "Last 30 days", from: today => addDays(today, -29) },
	"90d": { label: "Last 90 days", from: today => addDays(today, -89) },
	// This month and the 11 before it, from the 1st, so each month's bucket is whole but the last.
	"12m": {
		label: "Last 12 months",
		from: today => new Date(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 12, 1)).toISOString().slice(0, 10),
	},
};

/** "Automatic" picks the granularity from the range's length: up to 31 days by day, up to 180 by week, then by month. */
const automatic = (from, to) => {
	const days = lengthOf(from, to);
	return days <= 31 ? "day" : days <= 180 ? "week" : "month";
};

const money = (minor, currency) => moneyOfMinor(minor, currency);
const count = value => String(value);
const column = (field, title, kind, value = f => f[field]) => ({
	field,
	title,
	kind,
	value,
	format: kind === "money" ? money : kind === "rate" ? percent : count,
});
const cause = name => column(`churnedBy.${name}`, `Churned: ${name}`, "count", f => f.churnedBy[name]);

/** The headline figures: the whole range's, from the series' total. */
const HEADLINES = [
	["MRR", f => f.mrr, "money"],
	["Active subscribers", f => f.activeSubscribers, "count"],
	["Net new MRR", f => f.netNewMrr, "money"],
	["Churn rate", f => f.churnRate, "rate"],
	["ARPU", f => f.arpu, "money"],
	["Net volume", f => f.netVolume, "money"],
	["Recovery rate", f => f.recoveryRate, "rate"],
];

/** The four charts: their columns (the table's and the CSV's), what they draw, and their text alternative. */
function charts(series, format) {
	const t = series.total;
	const points = series.points;
	// A rate with none (null) stays null: a gap in its line, not a 0.
	const of = (pick, sign = 1) => points.map(p => (pick(p) === null ? null : sign * pick(p)));
	const first = points[0];
	const last = points[points.length - 1];
	return [
		{
			id: "mrr",
			title: "MRR and its movements",
			columns: [
				column("mrr", "MRR", "money"),
				column("newMrr", "New", "money"),
				column("expansionMrr", "Expansion", "money"),
				column("contractionMrr", "Contraction", "money"),
				column("churnedMrr", "Churned", "money"),
				column("reactivatedMrr", "Reactivated", "money"),
				column("netNewMrr", "Net new MRR", "money"),
				column("arpu", "ARPU", "money"),
			],
			spec: {
				axes: { y: { title: "MRR", format, stacked: false }, y1: { title: "Movements", format } },
				lines: [{ label: "MRR", data: of(p => p.mrr), colour: COLOURS.black }],
				bars: [
					{ label: "New", data: of(p => p.newMrr), colour: COLOURS.blue, axis: "y1", stack: "moves" },
					{ label: "Expansion", data: of(p => p.expansionMrr), colour: COLOURS.green, axis: "y1", stack: "moves" },
					{ label: "Reactivated", data: of(p => p.reactivatedMrr), colour: COLOURS.sky, axis: "y1", stack: "moves" },
					{ label: "Contraction", data: of(p => p.contractionMrr, -1), colour: COLOURS.orange, axis: "y1", stack: "moves" },
					{ label: "Churned", data: of(p => p.churnedMrr, -1), colour: COLOURS.vermillion, axis: "y1", stack: "moves" },
				],
			},
			description: `MRR went from ${format(first.mrr)} at the end of ${first.to} to ${format(last.mrr)} at the end of ${last.to}: new ${format(t.newMrr)}, expansion ${format(t.expansionMrr)}, reactivated ${format(t.reactivatedMrr)}, contraction ${format(t.contractionMrr)}, churned ${format(t.churnedMrr)}; net new MRR ${format(t.netNewMrr)}.`,
		},
		{
			id: "subscribers",
			title: "Subscribers",
			columns: [
				column("activeSubscribers", "Active", "count"),
				column("newSubscribers", "New", "count"),
				column("reactivatedSubscribers", "Reactivated", "count"),
				column("churnedSubscribers", "Churned", "count"),
				cause("unsubscribed"),
				cause("suspended"),
				cause("disputed"),
				cause("paused"),
				column("churnRate", "Churn rate", "rate"),
			],
			spec: {
				axes: {
					y: { title: "Active subscribers", format: count, stacked: false, whole: true },
					y1: { title: "Won and lost", format: count, whole: true },
				},
				lines: [{ label: "Active subscribers", data: of(p => p.activeSubscribers), colour: COLOURS.black }],
				bars: [
					{ label: "New", data: of(p => p.newSubscribers), colour: COLOURS.blue, axis: "y1", stack: "moves" },
					{ label: "Reactivated", data: of(p => p.reactivatedSubscribers), colour: COLOURS.sky, axis: "y1", stack: "moves" },
					...[
						["unsubscribed", COLOURS.vermillion],
						["suspended", COLOURS.orange],
						["disputed", COLOURS.purple],
						["paused", COLOURS.grey],
					].map(([name, colour]) => ({
						label: `Churned: ${name}`,
						data: of(p => p.churnedBy[name], -1),
						colour,
						axis: "y1",
						stack: "moves",
					})),
				],
			},
			description: `Active subscribers went from ${first.activeSubscribers} to ${last.activeSubscribers}: ${t.newSubscribers} new, ${t.reactivatedSubscribers} reactivated, ${t.churnedSubscribers} churned (unsubscribed ${t.churnedBy.unsubscribed}, suspended ${t.churnedBy.suspended}, disputed ${t.churnedBy.disputed}, paused ${t.churnedBy.paused}); churn rate ${percent(t.churnRate)}.`,
		},
		{
			id: "volume",
			title: "Volume",
			columns: [
				column("grossVolume", "Gross volume", "money"),
				column("refunds", "Refunds", "money"),
				column("disputes", "Disputes", "money"),
				column("chargebacks", "Chargebacks", "money"),
				column("netVolume", "Net volume", "money"),
			],
			spec: {
				axes: { y: { title: "Volume", format } },
				lines: [{ label: "Net volume", data: of(p => p.netVolume), colour: COLOURS.black, stack: "net" }],
				bars: [
					{ label: "Gross volume", data: of(p => p.grossVolume), colour: COLOURS.blue, stack: "money" },
					{ label: "Refunds", data: of(p => p.refunds, -1), colour: COLOURS.orange, stack: "money" },
					{ label: "Chargebacks", data: of(p => p.chargebacks, -1), colour: COLOURS.vermillion, stack: "money" },
					// Shown, not subtracted: the money is the merchant's until a dispute is lost.
					{ label: "Disputes opened", data: of(p => p.disputes), colour: COLOURS.purple, stack: "disputes" },
				],
			},
			description: `Gross volume ${format(t.grossVolume)}, refunds ${format(t.refunds)}, chargebacks ${format(t.chargebacks)}: net volume ${format(t.netVolume)}. Disputes opened ${format(t.disputes)}, shown but not subtracted.`,
		},
		{
			id: "recovery",
			title: "Renewals and recovery",
			columns: [
				column("renewalsAttempted", "Attempted", "count"),
				column("renewalsApprovedFirstTry", "Approved at first try", "count"),
				column("renewalsEnteredRecovery", "Entered recovery", "count"),
				column("renewalsRecoveredByRetries", "Recovered by retries", "count"),
				column("renewalsRecoveredByCardUpdate", "Recovered by card update", "count"),
				column("renewalsLost", "Lost", "count"),
				column("recoveryRate", "Recovery rate", "rate"),
			],
			spec: {
				axes: {
					y: { title: "Renewals", format: count, whole: true },
					y1: { title: "Recovery rate", format: percent, stacked: false, min: 0 },
				},
				lines: [{ label: "Recovery rate", data: of(p => p.recoveryRate), colour: COLOURS.black, axis: "y1", dashed: true }],
				bars: [
					{ label: "Approved at first try", data: of(p => p.renewalsApprovedFirstTry), colour: COLOURS.blue, stack: "first" },
					{ label: "Entered recovery", data: of(p => p.renewalsEnteredRecovery), colour: COLOURS.orange, stack: "first" },
					{ label: "Recovered by retries", data: of(p => p.renewalsRecoveredByRetries), colour: COLOURS.green, stack: "after" },
					{ label: "Recovered by card update", data: of(p => p.renewalsRecoveredByCardUpdate), colour: COLOURS.sky, stack: "after" },
					{ label: "Lost", data: of(p => p.renewalsLost), colour: COLOURS.vermillion, stack: "after" },
				],
			},
			description: `${t.renewalsAttempted} renewals attempted, ${t.renewalsApprovedFirstTry} approved at the first try, ${t.renewalsEnteredRecovery} entered recovery; ${t.renewalsRecoveredByRetries} recovered by retries, ${t.renewalsRecoveredByCardUpdate} by card update, ${t.renewalsLost} lost: recovery rate ${percent(t.recoveryRate)}.`,
		},
	];
}

/** The home page's state: what the controls chose, the service's today once known, and the answer shown. */
const state = { preset: "30d", from: null, to: null, granularity: "auto", productId: "", currency: null, today: null, answer: null };
/** Only the newest request's answer is drawn: a quick second change overtakes a slow first. */
let asked = 0;

/** The query of the controls' choice; before the first answer, none (the API's defaults: the last 30 days by day). */
function queryOf() {
	const params = new URLSearchParams();
	if (state.from && state.to) {
		params.set("from", state.from);
		params.set("to", state.to);
		params.set("granularity", state.granularity === "auto" ? automatic(state.from, state.to) : state.granularity);
	} else if (state.granularity !== "auto") params.set("granularity", state.granularity);
	if (state.productId) params.set("productId", state.productId);
	return params;
}

function controls(products, reload) {
	const option = (value, label, chosen) => el("option", { value, selected: value === chosen }, label);
	const range = el(
		"select",
		{ name: "range" },
		Object.entries(PRESETS).map(([value, { label }]) => option(value, label, state.preset)),
		option("custom", "Custom (from – to)", state.preset),
	);
	const from = el("input", { name: "from", type: "date", value: state.from ?? "" });
	const to = el("input", { name: "to", type: "date", value: state.to ?? "" });
	const granularity = el(
		"select",
		{ name: "granularity" },
		[
			["auto", "Automatic (by the range)"],
			["day", "Day"],
			["week", "Week"],
			["month", "Month"],
		].map(([value, label]) => option(value, label, state.granularity)),
	);
	const product = el(
		"select",
		{ name: "productId" },
		option("", "All products", state.productId),
		products.map(p => option(String(p.id), `${p.name} (${p.id}), ${p.currency}`, state.productId)),
	);
	const currencies = state.answer?.series.map(s => s.currency) ?? [];
	const currency = el(
		"select",
		{ name: "currency" },
		currencies.length ? currencies.map(c => option(c, c, state.currency)) : option("", "–", ""),
	);
	const form = el(
		"form",
		{ class: "filters home-controls", "aria-label": "Choose the figures" },
		field("Range", range),
		field("From", from),
		field("To", to),
		field("Granularity", granularity),
		field("Product", product),
		field("Currency", currency),
	);
	form.addEventListener("change", event => {
		const name = event.target.name;
		if (name === "currency") {
			state.currency = currency.value;
			return render(products, reload);
		}
		if (name === "range" && range.value !== "custom" && state.today) {
			state.preset = range.value;
			state.from = PRESETS[range.value].from(state.today);
			state.to = state.today;
		}
		if (name === "from" || name === "to") {
			if (!from.value || !to.value) return;
			state.preset = "custom";
			state.from = from.value;
			state.to = to.value;
		}
		state.granularity = granularity.value;
		state.productId = product.value;
		void reload();
	});
	form.addEventListener("submit", event => {
		event.preventDefault();
		void reload();
	});
	return form;
}

function headlines(series) {
	return el(
		"dl",
		{ class: "headlines", "aria-label": `The range's figures in ${series.currency}` },
		HEADLINES.map(([title, pick, kind]) =>
			el(
				"div",
				{ class: "headline" },
				el("dt", {}, title),
				el(
					"dd",
					{},
					kind === "money"
						? money(pick(series.total), series.currency)
						: kind === "rate"
							? percent(pick(series.total))
							: count(pick(series.total)),
				),
			),
		),
	);
}

/** Draws the answer: the controls again (the currencies are the answer's), the headline figures, the charts. */
function render(products, reload) {
	destroyCharts();
	const { answer } = state;
	const series = answer?.series.find(s => s.currency === state.currency) ?? answer?.series[0];
	if (series) state.currency = series.currency;
	const scope = state.productId ? `product ${state.productId}` : "all products";
	const cards = series ? charts(series, minor => money(minor, series.currency)) : [];
	const file = id => `${id}-${series.currency}-${answer.from}-to-${answer.to}-${answer.granularity}.csv`;
	const drawn = cards.map(c => chartCard({ ...c, series, file: file(c.id) }));
	view.replaceChildren(
		el("h1", {}, "Home"),
		controls(products, reload),
		answer
			? el(
					"p",
					{ class: "summary" },
					`From ${answer.from} to ${answer.to} by ${answer.granularity}, ${scope}, ${series ? `in ${series.currency}` : "no figures in this range"}; days in ${answer.timeZone}.`,
				)
			: null,
		series ? headlines(series) : null,
		el(
			"div",
			{ class: "charts" },
			drawn.map(d => d.card),
		),
	);
	for (const d of drawn) d.draw();
}

export async function homePage() {
	const page = location.hash;
	const products = await busy("Loading products", () => api("GET", "/products"));
	if (!products) return;
	const reload = async () => {
		if (state.from && state.to && state.from > state.to) return say("The range's first day is after its last.", true);
		const mine = ++asked;
		const answer = await busy("Loading the figures", () => api("GET", `/metrics?${queryOf()}`));
		// Not drawn over another page the user went to meanwhile.
		if (!answer || mine !== asked || location.hash !== page) return;
		state.answer = answer;
		state.today ??= answer.to;
		state.from = answer.from;
		state.to = answer.to;
		render(products, reload);
	};
	render(products, reload);
	await reload();
}
