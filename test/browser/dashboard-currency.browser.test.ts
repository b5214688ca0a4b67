// Every amount in the dashboard shows its currency (issue 38): a shop sells a
// euro plan and a yen plan, one charge of each partly refunded. The
// Transactions page and each customer's page show every amount formatted with
// its currency, in the currency's minor units (¥1,200, €9.99), matching what
// the API answered; the dashboard's transaction lists carry the ISO code the
// page reads, while the REST API's answer stays the specification's.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { signedIn } from "../factories/dashboard-session";
import { admin, bearer, createPlan } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { keepScreenshot, launchChromium, shownMoney } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };

let browser: Browser;
let app: TestApp;
let shop: Shop;
let context: BrowserContext;
/** The two customers, one per currency. */
const buyers: { customerId: number; currency: string }[] = [];

interface Transaction {
	id: number;
	amount: number;
	currencyId: number;
	currency?: string;
}

beforeAll(async () => {
	browser = await launchChromium();
	app = await startApp();
	shop = await createShop(app);
	const yen = await createPlan(app, shop, { name: "Yen plan", amount: 1200, currency: "JPY" });
	for (const [productId, currency, refund] of [
		[shop.products.charge, "EUR", "1.5"],
		[yen, "JPY", "200"],
	] as const) {
		const { customerId } = (await submitCheckout(app, shop, { productId, card: CARDS.visa })).body;
		const [charge] = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data;
		await app
			.http()
			.get(`/api/refund/${charge.id}?amountToRefund=${refund}`)
			.set(bearer(shop))
			.set("Idempotency-Key", `refund-${charge.id}`)
			.expect(200);
		buyers.push({ customerId, currency });
	}
}, 90_000);

afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

beforeEach(async () => {
	context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: "en-US" });
});
afterEach(async () => {
	await context?.close();
});

async function signIn(page: Page): Promise<void> {
	const email = `viewer-${Date.now().toString(36)}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role: "viewer", password: PASSWORD }).expect(201);
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").fill(email);
	await page.getByLabel("Password").fill(PASSWORD);
	await page.getByRole("button", { name: "Sign in" }).click();
	await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
}

/** The texts of a table's column, by its header. */
async function column(page: Page, title: string): Promise<string[]> {
	const headers = await page.locator("#view table").first().getByRole("columnheader").allTextContents();
	const index = headers.indexOf(title);
	return page
		.locator("#view table")
		.first()
		.locator(`tbody tr td:nth-child(${index + 1})`)
		.allTextContents();
}

describe("Amounts with their currency in the dashboard", () => {
	test("When the dashboard lists transactions, then each carries the ISO code beside currencyId, and the REST API's answer is unchanged", async () => {
		const dashboard = await signedIn(app, shop, "viewer");

		const listed = (await dashboard.get("/transactions?limit=100").expect(200)).body.data as Transaction[];
		const own = (await dashboard.get(`/customers/${buyers[1].customerId}/transactions`).expect(200)).body.data as Transaction[];
		const api = (await app.http().get("/api/transactions?limit=100").set(bearer(shop)).expect(200)).body.data as Transaction[];

		expect(listed.map(t => [t.currencyId, t.currency])).toEqual(api.map(t => [t.currencyId, t.currencyId === 978 ? "EUR" : "JPY"]));
		expect(new Set(listed.map(t => t.currency))).toEqual(new Set(["EUR", "JPY"]));
		expect(own.map(t => t.currency)).toEqual(["JPY", "JPY"]);
		expect(api.every(t => !("currency" in t))).toBe(true);
	});

	test("When a viewer opens the Transactions page, then every amount shows its currency in its minor units, as the API answered it", async () => {
		const page = await context.newPage();
		await signIn(page);
		const api = (await app.http().get("/api/transactions?limit=20").set(bearer(shop)).expect(200)).body.data as Transaction[];

		await page.getByRole("link", { name: "Transactions" }).click();
		await page.getByRole("heading", { name: "Transactions" }).waitFor(WAIT);
		await page.getByRole("cell", { name: "¥1,200", exact: true }).waitFor(WAIT);
		const amounts = await column(page, "Amount");
		await keepScreenshot(page, "dashboard-transactions-currencies");

		expect(amounts).toEqual(api.map(t => shownMoney(t.amount, t.currencyId === 978 ? "EUR" : "JPY")));
		expect(new Set(amounts)).toEqual(new Set(["€9.99", "-€1.50", "¥1,200", "-¥200"]));
	});

	test("When a viewer opens each customer's page, then its credit and every transaction's amount show the customer's currency", async () => {
		const page = await context.newPage();
		await signIn(page);
		const shown: Record<string, { credit: string | null; amounts: string[] }> = {};

		for (const { customerId, currency } of buyers) {
			await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
			await page.getByRole("heading", { name: "Transactions" }).waitFor(WAIT);
			// Only the hash changes from one customer to the next: wait for this customer's own charge, not the last one's page.
			const charge = currency === "EUR" ? "€9.99" : "¥1,200";
			await page.locator("#view table").first().getByRole("cell", { name: charge, exact: true }).waitFor(WAIT);
			await page.locator("#view table").first().getByRole("cell", { name: "REFUNDED", exact: true }).waitFor(WAIT);
			const credit = await page
				.locator("dt", { hasText: /^Credit$/ })
				.locator("xpath=following-sibling::dd[1]")
				.textContent();
			shown[currency] = { credit, amounts: await column(page, "Amount") };
			await keepScreenshot(page, `dashboard-customer-${currency.toLowerCase()}`);
		}

		expect(shown).toEqual({
			EUR: { credit: "€0.00", amounts: ["-€1.50", "€9.99"] },
			JPY: { credit: "¥0", amounts: ["-¥200", "¥1,200"] },
		});
	});
});
