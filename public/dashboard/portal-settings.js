// The customer portal's settings page (docs/portal.md#settings): what buyers
// may do on the portal. An operator changes them (audited as "portal
// settings"); a viewer reads them, its fields disabled.
import { api, busy, el, field, isOperator, say, session, view } from "./ui.js";

const REASONS = [
	["too_expensive", "Too expensive"],
	["missing_features", "Missing features"],
	["switched_service", "Switched to another service"],
	["unused", "Not using it enough"],
	["customer_service", "Customer service"],
	["too_complex", "Too complex"],
	["low_quality", "Quality was lower than expected"],
	["other", "Other"],
];
const CANCEL_MODES = [
	["off", "Not in the portal"],
	["period_end", "At the end of the period (undone until then)"],
	["period_end_or_now", "At the end of the period, or at once"],
];

const checkbox = (name, checked, value) => el("input", { name, type: "checkbox", checked, ...(value === undefined ? {} : { value }) });

/** A group of checkboxes named `name`, one per [value, label]. */
function checkboxes(legend, name, options, checked) {
	return el(
		"fieldset",
		{},
		el("legend", {}, legend),
		options.map(([value, label]) => el("label", {}, checkbox(name, checked.includes(value), String(value)), ` ${label}`)),
	);
}

function portalForm(settings, products, coupons) {
	const choose = (name, options, chosen) =>
		el(
			"select",
			{ name },
			options.map(([value, label]) => el("option", { value: String(value), selected: value === chosen }, label)),
		);
	const renewing = products.filter(p => p.active && p.renewal);
	const form = el(
		"form",
		{ "aria-label": "Portal settings", class: "card settings" },
		field("Portal on", checkbox("enabled", settings.enabled)),
		field("Change plan or seats", checkbox("changePlan", settings.changePlan)),
		checkboxes(
			"Plans a buyer may switch to",
			"products",
			renewing.map(p => [p.id, `${p.name} (${p.id})`]),
			settings.products,
		),
		field("Pause and resume", checkbox("pause", settings.pause)),
		field("Update the card, and pay what is owed", checkbox("updateCard", settings.updateCard)),
		field("Cancel", choose("cancel", CANCEL_MODES, settings.cancel)),
		checkboxes("Reasons offered", "cancellationReasons", REASONS, settings.cancellationReasons),
		field(
			"Retention offer",
			choose(
				"retentionCouponId",
				[["", "None"], ...coupons.filter(c => c.active).map(c => [c.id, `${c.code} (${c.id})`])],
				settings.retentionCouponId ?? "",
			),
		),
		field("Email sign-in (needs the emails on)", checkbox("emailSignIn", settings.emailSignIn)),
		field(
			"Return domains (comma separated)",
			el("input", { name: "returnDomains", type: "text", value: settings.returnDomains.join(", ") }),
		),
		field(
			"Language",
			choose(
				"language",
				["en", "de", "es"].map(l => [l, l]),
				settings.language,
			),
		),
		isOperator() ? el("button", { type: "submit" }, "Save") : null,
	);
	if (!isOperator()) for (const control of form.elements) control.disabled = true;
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const checked = name => [...form.querySelectorAll(`input[name="${name}"]:checked`)].map(input => input.value);
		const coupon = form.elements.retentionCouponId.value;
		const body = {
			enabled: form.elements.enabled.checked,
			changePlan: form.elements.changePlan.checked,
			products: checked("products").map(Number),
			pause: form.elements.pause.checked,
			updateCard: form.elements.updateCard.checked,
			cancel: form.elements.cancel.value,
			cancellationReasons: checked("cancellationReasons"),
			retentionCouponId: coupon === "" ? null : Number(coupon),
			returnDomains: form.elements.returnDomains.value
				.split(",")
				.map(d => d.trim())
				.filter(Boolean),
			language: form.elements.language.value,
			emailSignIn: form.elements.emailSignIn.checked,
		};
		const saved = await busy("Saving the portal settings", () => api("PATCH", "/portal-settings", body));
		if (saved) say("Portal settings saved.");
	});
	return form;
}

export async function portalPage() {
	const loaded = await busy("Loading the portal settings", () =>
		Promise.all([api("GET", "/portal-settings"), api("GET", "/products"), api("GET", "/coupons")]),
	);
	if (!loaded) return;
	const [settings, products, coupons] = loaded;
	view.replaceChildren(
		el("h1", {}, "Customer portal"),
		el(
			"p",
			{},
			"Where buyers manage their subscriptions, cards and invoices, through a link your server makes (POST /api/customer/{id}/portal-session). Off until turned on.",
		),
		portalForm(settings, products, coupons.data ?? coupons),
		el(
			"p",
			{},
			"With email sign-in on, buyers ask for a link on this address: ",
			el("code", {}, `${location.origin}/portal/#sign-in/${session.me?.account?.id ?? ""}`),
		),
	);
}
