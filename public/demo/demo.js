// The demo merchant page. A real merchant's server would create the session
// with its API token (POST /api/session?domain=…); here GET /demo/session
// does that on the server for the sandbox demo account and the host this
// page was opened on, so no token ever reaches the browser.
const productsBox = document.getElementById("products");
const statusLine = document.getElementById("status");
const checkoutBox = document.getElementById("checkout");
const resultLine = document.getElementById("result");

const BILLING = {
	CHARGE: "charged now",
	PREAUTHORIZE: "card held, charged when the trial ends",
	SCHEDULE: "first charge when the trial ends",
};

let checkout = null;

async function loadSession() {
	const res = await fetch("/demo/session", { cache: "no-store", headers: { Accept: "application/json" } });
	if (!res.ok) throw new Error(`GET /demo/session answered ${res.status}`);
	return res.json();
}

function price(amount, currency) {
	try {
		return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount);
	} catch {
		return `${amount} ${currency}`;
	}
}

function showResult({ code, customerId }) {
	resultLine.textContent = code === "OK" ? `OK customer ${customerId}` : code;
	resultLine.dataset.code = code;
}

function mountCheckout(session, product) {
	checkout?.unmount();
	resultLine.textContent = "";
	checkout = PaymentCheckout.mount(checkoutBox, {
		sessionId: session.sessionId,
		productId: product.id,
		// The host name this page is on: the session was created for it.
		domain: location.hostname,
		additionalData: { source: "demo" },
		// The demo account has the code WELCOME10 (docs/coupons.md).
		promotionCode: true,
		onResult: showResult,
	});
}

function showProducts(session) {
	if (session.products.length === 0) {
		statusLine.textContent = "The demo account has no products.";
		return;
	}
	statusLine.remove();
	session.products.forEach((product, index) => {
		const label = document.createElement("label");
		const radio = document.createElement("input");
		radio.type = "radio";
		radio.name = "product";
		radio.value = String(product.id);
		radio.dataset.billing = product.billing;
		radio.checked = index === 0;
		radio.addEventListener("change", () => radio.checked && mountCheckout(session, product));
		const text = `${product.name} — ${price(product.amount, product.currency)} (${product.billing}: ${BILLING[product.billing] ?? product.billing})`;
		label.append(radio, ` ${text}`);
		productsBox.append(label);
	});
	mountCheckout(session, session.products[0]);
}

loadSession().then(showProducts, error => {
	statusLine.textContent = `Could not start a demo session (${error.message}). The demo runs with npm start (DEMO=1).`;
});
