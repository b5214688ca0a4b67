// The demo merchant page (public/demo) as the browser tests drive it: open it
// with a product chosen, fill the card frame as a buyer would, read the result
// the page shows.
import type { FrameLocator, Page } from "playwright-core";
import { startApp, type TestApp } from "../setup/app";

export const CVC = "123";
export const WAIT = { timeout: 30_000 };

let buyers = 0;
/**
 * A new email per checkout, so no test meets ALREADY_SUBSCRIBED from another. In base 36: the checkout refuses a
 * field holding a card number, and decimal digits joined by dashes could make one (a pid starting with 4, then a
 * timestamp, then the counter: 19 digits, a valid Visa number one time in ten).
 */
function buyerEmail(): string {
	buyers += 1;
	return `buyer-${process.pid.toString(36)}-${Date.now().toString(36)}-${buyers}@example.com`;
}

export async function fillCheckout(frame: FrameLocator, cardNumber: string): Promise<void> {
	await frame.getByLabel("Email").fill(buyerEmail());
	await frame.getByLabel("First name").fill("Ada");
	await frame.getByLabel("Last name").fill("Lovelace");
	// Typed key by key, spaces included, as a buyer would.
	await frame.getByLabel("Card number").pressSequentially(cardNumber.replace(/(\d{4})(?=\d)/g, "$1 "));
	await frame.getByLabel("Expiry").fill("12/34");
	await frame.getByLabel("Security code").fill(CVC);
}

/** What the demo page shows once the SDK reported the outcome: "OK customer <id>", or the code. */
export async function resultOf(page: Page): Promise<string> {
	await page.waitForFunction(() => (document.querySelector("#result")?.textContent ?? "").trim() !== "", null, WAIT);
	return ((await page.locator("#result").textContent()) ?? "").trim();
}

/** Opens the demo page with a product of this billing kind chosen; returns the checkout frame. */
export async function openDemoCheckout(page: Page, demoUrl: string, billing = "CHARGE"): Promise<FrameLocator> {
	const response = await page.goto(demoUrl);
	if (response?.status() !== 200) throw new Error(`The demo page answered ${response?.status()}`);
	// The page says "Starting…" until GET /demo/session answered, then shows
	// the products, or says why it could not: fail with that, not a timeout.
	await page.waitForFunction(() => !(document.querySelector("#status")?.textContent ?? "").startsWith("Starting"), null, WAIT);
	const problem = await page.evaluate(() => document.querySelector("#status")?.textContent ?? null);
	if (problem) throw new Error(`The demo page could not start: ${problem}`);
	// The first of its billing: the demo's metered plan is CHARGE too, after the monthly one.
	await page
		.getByRole("radio", { name: new RegExp(`\\(${billing}:`) })
		.first()
		.check();
	return page.frameLocator("iframe");
}

/**
 * The whole service with the demo on (DEMO=1, `env` added) and its demo account seeded; the demo page's address on
 * localhost, as a developer opens it after npm start (/demo/session binds the session to the page's host name).
 */
export async function startDemoApp(env: Record<string, string> = {}): Promise<{ app: TestApp; demoUrl: string; accountId: number }> {
	const app = await startApp({ env: { DEMO: "1", ...env } });
	const seeded = (await app.broker.call("accounts.seedDemo")) as { accountId: number };
	return { app, demoUrl: `${app.url.replace("127.0.0.1", "localhost")}/demo`, accountId: seeded.accountId };
}
