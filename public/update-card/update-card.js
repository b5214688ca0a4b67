// The page a card update link opens (docs/dashboard.md): the token is in the
// URL's fragment, which no server sees; the page trades it for a card update
// session for this host and mounts the card frame in update mode.
const statusLine = document.getElementById("status");
const resultLine = document.getElementById("result");

const MESSAGES = {
	OK: "Your card is updated. Thank you.",
	PAYMENT_DECLINED: "This card was declined: try another one.",
	CREDITCARD_VALIDATION: "This card could not be checked: look at the number and the expiry.",
};

async function open() {
	const token = location.hash.slice(1);
	if (!/^[A-Za-z0-9_-]{43}$/.test(token)) {
		statusLine.textContent = "This link is not complete: open it again from the message you received.";
		return;
	}
	const response = await fetch("/api/card-update-link", {
		method: "POST",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ token }),
	});
	const answer = await response.json().catch(() => ({}));
	if (!response.ok) {
		statusLine.textContent = answer.message ?? "This link cannot be opened now.";
		return;
	}
	statusLine.textContent = "";
	PaymentCheckout.mount(document.getElementById("card"), {
		sessionId: answer.sessionId,
		mode: "update",
		domain: location.hostname,
		onResult: ({ code, recovered }) => {
			resultLine.textContent = `${MESSAGES[code] ?? code}${recovered ? " The payment you owed was made." : ""}`;
			resultLine.dataset.code = code;
		},
	});
}

void open();
