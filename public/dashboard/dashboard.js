// The merchant dashboard (docs/dashboard.md): a small client of /dashboard/api.
// Pages are built with DOM calls and textContent only (no HTML from data), every
// change sends the session's CSRF token, and the API token never reaches here.

import { homePage } from "./home.js";
import { customerInvoices } from "./invoices.js";
import { midMetrics } from "./mid-metrics.js";
import { processorForm, processorOf } from "./mid-processors.js";
import { money } from "./money.js";
import { portalPage } from "./portal-settings.js";
import { ApiFailure, api, busy, confirmAction, el, field, isOperator, percent, say, select, session, table, view } from "./ui.js";
import { customerUsage, metersPage } from "./usage.js";

/** A list page: filters, a table, and a button for the next page while there is one. */
function listPage({ title, path, filters = [], columns, query = () => ({}) }) {
	const form = el(
		"form",
		{ class: "filters", "aria-label": `Filter ${title.toLowerCase()}` },
		filters,
		el("button", { type: "submit" }, "Show"),
	);
	const results = el("div");
	const more = el("button", { type: "button", class: "secondary", hidden: true }, "Next page");
	let cursor = null;
	async function load(reset) {
		if (reset) {
			cursor = null;
			results.replaceChildren();
		}
		const params = new URLSearchParams({ limit: "20", ...Object.fromEntries(Object.entries(query(form)).filter(([, v]) => v)) });
		if (cursor) params.set("cursor", cursor);
		const page = await busy(`Loading ${title.toLowerCase()}`, () => api("GET", `${path}?${params}`));
		if (!page) return;
		results.append(table(columns, page.data, title));
		cursor = page.nextCursor;
		more.hidden = !cursor;
	}
	form.addEventListener("submit", event => {
		event.preventDefault();
		void load(true);
	});
	more.addEventListener("click", () => void load(false));
	view.replaceChildren(el("h1", {}, title), form, results, more);
	void load(true);
}

/** Where a customer stands in recovery (docs/recovery.md), from its status and this period's failed attempts. */
function recoveryState(customer) {
	if (customer.status === "SUSPENDED") return "suspended: renewals stopped after declines; a new card (card update link) brings it back";
	if (customer.status === "ACTIVE" && customer.attempts > 0) return `retrying: ${customer.attempts} declined attempt(s) this period`;
	return "none";
}

function pauseState(customer) {
	if (!customer.pause) return "no";
	return `since ${customer.pause.pausedAt}, ${customer.pause.resumeAt ? `resumes ${customer.pause.resumeAt}` : "until resumed"}`;
}

/** An ACTIVE customer can be paused (optionally until a date), a PAUSED one resumed (docs/subscriptions.md). */
function pauseActions(customer) {
	const id = customer.id;
	const after = verb => answer => {
		if (answer) void pages.customer(id).then(() => say(`Customer ${id} ${verb}`));
	};
	if (customer.status === "PAUSED") {
		const resume = () => busy("Resuming", () => api("POST", `/customers/${id}/resume`)).then(after("resumed"));
		return [el("button", { type: "button", class: "secondary", onclick: resume }, "Resume")];
	}
	if (customer.status !== "ACTIVE") return [];
	const until = el("input", { name: "resumeAt", type: "datetime-local" });
	const pause = async () => {
		const resumeAt = until.value ? new Date(until.value).toISOString() : undefined;
		const when = resumeAt ? `until ${until.value.replace("T", " ")}` : "until you resume it";
		if (!(await confirmAction(`Pause customer ${id} (${customer.email}) ${when}? No renewal runs meanwhile.`))) return;
		await busy("Pausing", () => api("POST", `/customers/${id}/pause`, resumeAt ? { resumeAt } : {})).then(after("paused"));
	};
	return [field("Resume on (optional)", until), el("button", { type: "button", class: "secondary", onclick: pause }, "Pause")];
}

/** An ACTIVE customer's end can be scheduled for its period's end, and undone until then (docs/subscriptions.md). */
function cancellationActions(customer) {
	const id = customer.id;
	const after = verb => answer => {
		if (answer) void pages.customer(id).then(() => say(`Customer ${id}: ${verb}`));
	};
	if (customer.cancelAt) {
		const undo = () =>
			busy("Undoing the cancellation", () => api("DELETE", `/customers/${id}/cancel-at-period-end`)).then(after("renews again"));
		return [el("button", { type: "button", class: "secondary", onclick: undo }, "Undo cancellation")];
	}
	if (customer.status !== "ACTIVE" || !customer.nextRenewalTimestamp) return [];
	const schedule = async () => {
		const question = `Cancel customer ${id} (${customer.email}) at the period's end, ${customer.nextRenewalTimestamp}? It is not charged again.`;
		if (!(await confirmAction(question))) return;
		await busy("Scheduling the cancellation", () => api("POST", `/customers/${id}/cancel-at-period-end`, {})).then(
			after("cancelled at the period's end"),
		);
	};
	return [el("button", { type: "button", class: "secondary", onclick: schedule }, "Cancel at period end")];
}

const CHANGE_MODES = [
	["now_prorated", "Now, prorated"],
	["now_without_proration", "Now, without proration"],
	["at_period_end", "At the period's end"],
];

const LINE_KINDS = { unused_time_credit: "Unused time credit", new_plan_charge: "New plan charge" };

const productName = (products, id) => {
	const product = products.get(id);
	return product ? `${product.name} (${id})` : `product ${id}`;
};

const renewsEvery = ({ every, unit }) => `every ${every === 1 ? "" : `${every} `}${unit}${every === 1 ? "" : "s"}`;

function pendingState(customer, products) {
	const pending = customer.pendingChange;
	return pending ? `${productName(products, pending.productId)} × ${pending.quantity} from ${pending.at}` : "–";
}

/** A quote's lines, and what it comes to, each amount with its currency: two tables, the second narrow enough for a phone. */
function quoteTable(quote, products) {
	const amount = value => money(value, quote.currency);
	const columns = [
		["Line", l => LINE_KINDS[l.kind] ?? l.kind],
		["Product", l => productName(products, l.productId)],
		["Quantity", l => l.quantity],
		["Unit amount", l => amount(l.unitAmount)],
		["From", l => l.from],
		["To", l => l.to],
		["Amount", l => amount(l.amount)],
	];
	const next = quote.nextRenewal;
	const totals = [
		["Due", amount(quote.due)],
		["Paid from credit", amount(quote.creditUsed)],
		["Charged to the card now", amount(quote.charge)],
		["Added to credit", amount(quote.creditAdded)],
		["Credit after", amount(quote.creditAfter)],
		[`Next renewal${next.at ? ` on ${next.at}` : ""}: ${productName(products, next.productId)} × ${next.quantity}`, amount(next.amount)],
	];
	return [
		table(columns, quote.lines, `Quote ${quote.quoteId}, valid until ${quote.expiresAt}`, {
			className: "quote",
			visibleCaption: true,
			empty: "Nothing to prorate.",
		}),
		el(
			"table",
			{ class: "totals" },
			el("caption", { class: "visually-hidden" }, "What the quote comes to"),
			el(
				"tbody",
				{},
				totals.map(([title, value]) => el("tr", {}, el("th", { scope: "row" }, title), el("td", {}, value))),
			),
		),
	];
}

/**
 * An ACTIVE customer's change in place (docs/subscriptions.md): a product of the same currency that renews, a
 * quantity and when; "Quote" answers a binding quote, "Confirm change" applies exactly it. Changing the form
 * drops the quote shown.
 */
function changeSection(customer, products) {
	const id = customer.id;
	const current = products.get(customer.productId);
	const choices = [...products.values()].filter(
		p => p.id === customer.productId || (p.active && p.renewal && p.currency === current?.currency),
	);
	const product = el(
		"select",
		{ name: "productId" },
		choices.map(p =>
			el(
				"option",
				{ value: p.id, selected: p.id === customer.productId },
				`${p.name} (${p.id}), ${money(p.amount, p.currency)} ${p.renewal ? renewsEvery(p.renewal) : "once"}${p.id === customer.productId ? ", current" : ""}`,
			),
		),
	);
	const quantity = el("input", { name: "quantity", type: "number", min: 1, max: 10000, step: 1, required: true, value: customer.quantity });
	const mode = el(
		"select",
		{ name: "mode" },
		CHANGE_MODES.map(([value, label]) => el("option", { value }, label)),
	);
	const quoted = el("div", { class: "quoted" });
	const form = el(
		"form",
		{ class: "filters change", "aria-label": "Change subscription" },
		field("Product", product),
		field("Quantity", quantity),
		field("When", mode),
		el("button", { type: "submit", class: "secondary" }, "Quote"),
	);
	form.addEventListener("input", () => quoted.replaceChildren());
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const body = { productId: Number(product.value), quantity: Number(quantity.value), mode: mode.value };
		const quote = await busy("Quoting", () => api("POST", `/customers/${id}/change-quote`, body));
		if (!quote) return quoted.replaceChildren();
		const confirm = el("button", { type: "button" }, "Confirm change");
		confirm.addEventListener("click", async () => {
			const answer = await busy("Changing the subscription", () =>
				api("POST", `/customers/${id}/change`, { ...body, quoteId: quote.quoteId }),
			);
			if (!answer) return;
			const done =
				body.mode === "at_period_end"
					? `Customer ${id}: change scheduled for ${answer.customer.pendingChange?.at ?? "the period's end"}`
					: `Customer ${id} changed${answer.transaction ? `: ${money(answer.transaction.amount, quote.currency)} charged` : ""}`;
			await pages.customer(id).then(() => say(done));
		});
		quoted.replaceChildren(...quoteTable(quote, products), el("div", { class: "actions" }, confirm));
		say(`Quote ${quote.quoteId}: ${money(quote.charge, quote.currency)} to charge now`);
		confirm.focus();
	});
	const cancel = customer.pendingChange
		? el(
				"button",
				{
					type: "button",
					class: "secondary",
					onclick: async () => {
						const answer = await busy("Cancelling the pending change", () => api("DELETE", `/customers/${id}/pending-change`));
						if (answer) await pages.customer(id).then(() => say(`Customer ${id}: the pending change is cancelled`));
					},
				},
				"Cancel pending change",
			)
		: null;
	return el(
		"section",
		{ class: "card", "aria-labelledby": "change-title" },
		el("h2", { id: "change-title" }, "Change subscription"),
		cancel ? el("div", { class: "actions" }, el("span", {}, `Pending: ${pendingState(customer, products)}`), cancel) : null,
		form,
		quoted,
	);
}

/** A coupon's discount as the operator reads it: "20 %", or "3 EUR". */
const discountOf = c => (c.percentOff !== null ? `${c.percentOff} %` : money(c.amountOff, c.currency));

/** How long a coupon lasts: "once", "3 periods" (repeating), "forever". */
const durationOf = c => (c.duration === "repeating" ? `${c.durationInPeriods} periods` : c.duration);

/** A customer's coupon (docs/coupons.md): its code, discount and the charges it still discounts. */
function couponState(coupon) {
	if (!coupon) return "–";
	const left = coupon.periodsLeft === null ? "every charge" : `${coupon.periodsLeft} more charge${coupon.periodsLeft === 1 ? "" : "s"}`;
	return `${coupon.code}: ${discountOf(coupon)} off, ${left}`;
}

/** An operator's form for a new coupon (docs/coupons.md); its answer reloads the page. */
function couponForm() {
	const kind = el(
		"select",
		{ name: "kind" },
		el("option", { value: "percent" }, "Percent off"),
		el("option", { value: "amount" }, "Amount off"),
	);
	const duration = el(
		"select",
		{ name: "duration" },
		["once", "repeating", "forever"].map(d => el("option", { value: d }, d)),
	);
	const form = el(
		"form",
		{ class: "filters", "aria-label": "New coupon" },
		field("Code", el("input", { name: "code", required: true, pattern: "[A-Za-z0-9_-]{3,40}" })),
		field("Kind", kind),
		field("Value", el("input", { name: "value", inputmode: "decimal", required: true, size: 6 })),
		field("Currency", el("input", { name: "currency", size: 4, placeholder: "EUR" })),
		field("Duration", duration),
		field("Periods", el("input", { name: "periods", type: "number", min: 1, max: 120, size: 4 })),
		field("Max redemptions", el("input", { name: "maxRedemptions", type: "number", min: 1, size: 6 })),
		el("button", { type: "submit" }, "Create coupon"),
	);
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const f = form.elements;
		const value = Number(f.value.value);
		const body = {
			code: f.code.value.trim(),
			duration: f.duration.value,
			...(f.kind.value === "percent" ? { percentOff: value } : { amountOff: value, currency: f.currency.value.trim().toUpperCase() }),
			...(f.duration.value === "repeating" ? { durationInPeriods: Number(f.periods.value) } : {}),
			...(f.maxRedemptions.value ? { maxRedemptions: Number(f.maxRedemptions.value) } : {}),
		};
		const created = await busy("Creating the coupon", () => api("POST", "/coupons", body));
		if (created) await pages.coupons().then(() => say(`Coupon ${created.code} created.`));
	});
	return form;
}

/** A page showing one list the API answers whole, as a table. */
async function tablePage(title, path, columns) {
	const rows = await busy(`Loading ${title.toLowerCase()}`, () => api("GET", path));
	if (!rows) return;
	view.replaceChildren(el("h1", {}, title), table(columns, rows, title));
}

/** The columns of a transaction wherever one is listed. */
const TRANSACTION_COLUMNS = [
	["Id", t => t.id],
	["Time", t => t.timestamp],
	["Type", t => t.type],
	["Status", t => t.status],
	["Amount", t => money(t.amount, t.currency)],
	["Refund status", t => t.refundStatus],
	// 3-D Secure (docs/authentication.md): the outcome and its ECI, for a checkout's charge or hold.
	[
		"Authentication",
		t => (t.authentication ? `${t.authentication.outcome}${t.authentication.eci ? ` (ECI ${t.authentication.eci})` : ""}` : "–"),
	],
];

/** The columns of an email sent to a buyer. */
/** A customer's events, newest first: what happened, and who did it (`by`: the buyer, in the customer portal). */
const CUSTOMER_EVENT_COLUMNS = [
	["When", e => e.createdAt],
	["Event", e => e.type],
	["By", e => (e.data?.by === "buyer" ? "the buyer (portal)" : "–")],
	["Reason", e => [e.data?.cancellation?.reason, e.data?.cancellation?.comment].filter(Boolean).join(": ") || "–"],
];

const EMAIL_COLUMNS = [
	["Made", e => e.createdAt],
	["Kind", e => e.kind],
	["Subject", e => e.subject ?? "–"],
	["Status", e => e.status],
	["Sent", e => e.sentAt ?? "–"],
	["Attempts", e => e.attempts],
	["Last error", e => e.lastError ?? "–"],
];

const EMAIL_SETTINGS = [
	["enabled", "Send emails to buyers"],
	["from", "Sender address (empty: the service's)"],
	["fromName", "Sender name (empty: the account's name)"],
	["replyTo", "Reply-to address"],
	["language", "Language"],
	["brandColor", "Colour (#rrggbb)"],
];

/** The email settings as a form: an operator changes them, a viewer reads them (its fields disabled). */
function emailSettingsForm(settings) {
	const input = (name, value) => {
		if (name === "enabled") return el("input", { name, type: "checkbox", checked: value });
		if (name === "language")
			return el(
				"select",
				{ name },
				["en", "de"].map(l => el("option", { value: l, selected: l === value }, l)),
			);
		return el("input", { name, type: name === "from" || name === "replyTo" ? "email" : "text", value: value ?? "" });
	};
	const fields = EMAIL_SETTINGS.map(([name, label]) => field(label, input(name, settings[name])));
	const form = el(
		"form",
		{ "aria-label": "Email settings", class: "card settings" },
		fields,
		isOperator() ? el("button", { type: "submit" }, "Save") : null,
	);
	if (!isOperator()) for (const control of form.elements) control.disabled = true;
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const text = name => form.elements[name].value.trim() || null;
		const body = {
			enabled: form.elements.enabled.checked,
			from: text("from"),
			fromName: text("fromName"),
			replyTo: text("replyTo"),
			language: form.elements.language.value,
			brandColor: text("brandColor"),
		};
		const saved = await busy("Saving the email settings", () => api("PATCH", "/email-settings", body));
		if (saved) say("Email settings saved.");
	});
	return form;
}

const customerLink = id => el("a", { href: `#/customer/${id}` }, String(id));

/** A count and its amounts by currency: `2 (€19.98)`; `0` alone. */
function counted(count, amounts = {}) {
	const sums = Object.entries(amounts).map(([currency, amount]) => money(amount, currency));
	return sums.length === 0 ? String(count) : `${count} (${sums.join(", ")})`;
}

/** Where billing warns about a MID's chargeback ratio (WARNING_RATIO, docs/disputes.md#mid-health). */
/** The warning's text, at the service's threshold (CHARGEBACK_WARNING_PERCENT). */
const midWarning = ratio => `Chargeback ratio at or above ${(ratio * 100).toFixed(2)} %`;

/** The figures shown for each period of a MID's health, in the order of their columns. */
const MID_FIGURES = [
	["Sales", f => counted(f.sales, f.salesAmount)],
	["Approval rate", f => percent(f.approvalRate)],
	["Refunds", f => counted(f.refunds, f.refundAmount)],
	["Disputes", f => counted(f.disputes, f.disputeAmount)],
	["Chargebacks", f => counted(f.chargebacks)],
	["Chargeback ratio", f => percent(f.chargebackRatio)],
];

/** A MID's monthly cap and what the month's sales in its currency used of it. */
function capOf(mid, month) {
	if (!mid?.monthlyCap) return "none";
	const { amount, currency } = mid.monthlyCap;
	return `${money(amount, currency)} (${money(month.salesAmount[currency] ?? 0, currency)} used)`;
}

/**
 * The MIDs' health (GET /merchant-accounts/health) beside their routing and processor (GET /merchant-accounts): one group of rows
 * per MID, its own cells once, then a row per period (this month, the last 30 days) with its figures; the warning in
 * words under the MID's name.
 */
function midTable(health, mids) {
	const own = ["Id", "MID", "Weight", "Monthly cap", "Processor"];
	const periods = [
		["month", "This month", f => [f.period]],
		["last30Days", "Last 30 days", f => [f.from, " to ", f.to]],
	];
	const columns = [...own, "Period", ...MID_FIGURES.map(([title]) => title)];
	const groups = health.map(h => {
		const mid = mids.get(h.midId);
		const rows = periods.map(([key, title, dates], i) => {
			const figures = h[key];
			const ownCells =
				i === 0
					? [
							el("td", { rowspan: periods.length }, h.midId),
							el(
								"th",
								{ scope: "rowgroup", rowspan: periods.length },
								h.name,
								mid && !mid.active ? " (inactive)" : null,
								h.warning ? el("strong", { class: "warning" }, midWarning(h.warningRatio)) : null,
							),
							el("td", { rowspan: periods.length }, mid?.weight ?? "–"),
							el("td", { rowspan: periods.length }, capOf(mid, h.month)),
							el("td", { rowspan: periods.length }, processorOf(mid)),
						]
					: [];
			return el(
				"tr",
				{},
				ownCells,
				el(
					"th",
					{ scope: "row", class: "period" },
					title,
					el(
						"span",
						{ class: "dates" },
						dates(figures).map((part, n) => (n % 2 === 0 ? el("span", { class: "date" }, part) : part)),
					),
				),
				MID_FIGURES.map(([, cell]) => el("td", { class: "figure" }, cell(figures))),
			);
		});
		return el("tbody", {}, rows);
	});
	return el(
		"div",
		{ class: "table-wrap" },
		el(
			"table",
			{ class: "mids" },
			el("caption", { class: "visually-hidden" }, "Merchant accounts"),
			el(
				"thead",
				{},
				el(
					"tr",
					{},
					columns.map(title => el("th", { scope: "col" }, title)),
				),
			),
			groups.length === 0 ? el("tbody", {}, el("tr", {}, el("td", { colspan: columns.length }, "Nothing here."))) : groups,
		),
	);
}

const pages = {
	home: homePage,

	customers() {
		listPage({
			title: "Customers",
			path: "/customers",
			filters: [
				field("Email", el("input", { name: "email", type: "email" })),
				field("Status", select("status", ["PENDING", "ACTIVE", "PAUSED", "SUSPENDED", "DECLINED", "ABANDONED", "UNSUBSCRIBED"])),
			],
			query: form => ({ email: form.elements.email.value.trim(), status: form.elements.status.value }),
			columns: [
				["Id", c => customerLink(c.id)],
				["Email", c => c.email],
				["Name", c => `${c.name} ${c.lastName}`.trim()],
				["Status", c => c.status],
				["Product", c => c.productId],
				["Signed up", c => c.subscriptionTimestamp],
				["Next renewal", c => c.nextRenewalTimestamp ?? "–"],
			],
		});
	},

	async customer(id) {
		const answers = await busy("Loading the customer", () => Promise.all([api("GET", `/customers/${id}`), api("GET", "/products")]));
		if (answers === undefined) return;
		const [customer, productList] = answers;
		if (customer === null) return view.replaceChildren(el("h1", {}, `Customer ${id}`), el("p", {}, "No such customer."));
		const products = new Map(productList.map(p => [p.id, p]));
		const currency = products.get(customer.productId)?.currency ?? "";
		const transactions = el("div");
		const emails = el("div");
		const events = el("div");
		const usage = el("div");
		const invoices = el("div");
		const actions = el("div", { class: "actions" });
		if (isOperator() && customer.status !== "UNSUBSCRIBED") {
			const linkOut = el("p", { class: "link", role: "status" });
			actions.append(
				el(
					"button",
					{
						type: "button",
						class: "secondary",
						onclick: async () => {
							const answer = await busy("Making a card update link", () => api("POST", `/customers/${id}/card-update-link`));
							if (answer) {
								linkOut.replaceChildren(
									"Send this link to the customer (valid until ",
									answer.expiresAt,
									"): ",
									el("code", {}, answer.link),
								);
							}
						},
					},
					"Card update link",
				),
				linkOut,
			);
			actions.append(...pauseActions(customer), ...cancellationActions(customer));
			actions.append(
				el(
					"button",
					{
						type: "button",
						class: "danger",
						onclick: async () => {
							if (!(await confirmAction(`Unsubscribe customer ${id} (${customer.email})? Renewals stop.`))) return;
							const answer = await busy("Unsubscribing", () => api("POST", `/customers/${id}/unsubscribe`));
							if (answer) {
								say(answer.message);
								void pages.customer(id).then(() => say(answer.message));
							}
						},
					},
					"Unsubscribe",
				),
			);
		}
		view.replaceChildren(
			el("h1", {}, `Customer ${id}`),
			el(
				"div",
				{ class: "card" },
				el(
					"dl",
					{},
					[
						["Email", customer.email],
						["Name", `${customer.name} ${customer.lastName}`.trim()],
						["Status", customer.status],
						["Product", productName(products, customer.productId)],
						["Quantity", customer.quantity],
						["Credit", currency ? money(customer.credit, currency) : String(customer.credit)],
						["Pending change", pendingState(customer, products)],
						["Coupon", couponState(customer.coupon)],
						[
							"Card",
							`${customer.cardType} ${customer.cardBin}…, expires ${customer.cardExpiredTime.slice(0, 2)}/${customer.cardExpiredTime.slice(2)}`,
						],
						["Signed up", customer.subscriptionTimestamp],
						["Renewals", customer.renewalActive ? "on" : "off"],
						["Next renewal", customer.nextRenewalTimestamp ?? "–"],
						["Last billed", customer.lastTimeBilled ?? "–"],
						["Failed attempts this period", customer.attempts],
						["Paused", pauseState(customer)],
						["Cancels at", customer.cancelAt ?? "–"],
						["Recovery", recoveryState(customer)],
					].flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
				),
				actions,
			),
			isOperator() && customer.status === "ACTIVE" ? changeSection(customer, products) : null,
			usage,
			el("h2", {}, "Transactions"),
			transactions,
			el("h2", {}, "Events"),
			events,
			el("h2", {}, "Emails"),
			emails,
			invoices,
		);
		const lists = await busy("Loading transactions, events and emails", () =>
			Promise.all([
				api("GET", `/customers/${id}/transactions?limit=100`),
				api("GET", `/customers/${id}/emails`),
				api("GET", `/events?customerId=${id}&limit=100`),
			]),
		);
		if (!lists) return;
		const [page, sent, happened] = lists;
		events.replaceChildren(table(CUSTOMER_EVENT_COLUMNS, happened.data, "Events", { empty: "No event yet." }));
		transactions.replaceChildren(
			table(
				[...TRANSACTION_COLUMNS, ["", t => (isOperator() && t.refundStatus === "REFUNDABLE" ? refundForm(t, id) : null)]],
				page.data,
				"Transactions",
			),
		);
		// The emails sent to the buyer (docs/emails.md), newest first.
		emails.replaceChildren(table(EMAIL_COLUMNS, sent, "Emails", { empty: "No email was sent to this customer." }));
		// Its invoices, newest first, with their lines (invoices.js).
		await customerInvoices(id, invoices);
		// Its usage this period, when its product has usage prices (usage.js).
		await customerUsage(id, products.get(customer.productId), usage);
	},

	transactions() {
		listPage({
			title: "Transactions",
			path: "/transactions",
			filters: [
				field("Type", select("type", ["SUBSCRIPTION_START", "PREAUTHORIZATION", "RENEWAL", "REFUNDED"])),
				field("Status", select("status", ["APPROVED", "DECLINED", "ERROR"])),
			],
			query: form => ({ type: form.elements.type.value, status: form.elements.status.value }),
			columns: TRANSACTION_COLUMNS,
		});
	},

	disputes() {
		listPage({
			title: "Disputes",
			path: "/disputes",
			filters: [field("Status", select("status", ["NEEDS_RESPONSE", "UNDER_REVIEW", "WON", "LOST"]))],
			query: form => ({ status: form.elements.status.value }),
			columns: [
				["Id", d => d.id],
				["Opened", d => d.openedAt],
				["Status", d => d.status],
				["Reason", d => d.reason],
				["Amount", d => money(d.amount, d.currency)],
				["Evidence due", d => d.evidenceDueBy ?? "–"],
				["Transaction", d => d.disputedTransactionId],
				["Chargeback", d => d.chargebackTransactionId ?? "–"],
				["Customer", d => customerLink(d.customerId)],
				["MID", d => d.midId],
			],
		});
	},

	events() {
		listPage({
			title: "Events",
			path: "/events",
			filters: [field("Type", select("type", ["TRANSACTION", "CONVERSION", "REFUND", "CANCELLATION", "SUSPENSION"]))],
			query: form => ({ type: form.elements.type.value }),
			columns: [
				["Time", e => e.createdAt],
				["Type", e => e.type],
				["Customer", e => customerLink(e.customerId)],
				["Transaction", e => e.transaction_id ?? "–"],
				["Id", e => e.id],
			],
		});
	},

	webhooks() {
		return tablePage("Webhook deliveries", "/webhooks?limit=100", [
			["Event", d => d.type],
			["Customer", d => customerLink(d.customerId)],
			["Status", d => d.status],
			["Attempts", d => d.attempts],
			["Last error", d => d.lastError ?? "–"],
			[
				"Log",
				d =>
					el(
						"details",
						{},
						el("summary", {}, "Attempts"),
						el(
							"pre",
							{},
							d.attemptLog.map(a => `#${a.attempt} ${a.time} ${a.statusCode ?? "no answer"} ${a.error ?? ""}`).join("\n") || "none",
						),
					),
			],
			[
				"",
				d =>
					isOperator()
						? el(
								"button",
								{
									type: "button",
									class: "secondary",
									onclick: async () => {
										const answer = await busy("Redelivering", () => api("POST", `/webhooks/${d.id}/redeliver`));
										if (answer) say(`Event ${d.id} is ${answer.status} again.`);
									},
								},
								"Redeliver",
							)
						: null,
			],
		]);
	},

	products() {
		return tablePage("Products", "/products", [
			["Id", p => p.id],
			["Name", p => p.name],
			["Amount", p => money(p.amount, p.currency)],
			["Billing", p => p.billing],
			// 3-D Secure at checkout (docs/authentication.md).
			["Authentication", p => p.authentication],
			["Active", p => (p.active ? "yes" : "no")],
		]);
	},

	meters: metersPage,

	async coupons() {
		const coupons = await busy("Loading coupons", () => api("GET", "/coupons"));
		if (!coupons) return;
		const deactivate = c =>
			isOperator() && c.active
				? el(
						"button",
						{
							type: "button",
							class: "danger",
							onclick: async () => {
								if (!(await confirmAction(`Deactivate coupon ${c.code}? New checkouts refuse it; customers that have it keep it.`))) return;
								const answer = await busy("Deactivating", () => api("POST", `/coupons/${c.id}/deactivate`));
								if (answer) await pages.coupons().then(() => say(`Coupon ${answer.code} deactivated.`));
							},
						},
						"Deactivate",
					)
				: null;
		view.replaceChildren(
			el("h1", {}, "Coupons"),
			isOperator() ? couponForm() : null,
			table(
				[
					["Code", c => c.code],
					["Discount", discountOf],
					["Duration", durationOf],
					["Products", c => (c.productIds ? c.productIds.join(", ") : "all")],
					["Redeemed", c => (c.maxRedemptions === null ? String(c.redeemed) : `${c.redeemed} of ${c.maxRedemptions}`)],
					["Redeem by", c => c.redeemBy ?? "–"],
					["Active", c => (c.active ? "yes" : "no")],
					["", deactivate],
				],
				coupons,
				"Coupons",
			),
		);
	},

	async "merchant-accounts"() {
		const answers = await busy("Loading merchant accounts", () =>
			Promise.all([api("GET", "/merchant-accounts/health"), api("GET", "/merchant-accounts")]),
		);
		if (!answers) return;
		const [health, mids] = answers;
		view.replaceChildren(
			el("h1", {}, "Merchant accounts"),
			el(
				"p",
				{},
				"Each MID's sales (approved charges and renewals), refunds, disputes opened and disputes lost (chargebacks), this calendar month and over the last 30 days, today included. ",
				"The chargeback ratio is disputes over sales; card networks start monitoring a MID at about 0.9 %, so a MID shows a warning ",
				health.length ? `at ${(health[0].warningRatio * 100).toFixed(2)} %.` : "before that.",
			),
			midTable(health, new Map(mids.map(mid => [mid.id, mid]))),
			isOperator() && mids.length ? processorForm(mids, pages["merchant-accounts"]) : null,
			health.length ? midMetrics(health.map(h => [h.midId, h.name])) : null,
		);
	},

	audit() {
		listPage({
			title: "Audit log",
			path: "/audit",
			columns: [
				["When", a => a.at],
				["Who", a => a.email],
				["What", a => a.action],
				["On", a => a.target ?? "–"],
				["Outcome", a => a.outcome],
				["From", a => a.from],
			],
		});
	},

	async emails() {
		const settings = await busy("Loading the email settings", () => api("GET", "/email-settings"));
		if (!settings) return;
		view.replaceChildren(
			el("h1", {}, "Emails to buyers"),
			el(
				"p",
				{},
				"Receipts, dunning emails after a declined renewal (with a card update link) and card-expiring warnings. Off until turned on.",
			),
			emailSettingsForm(settings),
		);
	},

	portal: portalPage,

	clock() {
		const form = el(
			"form",
			{ "aria-label": "Advance the test clock" },
			field("Run what falls due up to", el("input", { name: "advanceTo", type: "datetime-local", required: true })),
			el("button", { type: "submit" }, "Advance"),
		);
		form.addEventListener("submit", async event => {
			event.preventDefault();
			const advanceTo = new Date(form.elements.advanceTo.value).toISOString();
			if (!(await confirmAction(`Run every renewal due up to ${advanceTo} for this sandbox account?`))) return;
			const report = await busy("Running renewals", () => api("POST", "/clock", { advanceTo }));
			if (report) say(`Done: ${JSON.stringify(report)}`);
		});
		view.replaceChildren(el("h1", {}, "Test clock"), el("p", {}, "Sandbox accounts only: renewals run as if the date had come."), form);
	},
};

function refundForm(transaction, customerId) {
	const amount = el("input", {
		name: "amount",
		inputmode: "decimal",
		size: 8,
		value: String(transaction.amount),
		"aria-label": `Amount to refund of transaction ${transaction.id}, in ${transaction.currency}`,
	});
	const form = el("form", { class: "filters" }, amount, el("button", { type: "submit", class: "danger" }, "Refund"));
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const value = amount.value.trim();
		const charged = money(transaction.amount, transaction.currency);
		if (!(await confirmAction(`Refund ${value} ${transaction.currency} of transaction ${transaction.id} (${charged} charged)?`))) return;
		// One key per confirmed refund: a repeated click or a retry refunds once.
		const answer = await busy("Refunding", () =>
			api("POST", `/transactions/${transaction.id}/refund`, { amountToRefund: value }, { "Idempotency-Key": crypto.randomUUID() }),
		);
		if (answer) await pages.customer(customerId).then(() => say(answer.message, !answer.success));
	});
	return form;
}

function showSignIn(message = "") {
	session.me = null;
	document.getElementById("sign-in").hidden = false;
	document.getElementById("nav").hidden = true;
	document.getElementById("sign-out").hidden = true;
	document.getElementById("who").textContent = "";
	view.replaceChildren();
	say(message, Boolean(message));
	document.getElementById("email").focus();
}

async function start() {
	try {
		session.me = await api("GET", "/me");
	} catch (err) {
		return showSignIn(err instanceof ApiFailure && err.status === 401 ? "" : err.message);
	}
	document.getElementById("sign-in").hidden = true;
	document.getElementById("nav").hidden = false;
	document.getElementById("sign-out").hidden = false;
	const { me } = session;
	document.getElementById("who").textContent = `${me.email} (${me.role}) · ${me.account.name} · ${me.account.environment}`;
	for (const link of document.querySelectorAll("#nav a")) {
		link.hidden =
			(link.hasAttribute("data-operator") && !isOperator()) || (link.hasAttribute("data-sandbox") && me.account.environment !== "sandbox");
	}
	route();
}

function route() {
	if (!session.me) return;
	const [, wanted = "home", arg] = location.hash.split("/");
	// A page the navigation hides from this user (an operator's, a sandbox's) is not shown by its address either.
	const hidden = document.querySelector(`#nav a[href="#/${wanted}"]`)?.hidden;
	const name = pages[wanted] && !hidden ? wanted : "home";
	for (const link of document.querySelectorAll("#nav a")) {
		if (link.getAttribute("href") === `#/${name}`) link.setAttribute("aria-current", "page");
		else link.removeAttribute("aria-current");
	}
	say("");
	void pages[name](arg);
}

document.getElementById("sign-in-form").addEventListener("submit", async event => {
	event.preventDefault();
	const form = event.target;
	try {
		say("Signing in…");
		await api("POST", "/sign-in", { email: form.elements.email.value, password: form.elements.password.value });
		form.reset();
		say("");
		await start();
	} catch (err) {
		say(err.message, true);
	}
});

document.getElementById("sign-out").addEventListener("click", async () => {
	await api("POST", "/sign-out").catch(() => undefined);
	showSignIn("Signed out.");
});

session.onSessionEnded = showSignIn;
window.addEventListener("hashchange", route);
void start();
