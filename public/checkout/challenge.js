// The sandbox's challenge page: the tester's choice goes to the service once
// (a second click, or a second tab, changes nothing), then the card frame
// around this page is told that the challenge ended. It never learns the
// outcome from here: the frame asks the service (POST /api/checkout/continue, or /api/card-update/continue).
const challengeId = new URLSearchParams(location.search).get("challenge") ?? "";
const buttons = [document.getElementById("complete"), document.getElementById("fail")];
const status = document.getElementById("status");

/** Only the card frame, on this origin, hears that the challenge ended. */
function ended() {
	if (window.parent !== window) window.parent.postMessage({ type: "challenge-ended" }, location.origin);
}

async function choose(result) {
	for (const button of buttons) button.disabled = true;
	status.hidden = false;
	status.textContent = "Sending…";
	try {
		const res = await fetch(`/api/sandbox/challenges/${encodeURIComponent(challengeId)}`, {
			method: "POST",
			headers: { "Content-Type": "application/json" },
			body: JSON.stringify({ result }),
		});
		const body = res.ok ? await res.json() : null;
		status.textContent = body?.accepted ? "Done. Returning to the payment…" : "This challenge was answered already, or is over.";
		ended();
	} catch {
		status.textContent = "The bank could not be reached. Try again.";
		for (const button of buttons) button.disabled = false;
	}
}

buttons[0].addEventListener("click", () => choose("complete"));
buttons[1].addEventListener("click", () => choose("fail"));
for (const button of buttons) button.disabled = false;
