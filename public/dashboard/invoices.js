// A customer's invoices on its page (docs/dashboard.md#a-customers-invoices): newest first, each with its number,
// date, total, a link to its PDF and its lines. A usage line's description names the meter's units and the tiers it
// reached, as the invoice prints it; a line billing a period's late usage events is marked "late usage".

import { money } from "./money.js";
import { api, busy, el, say, table } from "./ui.js";

/** Invoices a page: "More invoices" adds the next ones. */
const PAGE = 10;

/** What each kind of line is, in a word or two (docs/invoices.md#lines); another kind as it is named. */
const KINDS = {
	plan: "plan",
	usage: "usage",
	usage_adjustment: "late usage",
	unused_time_credit: "unused time",
	new_plan_charge: "new plan",
	discount: "discount",
};

/** An http(s) address, or null: a link never runs a script. */
function safeUrl(url) {
	if (!url) return null;
	try {
		const parsed = new URL(url, location.href);
		return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
	} catch {
		return null;
	}
}

/**
 * One invoice: its number, date, total and PDF, and its lines. The PDF is the buyer's signed link's (`url` + `/pdf`,
 * no token needed); an invoice without a link has none.
 */
function invoiceSection(invoice) {
	const title = `Invoice ${invoice.number}`;
	const pdf = safeUrl(invoice.url ? `${invoice.url}/pdf` : null);
	const { currency } = invoice;
	return el(
		"section",
		{ class: "invoice", "aria-label": title },
		el("h3", {}, title),
		el(
			"dl",
			{},
			[
				["Date", invoice.issuedAt.slice(0, 10)],
				["Total", money(invoice.total, currency)],
				[
					"PDF",
					pdf
						? el("a", { href: pdf, target: "_blank", rel: "noopener" }, "PDF", el("span", { class: "visually-hidden" }, ` of ${title}`))
						: "–",
				],
			].flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
		),
		table(
			[
				["Description", line => line.description],
				["Kind", line => KINDS[line.kind] ?? line.kind],
				["Gross", line => money(line.gross, currency)],
			],
			invoice.lines,
			`${title}: lines, in ${currency}`,
			{ className: "invoice-lines", empty: "No line." },
		),
	);
}

/** The customer's invoices, newest first, into `into`: a page of them, "More invoices" adding the next while there are more. */
export async function customerInvoices(customerId, into) {
	const path = params => `/customers/${customerId}/invoices?${new URLSearchParams(params)}`;
	const first = await busy("Loading invoices", () => api("GET", path({ limit: String(PAGE) })));
	if (!first) return;
	const list = el("div", { class: "invoice-list" }, first.data.length ? first.data.map(invoiceSection) : el("p", {}, "No invoice yet."));
	const more = el("button", { type: "button", class: "secondary", hidden: !first.nextCursor }, "More invoices");
	let cursor = first.nextCursor;
	more.addEventListener("click", async () => {
		const page = await busy("Loading invoices", () => api("GET", path({ limit: String(PAGE), cursor })));
		if (!page) return;
		list.append(...page.data.map(invoiceSection));
		cursor = page.nextCursor;
		more.hidden = !cursor;
		say(cursor ? `${page.data.length} more invoices shown.` : "All invoices shown.");
	});
	into.replaceChildren(
		el(
			"section",
			{ class: "card invoices", "aria-labelledby": "invoices-title" },
			el("h2", { id: "invoices-title" }, "Invoices"),
			list,
			el("div", { class: "actions" }, more),
		),
	);
}
