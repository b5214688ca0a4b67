// The dashboard's building blocks, shared by its pages (dashboard.js, home.js):
// DOM made with calls and textContent only, the status line, and the client of
// /dashboard/api that sends the session's CSRF token with every change.

export const view = document.getElementById("view");
const statusLine = document.getElementById("status");

/** The signed-in user (GET /me), null when signed out; `onSessionEnded` is called when the API answers 401. */
export const session = { me: null, onSessionEnded: () => undefined };

export function el(tag, attributes = {}, ...children) {
	const node = document.createElement(tag);
	setAttributes(node, attributes);
	for (const child of children.flat()) {
		if (child === null || child === undefined) continue;
		node.append(child instanceof Node ? child : document.createTextNode(String(child)));
	}
	return node;
}

/** `on…` attributes are listeners; true is a bare attribute; undefined, null and false leave it out. */
export function setAttributes(node, attributes) {
	for (const [name, value] of Object.entries(attributes)) {
		if (value === undefined || value === null || value === false) continue;
		if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
		else node.setAttribute(name, value === true ? "" : String(value));
	}
}

export function say(text, error = false) {
	statusLine.textContent = text;
	statusLine.classList.toggle("error", error);
}

export class ApiFailure extends Error {
	constructor(status, message) {
		super(message);
		this.status = status;
	}
}

export async function api(method, path, body, headers = {}) {
	const response = await fetch(`/dashboard/api${path}`, {
		method,
		credentials: "same-origin",
		headers: {
			...(body === undefined ? {} : { "Content-Type": "application/json" }),
			...(session.me && method !== "GET" ? { "X-CSRF-Token": session.me.csrfToken } : {}),
			...headers,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	const data = text ? JSON.parse(text) : null;
	if (!response.ok) throw new ApiFailure(response.status, data?.message ?? `${response.status} ${response.statusText}`);
	return data;
}

/** Runs a page's work with a visible loading state and a readable error. */
export async function busy(label, work) {
	say(`${label}…`);
	view.setAttribute("aria-busy", "true");
	try {
		const result = await work();
		say("");
		return result;
	} catch (err) {
		if (err instanceof ApiFailure && err.status === 401) return session.onSessionEnded("Your session ended: sign in again.");
		say(err.message, true);
		return undefined;
	} finally {
		view.removeAttribute("aria-busy");
	}
}

export function confirmAction(text) {
	const dialog = document.getElementById("confirm");
	document.getElementById("confirm-text").textContent = text;
	return new Promise(resolve => {
		dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
		dialog.showModal();
		document.getElementById("confirm-ok").focus();
	});
}

export const isOperator = () => session.me?.role === "operator";

/** A table of `rows`, one column per [title, cell]; its caption is for screen readers unless `visibleCaption`. */
export function table(columns, rows, caption, { className, visibleCaption = false, empty = "Nothing here." } = {}) {
	return el(
		"div",
		{ class: "table-wrap" },
		el(
			"table",
			className ? { class: className } : {},
			el("caption", visibleCaption ? {} : { class: "visually-hidden" }, caption),
			el(
				"thead",
				{},
				el(
					"tr",
					{},
					columns.map(([title]) => el("th", { scope: "col" }, title)),
				),
			),
			el(
				"tbody",
				{},
				rows.length === 0
					? el("tr", {}, el("td", { colspan: columns.length }, empty))
					: rows.map(row =>
							el(
								"tr",
								{},
								columns.map(([, cell]) => el("td", {}, cell(row) ?? "")),
							),
						),
			),
		),
	);
}

export function field(label, input) {
	const id = `f-${label.toLowerCase().replace(/\W+/g, "-")}`;
	input.id = id;
	return el("div", {}, el("label", { for: id }, label), input);
}

export function select(name, options) {
	return el(
		"select",
		{ name },
		el("option", { value: "" }, "Any"),
		options.map(o => el("option", { value: o }, o)),
	);
}

/** A ratio the API answers as a fraction (0.0123) as a percentage with two decimals ("1.23 %"); "–" for none (null). */
export const percent = ratio => (ratio === null || ratio === undefined ? "–" : `${(ratio * 100).toFixed(2)} %`);
