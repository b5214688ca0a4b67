// The hosted card form, running on the service's origin inside the
// merchant's page (see ../sdk/checkout.js). It validates as the buyer types,
// encrypts the card number and CVC here (encrypt.js), posts the checkout to
// the service and tells the merchant's page only the outcome.
//
// The card number and CVC never leave this frame in plaintext: they are not
// in any postMessage, URL, storage or console output; the only place they go
// is encryptDigits().
import { brandOf, BRANDS, expiryMMYY, formatCardNumber, formatCvc, formatExpiry, onlyDigits, validateCardNumber, validateCvc, validateEmail, validateExpiry, validateRequired } from "./card.js";
import { encryptDigits, importServiceKey } from "./encrypt.js";
import { outcomeFor } from "./outcomes.js";

// What the SDK put in our URL: which session and product, and the merchant's
// domain (the session is bound to it; the service compares it as landingDomain).
const params = new URLSearchParams(location.search);
const checkout = {
	sessionId: params.get("sessionId") ?? "",
	productId: Number(params.get("productId")),
	domain: params.get("domain") ?? "",
	// "update": a card update session's frame: only the card, sent to /api/card-update (docs/recovery.md).
	update: params.get("mode") === "update",
	// The merchant asked for a promotion code field (the SDK's promotionCode: true).
	promotionCode: params.get("promotionCode") === "1" && params.get("mode") !== "update",
};

// The merchant's origin: the only one we talk to. ancestorOrigins cannot be
// forged by the parent; the referrer is the fallback where it is missing
// (the SDK asks for an origin referrer). An opaque ("null") origin or a frame
// opened on its own gets no messages at all. Never "*".
const parentOrigin = findParentOrigin();

/** Set by the parent's init message: the merchant's additionalData, sent with the checkout as is. */
let additionalData;

const $ = id => document.getElementById(id);
const form = $("checkout-form");
const fieldset = $("fields");
const payButton = $("pay");
const brandLabel = $("card-brand");
const outcomeBox = $("outcome");

/** Each input with its rule, its formatter and whether the buyer has left it once (then its errors show). */
const fields = {
	...(checkout.update
		? {}
		: {
				email: field("email", value => validateEmail(value)),
				name: field("first-name", value => validateRequired(value, "Enter your first name.")),
				lastName: field("last-name", () => ({ error: null })),
			}),
	...(checkout.promotionCode ? { promotionCode: field("promotion-code", validatePromotionCode) } : {}),
	cardNumber: field("card-number", value => validateCardNumber(value), formatCardNumber),
	expiry: field("expiry", value => validateExpiry(value), formatExpiry),
	cvc: field("cvc", value => validateCvc(value, cardBrand()), formatCvc),
};

/** "ready" to pay, "submitting" (no second submit), or "closed" (paid, or nothing more can be done here). */
let state = "ready";

/** Optional; when typed, letters, digits, - and _ (3 to 40), as the service takes it. */
function validatePromotionCode(value) {
	const code = String(value ?? "").trim();
	if (code === "" || /^[A-Za-z0-9_-]{3,40}$/.test(code)) return { error: null, definite: false };
	return { error: "A promotion code has 3 to 40 letters, digits, - or _.", definite: false };
}

function field(id, validate, format) {
	return { input: $(id), error: $(`${id}-error`), validate, format, touched: false, serviceError: null };
}

function findParentOrigin() {
	if (window.parent === window) return null;
	let origin = location.ancestorOrigins?.[0];
	if (!origin && document.referrer) {
		try {
			origin = new URL(document.referrer).origin;
		} catch {
			origin = null;
		}
	}
	return origin && origin !== "null" ? origin : null;
}

function toParent(message) {
	if (parentOrigin) window.parent.postMessage(message, parentOrigin);
}

function cardBrand() {
	return brandOf(onlyDigits(fields.cardNumber.input.value));
}

function allValid() {
	return Object.values(fields).every(f => !f.serviceError && f.validate(f.input.value).error === null);
}

/** Shows each field's error when the buyer has left the field, or at once when typing more cannot fix it. */
function render() {
	for (const f of Object.values(fields)) {
		const { error, definite } = f.validate(f.input.value);
		const shown = f.serviceError ?? (error && (f.touched || definite) ? error : "");
		f.error.textContent = shown;
		f.input.setAttribute("aria-invalid", shown ? "true" : "false");
	}
	const brand = cardBrand();
	brandLabel.textContent = brand ? BRANDS[brand].label : "";
	brandLabel.dataset.brand = brand ?? "";
	payButton.disabled = state !== "ready" || !allValid();
	payButton.textContent = state === "submitting" ? "Processing…" : checkout.update ? "Update card" : "Pay";
	form.setAttribute("aria-busy", String(state === "submitting"));
	fieldset.disabled = state !== "ready";
}

/** Reformats (card number in groups, MM/YY) keeping the caret after the same digit, so editing mid-number works. */
function reformat(input, format) {
	const before = input.value;
	const caret = input.selectionStart ?? before.length;
	const after = format(before);
	if (after === before) return;
	input.value = after;
	if (document.activeElement !== input) return;
	let position = after.length;
	if (caret < before.length) {
		const digitsBeforeCaret = onlyDigits(before.slice(0, caret)).length;
		let seen = 0;
		position = 0;
		while (position < after.length && seen < digitsBeforeCaret) {
			if (/\d/.test(after[position])) seen++;
			position++;
		}
	}
	input.setSelectionRange(position, position);
}

function showOutcome(text, kind) {
	outcomeBox.textContent = text;
	outcomeBox.className = `outcome ${kind}`;
	outcomeBox.hidden = false;
}

function close(text) {
	state = "closed";
	showOutcome(text, "error");
	render();
}

// --- Submitting -------------------------------------------------------------

async function getServiceKey() {
	const res = await fetch("/api/checkout/key", { headers: { Accept: "application/json" } });
	if (!res.ok) throw new Error(`key: HTTP ${res.status}`);
	return importServiceKey(await res.json());
}

/** The service's answer as {code, customerId?, message?, errors?}; throws when no answer arrived. */
async function submitCheckout() {
	const serviceKey = await getServiceKey();
	const [encryptedCardNumber, encryptedCvc] = await Promise.all([
		encryptDigits(serviceKey, onlyDigits(fields.cardNumber.input.value)),
		encryptDigits(serviceKey, onlyDigits(fields.cvc.input.value)),
	]);
	if (checkout.update) {
		return post("/api/card-update", {
			sessionId: checkout.sessionId,
			landingDomain: checkout.domain,
			encryptedCardNumber,
			encryptedCvc,
			cardExpiry: expiryMMYY(fields.expiry.input.value),
		});
	}
	const lastName = fields.lastName.input.value.trim();
	const promotionCode = fields.promotionCode?.input.value.trim() ?? "";
	const body = {
		sessionId: checkout.sessionId,
		productId: checkout.productId,
		email: fields.email.input.value.trim(),
		name: fields.name.input.value.trim(),
		...(lastName ? { lastName } : {}),
		landingDomain: checkout.domain,
		...(additionalData !== undefined ? { additionalData } : {}),
		...(promotionCode ? { promotionCode } : {}),
		encryptedCardNumber,
		encryptedCvc,
		cardExpiry: expiryMMYY(fields.expiry.input.value),
	};
	return post("/api/checkout", body);
}

/** Posts the checkout (or card update) and reads its answer. */
async function post(path, body) {
	const res = await fetch(path, {
		method: "POST",
		headers: { "Content-Type": "application/json", Accept: "application/json" },
		body: JSON.stringify(body),
	});
	const answer = await res.json().catch(() => null);
	// 200 carries every business outcome, 400 INVALID_REQUEST a malformed body;
	// anything else is the gateway's error format {error, status, message}.
	if (answer && typeof answer.code === "string" && (res.status === 200 || res.status === 400)) return answer;
	return { code: typeof answer?.error === "string" ? answer.error : "SERVICE_UNAVAILABLE", message: answer?.message };
}

/** Puts the service's field errors (400 INVALID_REQUEST) next to the inputs they concern; returns the others' messages. */
function showServiceErrors(errors) {
	const byField = {
		email: "email",
		name: "name",
		lastName: "lastName",
		promotionCode: "promotionCode",
		encryptedCardNumber: "cardNumber",
		encryptedCvc: "cvc",
		cardExpiry: "expiry",
	};
	const unplaced = [];
	for (const { field: name, message } of Array.isArray(errors) ? errors : []) {
		// Accept "email", "/email" or "body.email".
		const key = byField[String(name ?? "").split(/[./]/).filter(Boolean).pop()];
		if (key && fields[key]) fields[key].serviceError = String(message || "This value was not accepted.");
		else if (message) unplaced.push(String(message));
	}
	return unplaced;
}

async function pay() {
	if (state !== "ready" || !allValid()) return;
	state = "submitting";
	outcomeBox.hidden = true;
	render();

	let answer;
	try {
		answer = await submitCheckout();
	} catch {
		// Deliberately not logged: nothing here may ever print form data.
		answer = { code: "NETWORK_ERROR" };
	}
	finish(answer);
}

// --- 3-D Secure ----------------------------------------------------------------
// The issuer's challenge is shown here, inside the frame: the merchant's page
// never sees it, and learns only the final outcome (docs/authentication.md).

let challengeFrame = null;

function showChallenge(url) {
	state = "challenge";
	fieldset.hidden = true;
	outcomeBox.hidden = true;
	challengeFrame = document.createElement("iframe");
	challengeFrame.id = "challenge";
	challengeFrame.title = "Your bank: confirm the payment";
	challengeFrame.src = url;
	form.before(challengeFrame);
	render();
}

/** What the session's payment came to, or CHALLENGE again: a checkout's, or a card update's renewal owed. */
function continuePayment() {
	const path = checkout.update ? "/api/card-update/continue" : "/api/checkout/continue";
	return post(path, { sessionId: checkout.sessionId, landingDomain: checkout.domain });
}

/** The challenge ended: the service says what the payment came to (the same answer however often it is asked). */
async function afterChallenge() {
	if (state !== "challenge") return;
	state = "submitting";
	challengeFrame?.remove();
	challengeFrame = null;
	fieldset.hidden = false;
	render();
	let answer;
	try {
		answer = await continuePayment();
	} catch {
		answer = { code: "NETWORK_ERROR" };
	}
	finish(answer);
}

/**
 * A frame loaded again (reloaded by the buyer) while its session's payment waits for a challenge, or has just been
 * paid: the challenge is shown again, or the outcome. A session with no payment in progress leaves the form as it is.
 */
async function resumePayment() {
	let answer;
	try {
		answer = await continuePayment();
	} catch {
		return;
	}
	if (state === "ready" && (answer.code === "CHALLENGE" || answer.code === "OK")) finish(answer);
}

/** Shows a checkout's answer and tells the merchant's page; a challenge is shown here instead. */
function finish(answer) {
	if (answer.code === "CHALLENGE" && typeof answer.challengeUrl === "string") return showChallenge(answer.challengeUrl);
	const outcome = outcomeFor(answer.code, answer.message, checkout.update);
	let text = outcome.text;
	if (answer.code === "INVALID_REQUEST") text = [text, ...showServiceErrors(answer.errors)].join(" ");
	// A code the service refused: said next to the field too, where the buyer corrects or clears it.
	if (answer.code.startsWith("COUPON_") && fields.promotionCode) fields.promotionCode.serviceError = text;
	if (outcome.success && answer.discount?.code) text = `${text} Promotion code ${answer.discount.code} applied.`;
	state = outcome.final ? "closed" : "ready";
	if (outcome.success) {
		// Paid: the card data has no further use here, and its emptied fields are nothing the buyer has to fix.
		for (const f of [fields.cardNumber, fields.cvc]) {
			f.input.value = "";
			f.touched = false;
			f.serviceError = null;
		}
	}
	showOutcome(text, outcome.success ? "success" : "error");
	render();

	const result = { type: "result", code: answer.code, message: answer.message ?? outcome.text };
	if (answer.customerId !== undefined) result.customerId = answer.customerId;
	if (typeof answer.recovered === "boolean") result.recovered = answer.recovered;
	if (answer.discount && typeof answer.discount === "object") result.discount = answer.discount;
	toParent(result);
}

// --- Wiring -------------------------------------------------------------------

for (const f of Object.values(fields)) {
	f.input.addEventListener("input", () => {
		if (f.format) reformat(f.input, f.format);
		f.serviceError = null;
		render();
	});
	f.input.addEventListener("blur", () => {
		f.touched = true;
		render();
	});
}

form.addEventListener("submit", event => {
	event.preventDefault();
	pay();
});

window.addEventListener("message", event => {
	// The sandbox's challenge page, on this origin, inside this frame.
	if (event.origin === location.origin && event.source === challengeFrame?.contentWindow && event.data?.type === "challenge-ended") {
		afterChallenge();
		return;
	}
	if (!parentOrigin || event.origin !== parentOrigin || event.source !== window.parent) return;
	const data = event.data;
	if (data?.type !== "init") return;
	const extra = data.additionalData;
	if (extra !== null && typeof extra === "object" && !Array.isArray(extra)) additionalData = extra;
});

// Tell the parent our height whenever it changes (errors, outcome), so the
// iframe fits its content without a scroll bar.
const page = $("page");
new ResizeObserver(() => toParent({ type: "height", height: Math.ceil(page.getBoundingClientRect().height) })).observe(page);

if (checkout.update) $("buyer-fields").hidden = true;
if (checkout.promotionCode) $("promotion-field").hidden = false;
if (!checkout.sessionId || (!checkout.update && (!Number.isInteger(checkout.productId) || checkout.productId <= 0)) || !checkout.domain) {
	close("This checkout is not set up correctly (session, product or domain missing). Please contact the merchant.");
} else if (!window.isSecureContext || !globalThis.crypto?.subtle) {
	// Web Crypto, which encrypts the card, exists only on HTTPS pages (and localhost).
	close("Card payments need a secure (HTTPS) page. Please contact the merchant.");
} else {
	render();
	resumePayment();
}
