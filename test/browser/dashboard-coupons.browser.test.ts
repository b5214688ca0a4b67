// The dashboard's Coupons page in Chromium (docs/coupons.md, docs/dashboard.md): an operator creates a coupon with
// the form and deactivates it after a confirmation, each audited; a viewer reads the list with neither the form nor
// the button; the customer's page shows the coupon in force. The pages are saved to test-output/.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

let browser: Browser;
let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	browser = await launchChromium();
	app = await startApp();
	shop = await createShop(app);
}, 60_000);
afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

async function signedIn(role: "viewer" | "operator"): Promise<Page> {
	const email = `${role}-coupons-${Date.now().toString(36)}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role, password: PASSWORD }).expect(201);
	const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").fill(email);
	await page.getByLabel("Password").fill(PASSWORD);
	await page.getByRole("button", { name: "Sign in" }).click();
	await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
	return page;
}

const row = (page: Page, code: string) => page.getByRole("row").filter({ hasText: code });

test("When an operator creates a coupon and deactivates it, then the list shows it active then not, and the audit log names both", async () => {
	// Arrange
	const page = await signedIn("operator");
	await page.getByRole("link", { name: "Coupons" }).click();
	await page.getByRole("heading", { name: "Coupons" }).waitFor(WAIT);

	// Act: 20 % for 3 periods, at most 50.
	await page.getByLabel("Code").fill("SPRING20");
	await page.getByLabel("Value").fill("20");
	await page.getByLabel("Duration").selectOption("repeating");
	await page.getByLabel("Periods").fill("3");
	await page.getByLabel("Max redemptions").fill("50");
	await page.getByRole("button", { name: "Create coupon" }).click();

	// Assert
	await page.getByText("Coupon SPRING20 created.").waitFor(WAIT);
	expect(await row(page, "SPRING20").locator("td").allTextContents()).toEqual([
		"SPRING20",
		"20 %",
		"3 periods",
		"all",
		"0 of 50",
		"–",
		"yes",
		"Deactivate",
	]);
	await page.screenshot({ path: path.join(OUTPUT, "dashboard-coupons.png"), fullPage: true });

	// Act: deactivate, confirmed.
	await row(page, "SPRING20").getByRole("button", { name: "Deactivate" }).click();
	const confirmation = await page.locator("#confirm-text").textContent();
	await page.getByRole("button", { name: "Confirm" }).click();

	// Assert
	await page.getByText("Coupon SPRING20 deactivated.").waitFor(WAIT);
	expect(confirmation).toBe("Deactivate coupon SPRING20? New checkouts refuse it; customers that have it keep it.");
	expect(await row(page, "SPRING20").locator("td").nth(6).textContent()).toBe("no");
	await page.getByRole("link", { name: "Audit log" }).click();
	await page.getByRole("cell", { name: "deactivate coupon" }).first().waitFor(WAIT);
	expect(await page.getByRole("cell", { name: "create coupon" }).count()).toBeGreaterThan(0);
}, 90_000);

test("When a viewer opens the Coupons page, then it lists the coupons without the form or a Deactivate button, and a customer's page shows its coupon", async () => {
	// Arrange: a coupon, and a customer that paid with it.
	const coupon = (
		await admin(app)
			.post(`/accounts/${shop.accountId}/coupons`, { code: "VIEWME", amountOff: 2, currency: "EUR", duration: "forever" })
			.expect(201)
	).body;
	const paid = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: coupon.code } });
	const page = await signedIn("viewer");

	// Act
	await page.getByRole("link", { name: "Coupons" }).click();
	await row(page, "VIEWME").waitFor(WAIT);

	// Assert
	expect(await row(page, "VIEWME").locator("td").allTextContents()).toEqual(["VIEWME", "€2.00", "forever", "all", "1", "–", "yes", ""]);
	expect(await page.getByRole("form", { name: "New coupon" }).count()).toBe(0);
	expect(await page.getByRole("button", { name: "Deactivate" }).count()).toBe(0);

	// Act: the customer's page
	await page.goto(`${app.url}/dashboard/#/customer/${paid.body.customerId}`);
	const coupons = page.locator("dt", { hasText: /^Coupon$/ }).locator("xpath=following-sibling::dd[1]");
	await coupons.waitFor(WAIT);

	// Assert
	expect(await coupons.textContent()).toBe("VIEWME: €2.00 off, every charge");
}, 90_000);
