// The customer portal in Chromium (docs/portal.md), through a link the merchant's API made: a buyer downloads an
// invoice's PDF, adds seats at exactly the quoted charge, cancels at the period's end with a reason and undoes it,
// cancels again and sees the period end without a charge, updates the card through a 3-D Secure challenge, and pays
// a renewal owed with a new card. Every page is saved to test-output/.
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { portalLink, portalSettings } from "../factories/portal";
import { clockToRenewalOf } from "../factories/test-clock";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";

const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

let browser: Browser;
let app: TestApp;
let context: BrowserContext;
let shop: Shop;

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	browser = await launchChromium();
	app = await startApp();
}, 60_000);
afterAll(async () => {
	await browser?.close();
	await app?.stop();
});
beforeEach(async () => {
	shop = await createShop(app);
	await portalSettings(app, shop, { enabled: true, pause: true, products: [shop.products.charge] });
	// Narrow, as a phone: the page must work at 360 px.
	context = await browser.newContext({ viewport: { width: 360, height: 800 } });
});
afterEach(async () => {
	await context?.close();
});

async function subscribed(card: string = CARDS.visa): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId: shop.products.charge, card });
	expect(body.code).toBe("OK");
	return body.customerId;
}

const customer = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop)).expect(200)).body;
const transactionsOf = async (id: number) =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${id}/transactions`).expect(200)).body as {
		type: string;
		status: string;
		amount: number;
	}[];
const eventsOf = async (id: number) =>
	(await app.http().get(`/api/events?customerId=${id}&limit=100`).set(bearer(shop)).expect(200)).body.data as {
		type: string;
		data: { by?: string; cancellation?: { reason: string; comment: string | null } };
	}[];

/** The buyer opens the link the merchant's server made; answers the page, on the buyer's subscription. */
async function openPortal(customerId: number): Promise<Page> {
	const page = await context.newPage();
	await page.goto(await portalLink(app, shop, customerId));
	await page.getByRole("heading", { name: "Your subscriptions" }).waitFor(WAIT);
	expect(page.url()).not.toContain("#");
	return page;
}
/** The card frame, once its script has set it up for a card update (it names its button then). */
async function cardFrame(page: Page) {
	const frame = page.frameLocator("iframe");
	await frame.getByRole("button", { name: "Update card" }).waitFor(WAIT);
	return frame;
}
/** Waits until `check` holds (10 s at most), then asserts it. */
async function until(check: () => Promise<boolean>): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (!(await check()) && Date.now() < deadline) await new Promise(r => setTimeout(r, 50));
	expect(await check()).toBe(true);
}
const section = (page: Page, id: number) => page.locator(`[data-subscription-id="${id}"]`);
const saved = (page: Page, name: string) => page.screenshot({ path: path.join(OUTPUT, `portal-${name}.png`), fullPage: true });

test("When a buyer opens the portal, then they download an invoice's PDF and add seats, charged exactly the quote shown", async () => {
	// Arrange: the checkout's invoice is issued.
	const id = await subscribed();
	await until(async () => (await app.http().get(`/api/invoices?customerId=${id}`).set(bearer(shop))).body.data.length === 1);
	const page = await openPortal(id);
	const mine = section(page, id);

	// Act: the invoice's PDF
	await mine.getByRole("button", { name: "Invoices" }).click();
	const pdfLink = mine.getByRole("link", { name: /^PDF / });
	await pdfLink.waitFor(WAIT);
	const [download] = await Promise.all([page.waitForEvent("download"), pdfLink.click()]);
	const pdf = readFileSync((await download.path())!);

	// Act: three seats, as quoted
	await mine.getByRole("button", { name: "Change plan" }).click();
	await mine.getByLabel("Seats").fill("3");
	await mine.getByRole("button", { name: "See price" }).click();
	const quoted = (await mine.getByTestId("quote-charge").textContent(WAIT))!;
	await saved(page, "quote");
	await mine.getByRole("button", { name: "Confirm change" }).click();
	await until(async () => (await customer(id)).quantity === 3);

	// Assert
	expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
	const all = await transactionsOf(id);
	const change = all.find(t => t.type === "SUBSCRIPTION_CHANGE")!;
	expect(change.status).toBe("APPROVED");
	expect(quoted.replace(/[^\d.]/g, "")).toBe(change.amount.toFixed(2));
	// Events are relayed after the answer: waited for.
	await until(async () => (await eventsOf(id)).some(e => e.type === "SUBSCRIPTION_CHANGED"));
	expect((await eventsOf(id)).find(e => e.type === "SUBSCRIPTION_CHANGED")?.data.by).toBe("buyer");
	await saved(page, "changed");
}, 90_000);

test("When a buyer cancels at the period's end with a reason, undoes it, and cancels again, then the period's end brings CANCELLATION and no renewal is charged", async () => {
	// Arrange
	const id = await subscribed();
	const page = await openPortal(id);
	const mine = section(page, id);
	const cancel = async (comment: string) => {
		await mine.getByRole("button", { name: "Cancel subscription" }).click();
		await mine.getByLabel("At the end of the period").check();
		await mine.getByLabel("Reason").selectOption("too_expensive");
		await mine.getByLabel("Comment (optional)").fill(comment);
		await mine.getByRole("button", { name: "Confirm cancellation" }).click();
		await mine.getByRole("button", { name: "Undo cancellation" }).waitFor(WAIT);
	};

	// Act: cancel, then undo
	await cancel("Too dear for me");
	const scheduled = await customer(id);
	await saved(page, "cancel-scheduled");
	await mine.getByRole("button", { name: "Undo cancellation" }).click();
	await mine.getByRole("button", { name: "Cancel subscription" }).waitFor(WAIT);
	const undone = await customer(id);

	// Assert
	expect(scheduled.cancelAt).toBe(scheduled.nextRenewalTimestamp);
	expect(undone).toMatchObject({ status: "ACTIVE", cancelAt: null });

	// Act: cancel again; the test clock reaches the period's end
	await cancel("Still too dear");
	await clockToRenewalOf(app, shop, id);

	// Assert
	expect(await customer(id)).toMatchObject({ status: "UNSUBSCRIBED", unsubscriptionTimestamp: scheduled.cancelAt });
	expect((await transactionsOf(id)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
	await until(async () => (await eventsOf(id)).some(e => e.type === "CANCELLATION"));
	const events = (await eventsOf(id)).filter(e => e.type.startsWith("CANCELLATION"));
	expect(events.map(e => [e.type, e.data.by, e.data.cancellation?.comment])).toEqual([
		["CANCELLATION_SCHEDULED", "buyer", "Too dear for me"],
		["CANCELLATION_UNDONE", "buyer", "Too dear for me"],
		["CANCELLATION_SCHEDULED", "buyer", "Still too dear"],
		["CANCELLATION", "buyer", "Still too dear"],
	]);
	await page.reload();
	await mine.getByRole("button", { name: "Cancel subscription" }).waitFor({ state: "detached", timeout: 10_000 });
}, 90_000);

test("When a buyer updates the card and the issuer asks for 3-D Secure, then after the challenge the subscription is on the new card", async () => {
	// Arrange
	const id = await subscribed();
	const page = await openPortal(id);
	const mine = section(page, id);

	// Act
	await mine.getByRole("button", { name: "Update card" }).click();
	const frame = await cardFrame(page);
	await frame.getByLabel("Card number").pressSequentially("4000 0000 0000 3220");
	await frame.getByLabel("Expiry").fill("11/30");
	await frame.getByLabel("Security code").fill("123");
	await frame.getByRole("button", { name: "Update card" }).click(WAIT);
	const challenge = frame.frameLocator("#challenge");
	await challenge.getByRole("button", { name: "Complete authentication" }).click(WAIT);
	await page.locator("#status", { hasText: "Your card is updated. Thank you." }).waitFor(WAIT);

	// Assert
	await until(async () => (await customer(id)).cardBin === "400000");
	expect(await customer(id)).toMatchObject({ status: "ACTIVE", cardBin: "400000", cardType: "visa" });
	await until(async () => (await eventsOf(id)).some(e => e.type === "PAYMENT_METHOD_UPDATED" && e.data.by === "buyer"));
	await saved(page, "card-updated");
}, 90_000);

test("When a buyer owes a declined renewal, then the portal offers to pay it with a new card, and paying brings the subscription back", async () => {
	// Arrange: the renewal is declined and retried.
	const id = await subscribed(CARDS.renewalsInsufficientFunds);
	await clockToRenewalOf(app, shop, id);
	expect((await customer(id)).attempts).toBe(1);
	const page = await openPortal(id);
	const mine = section(page, id);

	// Act
	await mine.getByRole("button", { name: "Pay now with a new card" }).click();
	const frame = await cardFrame(page);
	await frame.getByLabel("Card number").pressSequentially("5555 5555 5555 4444");
	await frame.getByLabel("Expiry").fill("12/34");
	await frame.getByLabel("Security code").fill("123");
	await frame.getByRole("button", { name: "Update card" }).click(WAIT);
	await page.locator("#status", { hasText: "Your card is updated. Thank you. The payment you owed was made." }).waitFor(WAIT);

	// Assert
	await until(async () => (await customer(id)).attempts === 0);
	expect(await customer(id)).toMatchObject({ status: "ACTIVE", attempts: 0, cardType: "mastercard" });
	const renewals = (await transactionsOf(id)).filter(t => t.type === "RENEWAL").map(t => t.status);
	expect(renewals).toEqual(["DECLINED", "APPROVED"]);
	await saved(page, "overdue-paid");
}, 90_000);

test("When a buyer uses only the keyboard at 360 px, then they reach and cancel at the period's end, the page never scrolls sideways, and the page names its controls", async () => {
	// Arrange
	const id = await subscribed();
	const page = await openPortal(id);
	const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");

	// Act: Tab to "Cancel subscription", open it, choose a reason, confirm.
	for (let i = 0; i < 20 && (await focused()) !== "Cancel subscription"; i++) await page.keyboard.press("Tab");
	await page.keyboard.press("Enter");
	await section(page, id).getByLabel("Reason").focus();
	await page.keyboard.press("ArrowDown");
	for (let i = 0; i < 10 && (await focused()) !== "Confirm cancellation"; i++) await page.keyboard.press("Tab");
	await page.keyboard.press("Enter");
	await section(page, id).getByRole("button", { name: "Undo cancellation" }).waitFor(WAIT);

	// Assert
	expect((await customer(id)).cancelAt).not.toBeNull();
	expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
	const unnamed = await page.evaluate(
		() =>
			Array.from(document.querySelectorAll("button, input, select, textarea, a")).filter(
				node =>
					!(node.textContent?.trim() || node.getAttribute("aria-label") || (node.id && document.querySelector(`label[for="${node.id}"]`))),
			).length,
	);
	expect(unnamed).toBe(0);
	await saved(page, "keyboard");
}, 90_000);
