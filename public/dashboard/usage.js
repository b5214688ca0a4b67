// Usage billing in the dashboard (docs/dashboard.md#meters-and-usage): the
// account's meters, which an operator creates (audited as "create meter"), and
// on a customer's page its usage this period (what it would bill now, per
// meter, with a chart) and its latest usage events.

import { COLOURS, destroyCharts, drawChart } from "./charts.js";
import { money, moneyOfMinorDecimal } from "./money.js";
import { api, busy, el, field, isOperator, say, table, view } from "./ui.js";

const AGGREGATIONS = [
	["count", "count: the events"],
	["sum", "sum: of a property"],
	["max", "max: a property's highest value"],
	["unique_count", "unique_count: a property's distinct values"],
	["latest", "latest: a property's latest value"],
];

/** A quantity as the meter aggregated it (up to 6 decimals), grouped as the browser's language groups numbers. */
const units = n => Number(n).toLocaleString(undefined, { maximumFractionDigits: 6 });

/**
 * A filter's value as typed after `key=`: a number, true or false, or a JSON string ("3" in quotes is the string) as
 * JSON reads them; anything else is the text itself. Events match a filter by type and value: 3 is not "3".
 */
function filterValue(text) {
	try {
		const value = JSON.parse(text);
		if (["string", "number", "boolean"].includes(typeof value)) return value;
	} catch {
		// Not JSON: the text itself.
	}
	return text;
}

/** A value as `key=value` shows it, so that typing it back gives the same value: a string that would read otherwise in quotes. */
const shownValue = value => (typeof value === "string" && filterValue(value) !== value ? JSON.stringify(value) : String(value));

/** Properties or filters as `key=value` pairs, "–" for none. */
const pairs = object =>
	Object.entries(object ?? {})
		.map(([key, value]) => `${key}=${shownValue(value)}`)
		.join(", ") || "–";

/** The filters text, one `key=value` a line, as the API takes them; `error` names the first line that is not one. */
function parseFilters(text) {
	const filters = {};
	const lines = text.split("\n");
	for (const [i, line] of lines.entries()) {
		if (!line.trim()) continue;
		const at = line.indexOf("=");
		const key = at > 0 ? line.slice(0, at).trim() : "";
		if (!key) return { error: `Filters: line ${i + 1} is not key=value` };
		if (key in filters) return { error: `Filters: ${key} is there twice` };
		filters[key] = filterValue(line.slice(at + 1).trim());
	}
	return { filters };
}

const METER_COLUMNS = [
	["Code", m => m.code],
	["Name", m => m.name],
	["Aggregation", m => m.aggregation],
	["Property", m => m.property ?? "–"],
	["Filters", m => pairs(m.filters)],
	["Created", m => m.createdAt],
];

/** An operator's form for a new meter: the property is asked for (and required) unless the meter counts events. */
function meterForm() {
	const aggregation = el(
		"select",
		{ name: "aggregation" },
		AGGREGATIONS.map(([value, label]) => el("option", { value }, label)),
	);
	const property = el("input", { name: "property", maxlength: 100 });
	const propertyField = field("Property", property);
	const filters = el("textarea", { name: "filters", rows: 2, cols: 24, placeholder: "region=eu" });
	const form = el(
		"form",
		{ class: "filters meter-form", "aria-label": "New meter" },
		field(
			"Code",
			el("input", {
				name: "code",
				required: true,
				maxlength: 64,
				pattern: "[a-z0-9][a-z0-9_.\\-]{0,63}",
				title: "Lower-case letters, digits, _ . and -, up to 64",
				autocapitalize: "none",
			}),
		),
		field("Name", el("input", { name: "name", required: true, maxlength: 200 })),
		field("Aggregation", aggregation),
		propertyField,
		field("Filters (key=value, one a line)", filters),
		el("button", { type: "submit" }, "Create meter"),
	);
	const showProperty = () => {
		const needed = aggregation.value !== "count";
		propertyField.hidden = !needed;
		property.required = needed;
	};
	aggregation.addEventListener("change", showProperty);
	showProperty();
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const parsed = parseFilters(filters.value);
		if (parsed.error) {
			say(parsed.error, true);
			return filters.focus();
		}
		const f = form.elements;
		const body = {
			code: f.code.value.trim(),
			name: f.name.value.trim(),
			aggregation: aggregation.value,
			...(aggregation.value === "count" ? {} : { property: property.value.trim() }),
			...(Object.keys(parsed.filters).length ? { filters: parsed.filters } : {}),
		};
		const created = await busy("Creating the meter", () => api("POST", "/meters", body));
		if (created) await metersPage().then(() => say(`Meter ${created.code} created.`));
	});
	return form;
}

/** The Meters page: the account's meters; an operator's form for a new one above them. */
export async function metersPage() {
	const meters = await busy("Loading meters", () => api("GET", "/meters"));
	if (!meters) return;
	view.replaceChildren(
		el("h1", {}, "Meters"),
		el(
			"p",
			{},
			"What the account counts of its customers' usage events (POST /api/usage), for the usage prices of its products. ",
			"A meter's aggregation and property never change once it is made.",
		),
		isOperator() ? meterForm() : null,
		table(METER_COLUMNS, meters, "Meters", { empty: "No meter yet." }),
	);
}

/** How a meter's usage is priced this period, in a few words: the tiers it reached, its packages, a minimum that applies. */
function pricedAs(line, currency) {
	const exact = minor => moneyOfMinorDecimal(minor, currency);
	const parts = [];
	if (line.tiers?.length) {
		const tiers = line.tiers.map(tier => {
			const range = tier.upTo === null ? `${units(tier.from + 1)}+` : `${units(tier.from + 1)}–${units(tier.upTo)}`;
			return `${range}: ${units(tier.quantity)} × ${exact(tier.unitAmount)}${tier.flatAmount ? ` + ${exact(tier.flatAmount)}` : ""}`;
		});
		parts.push(tiers.join("; "));
	}
	if (line.packages !== undefined) parts.push(`${units(line.packages)} package${line.packages === 1 ? "" : "s"}`);
	if (line.minimumAmount !== null && line.minimumAmount > line.usageAmount) parts.push(`minimum ${money(line.minimumAmount, currency)}`);
	return parts.join(", ") || "–";
}

/** A usage event's state: counted, counted late (billed with the next charge as an adjustment), or refused. */
function eventState(event) {
	if (event.status === "refused") return "refused: its period was billed";
	return event.late ? "late: billed with the next charge" : "counted";
}

const EVENT_COLUMNS = [
	["Time", e => e.timestamp],
	["Meter", e => e.meter],
	["Properties", e => pairs(e.properties)],
	["State", eventState],
	["Period", e => e.period],
	["Received", e => e.receivedAt],
	["Id", e => e.id],
];

/** The customer's usage events, newest first, a page at a time: "More events" adds the next page's rows. */
function eventList(customerId, first) {
	const list = el("div");
	const more = el("button", { type: "button", class: "secondary", hidden: !first.nextCursor }, "More events");
	let cursor = first.nextCursor;
	list.append(table(EVENT_COLUMNS, first.data, "Latest usage events", { empty: "No usage event yet." }));
	more.addEventListener("click", async () => {
		const params = new URLSearchParams({ limit: "20", cursor });
		const page = await busy("Loading usage events", () => api("GET", `/customers/${customerId}/usage-events?${params}`));
		if (!page) return;
		const rows = table(EVENT_COLUMNS, page.data, "").querySelectorAll("tbody tr");
		if (page.data.length) list.querySelector("tbody").append(...rows);
		cursor = page.nextCursor;
		more.hidden = !cursor;
		say(cursor ? `${page.data.length} more usage events shown.` : "All usage events shown.");
	});
	return [list, el("div", { class: "actions" }, more)];
}

/** A bar chart of what each meter would bill now; the table above has the same numbers. */
function usageChart(usage) {
	const amounts = usage.meters.map(m => `${m.name} ${money(m.amount, usage.currency)}`).join(", ");
	const description = `What each meter would bill now: ${amounts}.`;
	const canvas = el(
		"canvas",
		{ role: "img", "aria-label": "Chart: amount per meter this period", "aria-describedby": "usage-chart-description" },
		description,
	);
	const card = el(
		"div",
		{ class: "usage-chart", "data-chart": "usage" },
		el("div", { class: "chart" }, canvas),
		el("p", { id: "usage-chart-description", class: "description" }, description),
	);
	const draw = () =>
		drawChart(canvas, {
			labels: usage.meters.map(m => m.name),
			bars: [{ label: `Amount (${usage.currency})`, data: usage.meters.map(m => m.amount), colour: COLOURS.blue }],
			axes: { y: { title: usage.currency, format: value => money(value, usage.currency), min: 0 } },
		});
	return { card, draw };
}

/**
 * A customer's usage this period into `into`, when its product has usage prices: per meter its quantity, the tiers
 * it reached and its amount, what it would bill now, a chart, and the latest usage events. Nothing for a product
 * without usage prices (it is not asked for when the products list says so).
 */
export async function customerUsage(customerId, product, into) {
	if (product && Array.isArray(product.usagePrices) && product.usagePrices.length === 0) return;
	const answers = await busy("Loading usage", () =>
		Promise.all([api("GET", `/customers/${customerId}/usage`), api("GET", `/customers/${customerId}/usage-events?limit=20`)]),
	);
	if (!answers) return;
	const [usage, events] = answers;
	if (!usage || usage.meters.length === 0) return into.replaceChildren();
	const { currency } = usage;
	const chart = usageChart(usage);
	into.replaceChildren(
		el(
			"section",
			{ class: "card usage", "aria-labelledby": "usage-title" },
			el("h2", { id: "usage-title" }, "Usage this period"),
			el(
				"dl",
				{},
				[
					["Period", `${usage.periodStart ?? "–"} to ${usage.periodEnd ?? "–"}`],
					["Would bill now", money(usage.amount, currency)],
				].flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
			),
			el("p", { class: "description" }, "Before coupons, tax rules and credit, which apply to the renewal's whole charge."),
			table(
				[
					["Meter", m => `${m.name} (${m.meter})`],
					["Quantity", m => units(m.quantity)],
					["Tiers reached", m => pricedAs(m, currency)],
					["Amount", m => money(m.amount, currency)],
				],
				usage.meters,
				`Usage this period, in ${currency}`,
				{ className: "usage-meters" },
			),
			chart.card,
			el("h3", {}, "Latest usage events"),
			eventList(customerId, events),
		),
	);
	// One chart at a time: the home page's (or an earlier customer's) are let go before this one is drawn.
	destroyCharts();
	chart.draw();
}
