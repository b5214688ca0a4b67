// A MID's processor on the Merchant accounts page (docs/dashboard.md#a-mids-processor): each MID's in a few words,
// and an operator's form that sets one, PATCH /dashboard/api/merchant-accounts/{id}/processor (audited as
// "set processor"). Keys are typed into password inputs and sent once: the gateway seals them on arrival, and
// answers carry only their last 4 characters, so neither the form nor the page ever shows one again.

import { api, busy, el, field, say, session } from "./ui.js";

/** The choices: the sandbox only on a sandbox account (a production account's MIDs need a real processor). */
const KINDS = [
	["sandbox", "Sandbox"],
	["stripe", "Stripe"],
	["adyen", "Adyen"],
	["none", "None"],
];

/** Each processor's fields: [name, label, secret, attributes]. */
const FIELDS = {
	stripe: [
		["secretKey", "Secret key", true, { required: true, placeholder: "sk_… or rk_…" }],
		["webhookSecret", "Webhook signing secret (optional)", true, { placeholder: "whsec_…" }],
	],
	adyen: [
		["apiKey", "API key", true, { required: true }],
		["merchantAccount", "Merchant account", false, { required: true, maxlength: 80, pattern: "[A-Za-z0-9_.\\-]+" }],
		["liveUrlPrefix", "Live URL prefix (live platform only)", false, { maxlength: 129, placeholder: "1797a841fbb37ca7-AdyenDemo" }],
		["hmacKey", "HMAC key (optional)", true, {}],
	],
};

/** A last-4 beside a key's name, when the MID has that key. */
const lastOf = (name, last4) => (last4 ? `; ${name} …${last4}` : "");

/** A MID's processor in a few words: "Sandbox", "Stripe (test, …abcd)", "Adyen ShopCom (live, …wxyz)", "None"; "–" for no MID. */
export function processorOf(mid) {
	if (!mid) return "–";
	const p = mid.processor;
	if (!p) return "None";
	if (p.type === "sandbox") return "Sandbox";
	if (p.type === "stripe") return `Stripe (${p.keyMode}, …${p.secretKeyLast4}${lastOf("signing secret", p.webhookSecretLast4)})`;
	if (p.type === "adyen") return `Adyen ${p.merchantAccount} (${p.keyMode}, …${p.apiKeyLast4}${lastOf("HMAC key", p.hmacKeyLast4)})`;
	return p.type;
}

/** One field of a processor: secrets in password inputs the browser neither fills nor offers to save. */
function input(name, label, secret, attributes) {
	const attrs = { name, type: secret ? "password" : "text", autocomplete: "off", autocapitalize: "none", spellcheck: "false" };
	return field(label, el("input", { ...attrs, ...attributes }));
}

/** What the form sends: the chosen processor and its filled fields; null for none. */
function processorBody(kind, form) {
	if (kind === "none") return null;
	const processor = { type: kind };
	for (const [name] of FIELDS[kind] ?? []) {
		const value = form.elements[name].value.trim();
		if (value) processor[name] = value;
	}
	return processor;
}

/**
 * An operator's form: a MID, its processor and the fields of the chosen one (the others hidden and disabled, so the
 * browser neither checks nor sends them). Choosing a MID shows its processor and fills what is not secret of it.
 * `reload` shows the page again, with the new processor; an error shows the API's message and keeps the form.
 */
export function processorForm(mids, reload) {
	const kinds = KINDS.filter(([kind]) => kind !== "sandbox" || session.me?.account.environment === "sandbox");
	const mid = el(
		"select",
		{ name: "midId" },
		mids.map(m => el("option", { value: m.id }, `${m.name} (${m.id})`)),
	);
	const kind = el(
		"select",
		{ name: "type" },
		kinds.map(([value, label]) => el("option", { value }, label)),
	);
	const groups = Object.entries(FIELDS).map(([type, fields]) => [type, fields.map(f => input(...f))]);
	const form = el(
		"form",
		{ class: "filters", "aria-label": "Set a MID's processor" },
		field("MID", mid),
		field("Processor", kind),
		groups.flatMap(([, fields]) => fields),
		el("button", { type: "submit" }, "Set processor"),
	);
	const show = () => {
		for (const [type, fields] of groups)
			for (const div of fields) {
				div.hidden = type !== kind.value;
				div.querySelector("input").disabled = div.hidden;
			}
	};
	const choose = () => {
		const current = mids.find(m => String(m.id) === mid.value)?.processor;
		const type = current ? current.type : "none";
		kind.value = kinds.some(([value]) => value === type) ? type : kinds[0][0];
		for (const control of form.querySelectorAll("input")) control.value = "";
		form.elements.merchantAccount.value = current?.merchantAccount ?? "";
		form.elements.liveUrlPrefix.value = current?.liveUrlPrefix ?? "";
		show();
	};
	mid.addEventListener("change", choose);
	kind.addEventListener("change", show);
	choose();
	form.addEventListener("submit", async event => {
		event.preventDefault();
		const id = mid.value;
		const body = { processor: processorBody(kind.value, form) };
		const saved = await busy("Setting the processor", () => api("PATCH", `/merchant-accounts/${id}/processor`, body));
		if (saved) await reload().then(() => say(`${saved.name} (${saved.id}): processor set to ${processorOf(saved)}.`));
	});
	return el(
		"section",
		{ class: "card", "aria-labelledby": "mid-processor-title" },
		el("h2", { id: "mid-processor-title" }, "A MID's processor"),
		el(
			"p",
			{},
			"Where the MID's checkouts and renewals are charged. Keys are write-only: once set, only their last 4 characters show. ",
			"A sandbox account's MIDs take test keys only, a production account's live ones.",
		),
		form,
	);
}
