// A promotion code in the hosted card frame, in Chromium (docs/coupons.md): the demo page mounts the SDK with
// promotionCode: true, the buyer types a code, the service applies or refuses it, and the frame says which.
import type { Browser, BrowserContext } from "playwright-core";
import { admin } from "../factories/merchant";
import type { TestApp } from "../setup/app";
import { launchChromium } from "./browser";
import { fillCheckout, openDemoCheckout, resultOf, startDemoApp, WAIT } from "./demo-page";

let browser: Browser;
let app: TestApp;
let demoUrl: string;
let context: BrowserContext;
let demoAccountId: number;

beforeAll(async () => {
	browser = await launchChromium();
	({ app, demoUrl, accountId: demoAccountId } = await startDemoApp());
}, 60_000);
afterAll(async () => Promise.all([browser?.close(), app?.stop()]));
beforeEach(async () => {
	context = await browser.newContext();
});
afterEach(() => context?.close());

test("When the buyer types an unknown promotion code, then the frame says so next to the field and nothing is paid; with WELCOME10 the payment is 10 % less and the frame says the code applied", async () => {
	// Arrange
	const page = await context.newPage();
	const frame = await openDemoCheckout(page, demoUrl);
	await fillCheckout(frame, "4242424242424242");
	const code = frame.getByLabel("Promotion code");

	// Act: an unknown code
	await code.fill("NOPE-NOPE");
	await frame.getByRole("button", { name: "Pay" }).click(WAIT);

	// Assert: refused beside the field, Pay disabled until the code changes
	await frame.locator("#promotion-code-error").getByText("This promotion code does not exist").waitFor(WAIT);
	expect(await resultOf(page)).toBe("COUPON_NOT_FOUND");
	expect(await code.getAttribute("aria-invalid")).toBe("true");
	expect(await frame.locator("#pay").isDisabled()).toBe(true);

	// Act: the demo's code, in lower case
	await code.fill("welcome10");
	await frame.locator("#pay:enabled").waitFor(WAIT);
	await frame.getByRole("button", { name: "Pay" }).click(WAIT);

	// Assert: paid, less 10 % (9.99 → 8.99: 0.999 rounded half up to 1.00 off)
	await frame.getByText("Promotion code WELCOME10 applied.").waitFor(WAIT);
	const result = await page.waitForFunction(() => document.querySelector("#result")?.textContent?.startsWith("OK"), null, WAIT);
	expect(await result.jsonValue()).toBe(true);
	const customerId = Number(((await page.locator("#result").textContent()) ?? "").replace(/\D+/g, ""));
	const [charge] = (await admin(app).get(`/accounts/${demoAccountId}/customers/${customerId}/transactions`).expect(200)).body;
	expect(charge).toMatchObject({ type: "SUBSCRIPTION_START", amount: 8.99, discount: { code: "WELCOME10", amount: 1 } });
}, 90_000);
