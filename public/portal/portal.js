// The customer portal: the page a buyer opens from the shop's link, /portal/#<token>. The token is in the fragment,
// which no server sees; the page trades it for a session (POST /portal/api/open), drops it from the address, and
// shows the buyer's subscriptions from GET /portal/api/me, in the view's language. DOM is built with textContent
// only, every change sends the session's CSRF token, and card data only ever goes into the card frame (/sdk/checkout.js).
import { phrases } from "./phrases.js";

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const $ = id => document.getElementById(id);
const [bar, title, statusLine, content] = ["bar", "title", "status", "content"].map($);

let locale = "en";
let t = phrases.en;
/** The PortalView last read (GET /me); null before, and once the session has ended. */
let view = null;
/** The card frame shown, if any: unmounted whenever the page changes. */
let frame = null;

function setLocale(wanted) {
	locale = Object.hasOwn(phrases, wanted) ? wanted : "en";
	t = phrases[locale];
	document.documentElement.lang = locale;
}

function el(tag, attributes = {}, ...children) {
	const node = document.createElement(tag);
	setAttributes(node, attributes);
	for (const child of children.flat()) {
		if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
	}
	return node;
}

/** `on…` attributes are listeners; true is a bare attribute; undefined, null and false leave it out. */
function setAttributes(node, attributes) {
	for (const [name, value] of Object.entries(attributes)) {
		if (value === undefined || value === null || value === false) continue;
		if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
		else node.setAttribute(name, value === true ? "" : String(value));
	}
}

const say = text => {
	statusLine.textContent = text;
};

class ApiError extends Error {
	constructor(status, message) {
		super(message);
		this.status = status;
	}
}

/** A call of /portal/api; an answer that is not 2xx throws its `message`, a network failure the page's own. */
async function api(method, path, body) {
	const headers = {};
	if (body !== undefined) headers["Content-Type"] = "application/json";
	if (method !== "GET" && view) headers["X-CSRF-Token"] = view.csrfToken;
	const init = { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) };
	const response = await fetch(`/portal/api${path}`, init).catch(() => {
		throw new ApiError(0, t.failed);
	});
	const data = await response.json().catch(() => null);
	if (!response.ok) throw new ApiError(response.status, data?.message ?? t.failed);
	return data;
}

const post = (path, body = {}) => api("POST", path, body);

// Formats, in the view's language.

function currencyFormat(currency) {
	try {
		return new Intl.NumberFormat(locale, { style: "currency", currency });
	} catch {
		return null;
	}
}

function money(amount, currency) {
	return currencyFormat(currency)?.format(amount) ?? `${amount} ${currency}`;
}

/** unit × quantity in whole minor units, so 9.99 × 3 is 29.97 and not 29.969999…. */
function times(amount, quantity, currency) {
	const scale = 10 ** (currencyFormat(currency)?.resolvedOptions().maximumFractionDigits ?? 2);
	return (Math.round(Number(amount) * scale) * quantity) / scale;
}

/** The date of a local date-time ("2026-12-29T05:58:07.025"): only its date part counts. */
function day(text) {
	const parts = /^(\d{4})-(\d{2})-(\d{2})/.exec(text ?? "");
	if (!parts) return text ?? "";
	return new Intl.DateTimeFormat(locale, { dateStyle: "long" }).format(new Date(+parts[1], +parts[2] - 1, +parts[3]));
}

const clock = instant => new Intl.DateTimeFormat(locale, { timeStyle: "short" }).format(new Date(instant));
const percent = value => `${new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(value)} %`;
const price = product => `${money(product.amount, product.currency)}${product.renewal ? ` ${t.every(product.renewal)}` : ""}`;

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

// Pages.

function unmountFrame() {
	frame?.handle.unmount();
	frame?.panel.replaceChildren();
	frame = null;
}

/** A page of its own (signed out, a link that cannot be opened): a heading, its text, nothing else. */
function page(heading, ...children) {
	unmountFrame();
	bar.hidden = true;
	title.textContent = heading;
	document.title = heading;
	content.replaceChildren(...children);
	$("alert").textContent = "";
	say("");
	title.focus();
}

function ended(message) {
	view = null;
	page(t.invalidTitle, el("p", { class: "lead" }, message));
}

function backLink(returnUrl, name) {
	const href = safeUrl(returnUrl);
	return href ? el("a", { href, class: "back" }, t.back(name)) : null;
}

/** A colour the merchant chose as --brand, with a text colour readable on it (WCAG relative luminance). */
function brand(color) {
	const style = document.documentElement.style;
	if (!/^#[0-9a-f]{6}$/i.test(color ?? "")) {
		style.removeProperty("--brand");
		style.removeProperty("--brand-ink");
		return;
	}
	const [r, g, b] = [1, 3, 5].map(i => {
		const c = Number.parseInt(color.slice(i, i + 2), 16) / 255;
		return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
	});
	style.setProperty("--brand", color);
	style.setProperty("--brand-ink", 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? "#1b1f24" : "#ffffff");
}

function render() {
	unmountFrame();
	setLocale(view.locale);
	brand(view.account.brandColor);
	bar.hidden = false;
	$("shop").textContent = view.account.name;
	$("back").replaceChildren(backLink(view.returnUrl, view.account.name) ?? "");
	$("sign-out").textContent = t.signOut;
	title.textContent = t.title;
	$("alert").textContent = "";
	document.title = `${t.title} – ${view.account.name}`;
	const subscriptions = view.subscriptions.map(subscription);
	content.replaceChildren(...(subscriptions.length ? subscriptions : [el("p", {}, t.none)]));
}

/** Reads the view again after a change and shows it, focus on the subscription acted on. */
async function reload(id) {
	view = await api("GET", "/me");
	render();
	($(`sub-${id}`) ?? title).focus();
}

function failed(err, alert) {
	if (err.status === 401) return ended(t.sessionEnded);
	say("");
	alert.textContent = err.message;
}

/** Runs a change from `button`, then shows the view anew and says `done(the subscription after)`. */
async function act(ctx, button, work, done) {
	ctx.alert.textContent = "";
	button.disabled = true;
	say(t.working);
	try {
		await work();
		await reload(ctx.sub.id);
		say(done(view.subscriptions.find(s => s.id === ctx.sub.id)));
	} catch (err) {
		failed(err, ctx.alert);
	} finally {
		button.disabled = false;
	}
}

// A subscription.

function planName(productId, sub) {
	const product = [sub.product, ...(view.products ?? [])].find(p => p.id === productId);
	return product?.name ?? `#${productId}`;
}

function priceText({ product, quantity, tax }) {
	const unit = money(product.amount, product.currency);
	const amount =
		quantity === 1 ? unit : `${unit} × ${quantity} = ${money(times(product.amount, quantity, product.currency), product.currency)}`;
	const period = product.renewal ? ` ${t.every(product.renewal)}` : "";
	const taxed = tax?.rateBps ? `, ${(tax.inclusive ? t.taxIncluded : t.taxAdded)(percent(tax.rateBps / 100))}` : "";
	return `${amount}${period}${taxed}`;
}

/** A coupon's discount and its duration, ["20 % off", "for 3 months"]: `periods` charges of a plan renewing `renewal`. */
function discount(coupon, periods, renewal) {
	const off = t.off(coupon.percentOff ? percent(coupon.percentOff) : money(coupon.amountOff, coupon.currency));
	if (coupon.duration === "once") return [off, t.once];
	if (coupon.duration !== "repeating" || !periods) return [off, t.forever];
	return [off, renewal ? t.during(periods * renewal.every, renewal.unit) : t.during(periods, "payment")];
}

function renewalRow(sub) {
	if (sub.cancelAt) return [t.endsOn, day(sub.cancelAt)];
	if (sub.pause) return [t.resumesOn, sub.pause.resumeAt ? day(sub.pause.resumeAt) : t.whenResumed];
	return sub.nextRenewalTimestamp ? [t.nextPayment, day(sub.nextRenewalTimestamp)] : null;
}

function facts(sub) {
	const { pendingChange: pending, coupon, card } = sub;
	const rows = [[t.price, priceText(sub)], [t.status, t.statuses[sub.status] ?? sub.status], renewalRow(sub)];
	if (pending) rows.push([t.scheduled, t.pending(planName(pending.productId, sub), pending.quantity, day(pending.at))]);
	if (coupon) rows.push([t.discount, `${coupon.code}: ${discount(coupon, coupon.periodsLeft, sub.product.renewal).join(" ")}`]);
	if (Number(sub.credit) > 0) rows.push([t.credit, money(sub.credit, sub.product.currency)]);
	if (card) rows.push([t.card, t.cardText(card.brand, card.last4, card.expiry)]);
	return el(
		"dl",
		{ class: "facts" },
		rows.filter(Boolean).map(([term, value]) => el("div", {}, el("dt", {}, term), el("dd", {}, value))),
	);
}

function subscription(sub) {
	const headingId = `sub-${sub.id}`;
	const ctx = { sub, alert: el("p", { role: "alert", class: "error" }), panel: el("div") };
	return el(
		"section",
		{ class: "card", "aria-labelledby": headingId, "data-subscription-id": sub.id },
		el("h2", { id: headingId, tabindex: -1 }, sub.product.name),
		facts(sub),
		sub.overdue ? el("p", { class: "notice" }, t.overdue) : null,
		el("div", { class: "actions" }, actionButtons(ctx)),
		ctx.panel,
		ctx.alert,
		invoices(sub),
	);
}

/** The buttons of what the subscription's `actions` allow now, and only those. */
function actionButtons(ctx) {
	const { sub } = ctx;
	const allowed = sub.actions ?? {};
	const path = `/subscriptions/${sub.id}`;
	const buttons = [];
	const add = (label, onclick, className) => buttons.push(el("button", { type: "button", class: className, onclick }, label));
	const overdue = sub.overdue && allowed.payOverdue;
	if (allowed.changePlan) add(t.changePlan, () => changePanel(ctx));
	if (overdue || allowed.updateCard) add(overdue ? t.payOverdue : t.updateCard, e => cardPanel(ctx, e.currentTarget, overdue));
	const run = (label, method, action, message, className) => {
		const work = () => api(method, `${path}/${action}`, method === "POST" ? {} : undefined);
		add(label, e => act(ctx, e.currentTarget, work, () => message), className);
	};
	if (allowed.pause) run(t.pause, "POST", "pause", t.paused, "secondary");
	if (allowed.resume) run(t.resume, "POST", "resume", t.resumed);
	if (sub.cancelAt && allowed.undoCancel) run(t.undoCancel, "DELETE", "cancel", t.undone);
	if (allowed.cancel || allowed.cancelNow) add(t.cancel, () => cancelFlow(ctx), "danger");
	return buttons;
}

/** An inline part under the subscription's buttons (one at a time), its heading focused; no label of its own, so "Plan" names one field. */
function openPanel(ctx, heading, ...children) {
	unmountFrame();
	ctx.alert.textContent = "";
	const close = () => {
		unmountFrame();
		ctx.panel.replaceChildren();
		ctx.alert.textContent = "";
		$(`sub-${ctx.sub.id}`).focus();
	};
	const headingNode = el("h3", { tabindex: -1 }, heading);
	ctx.panel.replaceChildren(
		el(
			"div",
			{ class: "panel" },
			headingNode,
			...children,
			el("div", { class: "actions" }, el("button", { type: "button", class: "secondary", onclick: close }, t.close)),
		),
	);
	headingNode.focus();
}

function field(id, label, control, ...more) {
	control.id = id;
	return el("div", { class: "field" }, el("label", { for: id }, label), control, ...more);
}

/** Change plan or seats: "See price" asks for a binding quote, "Confirm change" applies exactly it. */
function changePanel(ctx) {
	const { sub } = ctx;
	const offered = view.products ?? [];
	const products = offered.some(p => p.id === sub.product.id) ? offered : [sub.product, ...offered];
	const hint = el("p", { class: "hint", id: `plan-price-${sub.id}` });
	const plan = el(
		"select",
		{ name: "productId", "aria-describedby": hint.id },
		products.map(p => el("option", { value: p.id, selected: p.id === sub.product.id }, p.name)),
	);
	const showPrice = () => {
		const chosen = products.find(p => String(p.id) === plan.value);
		hint.textContent = chosen ? t.planPrice(price(chosen)) : "";
	};
	const seats = el("input", { name: "quantity", type: "number", inputmode: "numeric", min: 1, max: 10000, step: 1, required: true });
	seats.value = String(sub.quantity);
	const quoted = el("div");
	const button = el("button", { type: "submit" }, t.seePrice);
	const form = el("form", {}, field(`plan-${sub.id}`, t.plan, plan, hint), field(`seats-${sub.id}`, t.seats, seats), button);
	form.addEventListener("input", () => {
		showPrice();
		quoted.replaceChildren();
	});
	form.addEventListener("submit", async event => {
		event.preventDefault();
		ctx.alert.textContent = "";
		quoted.replaceChildren();
		button.disabled = true;
		try {
			const body = { productId: Number(plan.value), quantity: Number(seats.value) };
			quoted.append(quoteView(ctx, await post(`/subscriptions/${sub.id}/change-quote`, body)));
			quoted.querySelector(".charge").focus();
		} catch (err) {
			failed(err, ctx.alert);
		} finally {
			button.disabled = false;
		}
	});
	showPrice();
	openPanel(ctx, t.changePlan, form, quoted);
}

function quoteView(ctx, quote) {
	const amount = value => money(value, quote.currency);
	const next = quote.nextRenewal;
	const lines = [
		Number(quote.creditUsed) > 0 ? t.creditUsed(amount(quote.creditUsed)) : null,
		Number(quote.creditAdded) > 0 ? t.creditAdded(amount(quote.creditAdded)) : null,
		next
			? t.nextRenewal(next.at ? day(next.at) : null, amount(next.amount), `${planName(next.productId, ctx.sub)} × ${next.quantity}`)
			: null,
		quote.expiresAt ? t.holds(clock(quote.expiresAt)) : null,
	];
	const confirm = el("button", { type: "button" }, t.confirmChange);
	const change = () => post(`/subscriptions/${ctx.sub.id}/change`, { quoteId: quote.quoteId });
	confirm.addEventListener("click", () => act(ctx, confirm, change, () => t.changed));
	return el(
		"div",
		{ class: "quote" },
		el("p", { class: "charge", tabindex: -1 }, `${t.payNow} `, el("strong", { "data-testid": "quote-charge" }, amount(quote.charge))),
		lines.filter(Boolean).map(line => el("p", {}, line)),
		confirm,
	);
}

/** Cancel: the merchant's retention offer first, when it has one the buyer has not used, then the form. */
function cancelFlow(ctx) {
	const offer = view.settings?.retentionOffer;
	if (!offer || ctx.sub.retentionOfferUsed) return cancelForm(ctx);
	const accept = el("button", { type: "button" }, t.acceptOffer);
	const take = () => post(`/subscriptions/${ctx.sub.id}/retention-offer`);
	accept.addEventListener("click", () => act(ctx, accept, take, () => t.offerAccepted));
	openPanel(
		ctx,
		t.offerTitle,
		el("p", { class: "offer" }, t.offer(...discount(offer, offer.durationInPeriods, ctx.sub.product.renewal))),
		el(
			"div",
			{ class: "actions" },
			accept,
			el("button", { type: "button", class: "secondary", onclick: () => cancelForm(ctx) }, t.noThanks),
		),
	);
}

function cancelForm(ctx) {
	const { sub } = ctx;
	const choices = [];
	if (sub.actions.cancelAtPeriodEnd)
		choices.push(["period_end", t.atPeriodEnd, sub.nextRenewalTimestamp ? `(${day(sub.nextRenewalTimestamp)})` : null]);
	if (sub.actions.cancelNow) choices.push(["now", t.now, null]);
	const radios = choices.map(([value, label, note], i) => {
		const id = `when-${sub.id}-${value}`;
		return el(
			"div",
			{ class: "choice" },
			el("input", { type: "radio", name: "when", id, value, checked: i === 0, "aria-describedby": note ? `${id}-note` : null }),
			el("label", { for: id }, label),
			note ? el("span", { id: `${id}-note` }, note) : null,
		);
	});
	const codes = view.settings?.cancellationReasons?.length ? view.settings.cancellationReasons : ["other"];
	const reason = el(
		"select",
		{ name: "reason", required: true },
		el("option", { value: "" }, t.chooseReason),
		codes.map(code => el("option", { value: code }, t.reasons[code] ?? code)),
	);
	const comment = el("textarea", { name: "comment", maxlength: 1000, rows: 3 });
	const submit = el("button", { type: "submit", class: "danger" }, t.confirmCancel);
	const form = el(
		"form",
		{},
		el("fieldset", {}, el("legend", {}, t.when), radios),
		field(`reason-${sub.id}`, t.reason, reason),
		field(`comment-${sub.id}`, t.comment, comment),
		submit,
	);
	form.addEventListener("submit", event => {
		event.preventDefault();
		const body = { when: form.elements.when.value, reason: reason.value };
		if (comment.value.trim()) body.comment = comment.value.trim();
		const cancel = () => post(`/subscriptions/${sub.id}/cancel`, body);
		void act(ctx, submit, cancel, after => (after?.cancelAt ? t.endsOnDate(day(after.cancelAt)) : t.ended));
	});
	openPanel(ctx, t.cancelTitle, form);
}

/** A card update session, in the card frame: a new card for the renewals, which also pays what is owed. */
async function cardPanel(ctx, button, overdue) {
	ctx.alert.textContent = "";
	button.disabled = true;
	try {
		if (!window.PaymentCheckout) throw new ApiError(0, t.failed);
		const { sessionId } = await post(`/subscriptions/${ctx.sub.id}/card-session`);
		const holder = el("div", { class: "frame" });
		openPanel(ctx, overdue ? t.payOverdue : t.updateCard, holder);
		const onResult = result => void cardResult(ctx, result);
		const handle = window.PaymentCheckout.mount(holder, { sessionId, mode: "update", domain: location.hostname, onResult });
		frame = { handle, panel: ctx.panel };
	} catch (err) {
		failed(err, ctx.alert);
	} finally {
		button.disabled = false;
	}
}

async function cardResult(ctx, { code, recovered }) {
	if (code !== "OK") {
		ctx.alert.textContent = t.cardCodes[code] ?? t.cardFailed;
		return;
	}
	try {
		await reload(ctx.sub.id);
		say(recovered ? `${t.cardUpdated} ${t.recovered}` : t.cardUpdated);
	} catch (err) {
		failed(err, ctx.alert);
	}
}

/** "Invoices": a disclosure that loads the subscription's documents the first time it opens. */
function invoices(sub) {
	const id = `docs-${sub.id}`;
	const region = el("div", { id, hidden: true });
	const button = el("button", { type: "button", class: "secondary", "aria-expanded": "false", "aria-controls": id }, t.invoices);
	let loaded = false;
	button.addEventListener("click", async () => {
		const open = button.getAttribute("aria-expanded") !== "true";
		button.setAttribute("aria-expanded", String(open));
		region.hidden = !open;
		if (!open || loaded) return;
		region.replaceChildren(el("p", {}, t.loading));
		try {
			const { data } = await api("GET", `/subscriptions/${sub.id}/documents`);
			loaded = true;
			region.replaceChildren(documentsTable(sub, data));
		} catch (err) {
			const alert = el("p", { role: "alert", class: "error" });
			region.replaceChildren(alert);
			failed(err, alert);
		}
	});
	return el("div", { class: "invoices" }, button, region);
}

function documentsTable(sub, documents) {
	if (!documents.length) return el("p", {}, t.noDocuments);
	const link = (url, attributes, ...text) => {
		const href = safeUrl(url);
		return href ? el("a", { href, ...attributes }, ...text) : text;
	};
	const row = d =>
		el(
			"tr",
			{},
			el("td", {}, link(d.url, {}, `${d.kind === "creditNote" ? t.creditNote : t.invoice} ${d.number}`)),
			el("td", {}, day(d.issuedAt)),
			el("td", { class: "amount" }, money(d.total, d.currency)),
			el("td", {}, link(d.pdfUrl, { download: true }, t.pdf, el("span", { class: "visually-hidden" }, ` ${d.number}`))),
		);
	return el(
		"div",
		{ class: "table-wrap" },
		el(
			"table",
			{},
			el("caption", { class: "visually-hidden" }, t.invoicesOf(sub.product.name)),
			el(
				"thead",
				{},
				el(
					"tr",
					{},
					[t.document, t.date, t.total, t.pdf].map(h => el("th", { scope: "col" }, h)),
				),
			),
			el("tbody", {}, documents.map(row)),
		),
	);
}

async function signOut() {
	const { returnUrl, account } = view ?? { account: {} };
	try {
		await post("/sign-out");
	} catch (err) {
		if (err.status !== 401) return failed(err, $("alert"));
	}
	view = null;
	page(t.signedOutTitle, el("p", { class: "lead" }, t.signedOutText), backLink(returnUrl, account.name));
}

function dropFragment() {
	if (location.hash) history.replaceState(null, "", location.pathname + location.search);
}

/** A link that cannot be opened (4xx) has its own page; anything else (network, 5xx, 429) can be tried again. */
function loadFailed(err) {
	if (err.status >= 400 && err.status < 500 && err.status !== 429) {
		dropFragment();
		return ended(t.invalidLink);
	}
	page(t.failedTitle, el("p", { class: "lead" }, t.failed), el("button", { type: "button", onclick: () => location.reload() }, t.retry));
}

/** The shop's sign-in page, #sign-in/<account>: the buyer asks for a link by email (docs/portal.md#email-sign-in). */
function signInPage(accountId) {
	const email = el("input", { id: "sign-in-email", name: "email", type: "email", required: true, autocomplete: "email", maxlength: 254 });
	const alert = el("p", { role: "alert", class: "alert" });
	const form = el(
		"form",
		{ "aria-labelledby": "title", novalidate: true },
		el("label", { for: "sign-in-email" }, t.email),
		email,
		el("button", { type: "submit" }, t.sendLink),
		alert,
	);
	form.addEventListener("submit", async event => {
		event.preventDefault();
		if (!email.checkValidity()) {
			alert.textContent = t.emailInvalid;
			return;
		}
		try {
			await post("/sign-in", { accountId, email: email.value.trim() });
			page(t.signInTitle, el("p", { class: "lead" }, t.linkSent));
		} catch (err) {
			failed(err, alert);
		}
	});
	page(t.signInTitle, el("p", { class: "lead" }, t.signInText), form);
}

/** Opens the link's token, if the address holds one, then shows the view (a session cookie may already be there). */
async function load() {
	say(t.loading);
	const token = location.hash.slice(1);
	const signIn = /^sign-in\/(\d{1,15})$/.exec(token);
	if (signIn) return signInPage(Number(signIn[1]));
	try {
		if (token && !TOKEN.test(token)) throw new ApiError(400, t.invalidLink);
		if (token) await post("/open", { token });
		dropFragment();
		view = await api("GET", "/me");
		render();
		say("");
	} catch (err) {
		loadFailed(err);
	}
}

setLocale((navigator.languages ?? []).map(tag => tag.slice(0, 2).toLowerCase()).find(tag => Object.hasOwn(phrases, tag)));
title.textContent = t.title;
$("sign-out").addEventListener("click", signOut);
// A new link opened in this tab changes only the fragment, which loads no page.
window.addEventListener("hashchange", () => location.hash && void load());
void load();
