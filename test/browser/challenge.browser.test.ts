// 3-D Secure in Chromium: the sandbox's challenge shown inside the card frame
// on the demo page, completed or failed by the buyer; the merchant's page
// learns only the outcome (docs/authentication.md). Checked over HTTP after.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { admin } from "../factories/merchant";
import { setWallClock } from "../factories/wall-clock";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";
import { fillCheckout, openDemoCheckout, resultOf, WAIT } from "./demo-page";

const CARD_CHALLENGE = "4000000000003220";
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

let browser: Browser;
let app: TestApp;
let demoUrl: string;
let context: BrowserContext;

beforeAll(async () => {
	browser = await launchChromium();
	// The checkout recovery sweeps every 300 ms, 4 s after a checkout's session ended: it settles a checkout left at its challenge.
	app = await startApp({
		env: { DEMO: "1", REQUEST_TIMEOUT_MS: "3000", REFUND_RECOVERY_GRACE_MS: "4000", REFUND_RECOVERY_INTERVAL_MS: "300" },
	});
	await app.broker.call("accounts.seedDemo");
	demoUrl = `${app.url.replace("127.0.0.1", "localhost")}/demo`;
	mkdirSync(OUTPUT, { recursive: true });
}, 60_000);
afterAll(async () => {
	await browser?.close();
	await app?.stop();
});
beforeEach(async () => {
	context = await browser.newContext();
});
afterEach(async () => {
	jest.useRealTimers();
	await context?.close();
});

/** Every message the merchant's page receives (from the card frame, through the SDK's window). */
async function recordMessages(page: Page): Promise<void> {
	await page.addInitScript(() => {
		const seen: unknown[] = [];
		(window as unknown as { seenMessages: unknown[] }).seenMessages = seen;
		window.addEventListener("message", event => seen.push(event.data));
	});
}
const messagesOf = (page: Page) => page.evaluate(() => JSON.stringify((window as unknown as { seenMessages: unknown[] }).seenMessages));

/** The demo page paid with the challenge card, up to the challenge shown in the frame. */
async function atChallenge(page: Page) {
	const frame = await openDemoCheckout(page, demoUrl);
	await fillCheckout(frame, CARD_CHALLENGE);
	await frame.getByRole("button", { name: "Pay" }).click(WAIT);
	const challenge = frame.frameLocator("#challenge");
	await challenge.getByRole("button", { name: "Complete authentication" }).waitFor(WAIT);
	return { frame, challenge };
}

/** The transactions of the demo account's customer the page's result names, over the admin API. */
async function transactionsOf(result: string): Promise<{ type: string; status: string }[]> {
	const customerId = Number(/^OK customer (\d+)$/.exec(result)?.[1]);
	const demo = (await app.broker.call("accounts.demoAccount", {})) as { accountId: number };
	return (await admin(app).get(`/accounts/${demo.accountId}/customers/${customerId}/transactions`).expect(200)).body;
}

test("When the buyer completes the challenge in the frame, then the demo page gets OK, and the challenge page was never the merchant's to see", async () => {
	// Arrange
	const page = await context.newPage();
	await recordMessages(page);
	const { frame, challenge } = await atChallenge(page);
	await page.screenshot({ path: path.join(OUTPUT, "challenge-shown.png"), fullPage: true });

	// Act
	await challenge.getByRole("button", { name: "Complete authentication" }).click();
	const result = await resultOf(page);

	// Assert
	expect(result).toMatch(/^OK customer \d+$/);
	await frame.getByText("Payment complete").waitFor(WAIT);
	// The merchant's page heard the outcome only: no challenge, no address of one.
	const heard = await messagesOf(page);
	expect(heard).not.toContain("CHALLENGE");
	expect(heard).not.toContain("challenge.html");
	expect((await transactionsOf(result)).map(t => [t.type, t.status])).toEqual([["SUBSCRIPTION_START", "APPROVED"]]);
	// The merchant hears the charge and the conversion (the admin API's view of the demo account's webhooks).
	const customerId = Number(/^OK customer (\d+)$/.exec(result)?.[1]);
	const demo = (await app.broker.call("accounts.demoAccount", {})) as { accountId: number };
	await eventually(async () => {
		const deliveries = (await admin(app).get(`/accounts/${demo.accountId}/webhooks?limit=1000`).expect(200)).body as {
			type: string;
			customerId: number;
		}[];
		expect(deliveries.filter(d => d.customerId === customerId).map(d => d.type)).toEqual(
			expect.arrayContaining(["TRANSACTION", "CONVERSION"]),
		);
	}, 15_000);
}, 90_000);

test("When the buyer fails the challenge, then the demo page gets AUTHENTICATION_FAILED and the frame says nothing was charged", async () => {
	// Arrange
	const page = await context.newPage();
	const { frame, challenge } = await atChallenge(page);

	// Act: a double click on the button, as an impatient buyer does.
	await challenge.getByRole("button", { name: "Fail authentication" }).dblclick();
	const result = await resultOf(page);

	// Assert
	expect(result).toBe("AUTHENTICATION_FAILED");
	await frame.getByText("nothing was charged").waitFor(WAIT);
	await page.screenshot({ path: path.join(OUTPUT, "challenge-failed.png"), fullPage: true });
}, 90_000);

test("When the buyer fails the challenge and then pays with another card in the same form, then the frame shows the payment complete and no field error beside it", async () => {
	// Arrange
	const page = await context.newPage();
	const { frame, challenge } = await atChallenge(page);
	await challenge.getByRole("button", { name: "Fail authentication" }).click();
	await frame.getByText("nothing was charged").waitFor(WAIT);

	// Act: another card, typed over the first.
	await frame.getByLabel("Card number").fill("");
	await frame.getByLabel("Card number").pressSequentially("4242 4242 4242 4242");
	await frame.getByLabel("Security code").fill("123");
	await frame.getByRole("button", { name: "Pay" }).click(WAIT);
	await frame.getByText("Payment complete").waitFor(WAIT);

	// Assert
	await page.screenshot({ path: path.join(OUTPUT, "challenge-failed-then-paid.png"), fullPage: true });
	const fieldErrors = await frame.locator("p.error").allTextContents();
	expect(fieldErrors.filter(text => text.trim() !== "")).toEqual([]);
	expect(await frame.locator('[aria-invalid="true"]').count()).toBe(0);
}, 90_000);

test("When the buyer reloads the frame during the challenge, then the challenge shows again, and completing it pays once", async () => {
	// Arrange
	const page = await context.newPage();
	const { frame } = await atChallenge(page);

	// Act
	const cardFrame = page.frames().find(f => f.url().includes("/checkout/frame.html"));
	await cardFrame?.evaluate(() => location.reload());
	const again = frame.frameLocator("#challenge");
	await again.getByRole("button", { name: "Complete authentication" }).click(WAIT);
	const result = await resultOf(page);

	// Assert
	expect(result).toMatch(/^OK customer \d+$/);
	expect((await transactionsOf(result)).map(t => [t.type, t.status])).toEqual([["SUBSCRIPTION_START", "APPROVED"]]);
}, 90_000);

test("When the buyer closes the page during the challenge, then once the session has ended the customer is ABANDONED and nothing is charged", async () => {
	// Arrange
	const page = await context.newPage();
	const { frame } = await atChallenge(page);
	const email = await frame.getByLabel("Email").inputValue();
	const demo = (await app.broker.call("accounts.demoAccount", {})) as { accountId: number };
	const customers = async () =>
		(
			await admin(app)
				.get(`/accounts/${demo.accountId}/customers?email=${encodeURIComponent(email)}`)
				.expect(200)
		).body as {
			id: number;
			status: string;
		}[];
	const during = await customers();

	// Act: the buyer leaves; the session's 5 minutes and the recovery's grace pass.
	await page.close();
	setWallClock(Date.now() + 5 * 60 * 1000 + 5000);

	// Assert
	expect(during.map(c => c.status)).toEqual(["PENDING"]);
	const [customer] = await eventually(async () => {
		const found = await customers();
		expect(found.map(c => c.status)).toEqual(["ABANDONED"]);
		return found;
	}, 20_000);
	expect((await admin(app).get(`/accounts/${demo.accountId}/customers/${customer.id}/transactions`).expect(200)).body).toEqual([]);
}, 90_000);
