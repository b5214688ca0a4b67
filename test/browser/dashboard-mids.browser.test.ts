// The dashboard's Merchant accounts and Disputes pages in Chromium: a shop
// sells on its two MIDs, one charge with the sandbox card that is disputed 3
// days later and lost 12 days after; the account's test clock moves 13 days (from the 2nd of next month).
// A viewer then sees each MID's sales, the disputed MID's chargeback ratio and
// its warning in words, no warning on the other MID, each MID's weight,
// monthly cap and processor, and the LOST dispute with its reason, amount, evidence due date
// and disputed transaction. The pages are saved to test-output/.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { DateTime } from "luxon";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { clockTo } from "../factories/test-clock";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT, shownMoney } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");
/** Disputed `fraudulent` 3 days after the charge, lost 12 days after (docs/disputes.md#test-cards). */
const DISPUTED_AND_LOST = "4000000000002602";
const WARNING = "Chargeback ratio at or above 0.65 %";

let browser: Browser;
let app: TestApp;
let shop: Shop;
let context: BrowserContext;
/** The disputed charge: its transaction and the MID that made it. */
let disputed: { transactionId: number; midId: number };
/** Approved sales per MID id. */
const salesOf = new Map<number, number>();

interface Dispute {
	id: number;
	status: string;
	reason: string;
	amount: number;
	currency: string;
	evidenceDueBy: string | null;
	disputedTransactionId: number;
	chargebackTransactionId: number | null;
}

const api = (path: string) => app.http().get(path).set(bearer(shop));

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	browser = await launchChromium();
	app = await startApp();
	shop = await createShop(app);
	// The second MID takes three shares of the checkouts and may sell 1000 EUR a month.
	await admin(app)
		.patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.mids[1]}`, { weight: 3, monthlyCap: { amount: 1000, currency: "EUR" } })
		.expect(200);
	// The account's now on the 2nd of next month: the sales, their dispute and its loss fall in one calendar month (the
	// month MID health shows), whatever today is.
	const second = DateTime.now().setZone("CET").plus({ months: 1 }).set({ day: 2, hour: 9 }).startOf("hour");
	await clockTo(app, shop, second.toJSDate());
	// Four sales of 9.99 EUR over the two MIDs, the second one disputed.
	for (const card of [CARDS.visa, DISPUTED_AND_LOST, CARDS.visa, CARDS.mastercard]) {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });
		expect(res.body.code).toBe("OK");
		const [transaction] = (await api(`/api/customer/${res.body.customerId}/transactions`).expect(200)).body.data;
		salesOf.set(transaction.midId, (salesOf.get(transaction.midId) ?? 0) + 1);
		if (card === DISPUTED_AND_LOST) disputed = { transactionId: transaction.id, midId: transaction.midId };
	}
	await clockTo(app, shop, second.plus({ days: 13 }).toJSDate());
	// The dispute is lost, and counted against its MID.
	await eventually(async () => {
		const health = (await admin(app).get(`/accounts/${shop.accountId}/merchant-account-health`).expect(200)).body;
		expect(health.find((h: { midId: number }) => h.midId === disputed.midId).month).toMatchObject({ disputes: 1, chargebacks: 1 });
	});
}, 90_000);

afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

beforeEach(async () => {
	context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
});
afterEach(async () => {
	await context?.close();
});

let users = 0;
async function newViewer(): Promise<string> {
	const email = `viewer-${++users}-${Date.now()}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role: "viewer", password: PASSWORD }).expect(201);
	return email;
}

/** Signs in with the keyboard only: Tab to each field, type, Enter. */
async function signIn(page: Page, email: string): Promise<void> {
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").waitFor(WAIT);
	await page.getByLabel("Email").focus();
	await page.keyboard.type(email);
	await page.keyboard.press("Tab");
	await page.keyboard.type(PASSWORD);
	await page.keyboard.press("Enter");
	await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(OUTPUT, `dashboard-${name}.png`), fullPage: true });

/** What the MIDs table shows of the MID named `name` (its rows: its own cells, then one per period). */
async function midShown(page: Page, name: string) {
	const rows = page.locator("tbody").filter({ has: page.locator('th[scope="rowgroup"]', { hasText: name }) });
	return {
		/** The data cells' texts, in order (the row headers, the MID's name and the periods, apart). */
		cells: await rows.getByRole("cell").allTextContents(),
		warnings: await rows.locator(".warning").allTextContents(),
		periods: await rows.locator("th.period").allInnerTexts(),
	};
}

/** What the page shows for one period of a MID that sold `sales` charges of 9.99 EUR, `disputes` of them disputed and lost. */
function figures(sales: number, disputes: number): string[] {
	const euros = (count: number) => shownMoney((count * 999) / 100, "EUR");
	return [
		sales === 0 ? "0" : `${sales} (${euros(sales)})`,
		sales === 0 ? "–" : "100.00 %",
		"0",
		disputes === 0 ? "0" : `${disputes} (${euros(disputes)})`,
		String(disputes),
		sales === 0 ? "–" : `${((disputes / sales) * 100).toFixed(2)} %`,
	];
}

describe("The Merchant accounts and Disputes pages in Chromium", () => {
	test("When a viewer opens Merchant accounts after a MID's charge was disputed and lost, then each MID's sales show, the disputed MID's ratio and its warning, and no warning on the other", async () => {
		// Arrange
		const page = await context.newPage();
		await signIn(page, await newViewer());
		const [midA, midB] = shop.mids;
		const clean = disputed.midId === midA ? midB : midA;
		const names = new Map([
			[midA, "MID A"],
			[midB, "MID B"],
		]);
		const routing = new Map([
			[midA, ["1", "none", "Sandbox"]],
			[midB, ["3", `€1,000.00 (${shownMoney(((salesOf.get(midB) ?? 0) * 999) / 100, "EUR")} used)`, "Sandbox"]],
		]);
		const expected = (midId: number, disputes: number) => [
			String(midId),
			...(routing.get(midId) ?? []),
			...figures(salesOf.get(midId) ?? 0, disputes),
			...figures(salesOf.get(midId) ?? 0, disputes),
		];

		// Act
		await page.getByRole("link", { name: "Merchant accounts" }).click();
		await page.getByRole("heading", { name: "Merchant accounts" }).waitFor(WAIT);
		await page.getByText(WARNING).waitFor(WAIT);
		await shot(page, "mids");
		const disputedMid = await midShown(page, names.get(disputed.midId) ?? "");
		const cleanMid = await midShown(page, names.get(clean) ?? "");
		const headers = await page.locator("table.mids").getByRole("columnheader").allTextContents();

		// Assert
		expect([...salesOf.values()].reduce((a, b) => a + b, 0)).toBe(4);
		expect(disputedMid.cells).toEqual(expected(disputed.midId, 1));
		expect(disputedMid.warnings).toEqual([WARNING]);
		expect(cleanMid.cells).toEqual(expected(clean, 0));
		expect(cleanMid.warnings).toEqual([]);
		expect(await page.getByText(WARNING).count()).toBe(1);
		expect(headers).toEqual([
			"Id",
			"MID",
			"Weight",
			"Monthly cap",
			"Processor",
			"Period",
			"Sales",
			"Approval rate",
			"Refunds",
			"Disputes",
			"Chargebacks",
			"Chargeback ratio",
		]);
		expect(disputedMid.periods).toEqual([
			expect.stringMatching(/^This month\n\d{4}-\d{2}$/),
			expect.stringMatching(/^Last 30 days\n\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}$/),
		]);
	}, 60_000);

	test("When a viewer lists the LOST disputes, then the disputed charge's dispute shows with its status, reason, amount, evidence due date and transaction", async () => {
		// Arrange
		const page = await context.newPage();
		await signIn(page, await newViewer());
		const [dispute] = (await api("/api/disputes?status=LOST").expect(200)).body.data as Dispute[];

		// Act: the status filter, with the keyboard.
		await page.getByRole("link", { name: "Disputes" }).click();
		await page.getByRole("heading", { name: "Disputes" }).waitFor(WAIT);
		await page.getByRole("cell", { name: "fraudulent", exact: true }).waitFor(WAIT);
		await page.getByLabel("Status").selectOption("LOST");
		await page.getByRole("button", { name: "Show" }).focus();
		await page.keyboard.press("Enter");
		await page.getByRole("cell", { name: "LOST", exact: true }).waitFor(WAIT);
		await shot(page, "disputes");
		const rows = page.locator("tbody tr");
		const headers = await page.getByRole("columnheader").allTextContents();
		const cells = await rows.first().getByRole("cell").allTextContents();
		const column = (title: string) => cells[headers.indexOf(title)];

		// Assert
		expect(await rows.count()).toBe(1);
		expect(dispute).toMatchObject({ status: "LOST", reason: "fraudulent", disputedTransactionId: disputed.transactionId });
		expect(column("Status")).toBe("LOST");
		expect(column("Reason")).toBe("fraudulent");
		expect(column("Amount")).toBe("€9.99");
		expect(column("Evidence due")).toBe(dispute.evidenceDueBy);
		expect(column("Transaction")).toBe(String(disputed.transactionId));
		expect(column("Chargeback")).toBe(String(dispute.chargebackTransactionId));
		expect(column("MID")).toBe(String(disputed.midId));
		expect(await page.getByRole("button", { name: "Next page" }).isVisible()).toBe(false);
	});

	test("When the two pages are 360 px wide, then nothing overflows sideways and every control has a label", async () => {
		await context.close();
		context = await browser.newContext({ viewport: { width: 360, height: 740 } });
		const page = await context.newPage();
		await signIn(page, await newViewer());
		const measure = () =>
			page.evaluate(() => ({
				overflow: document.documentElement.scrollWidth - window.innerWidth,
				unlabelled: Array.from(document.querySelectorAll("input, select")).filter(
					el => !(el.getAttribute("aria-label") || (el.id && document.querySelector(`label[for="${el.id}"]`))),
				).length,
			}));

		await page.goto(`${app.url}/dashboard/#/merchant-accounts`);
		await page.getByText(WARNING).waitFor(WAIT);
		const mids = await measure();
		await page.goto(`${app.url}/dashboard/#/disputes`);
		await page.getByRole("cell", { name: "LOST", exact: true }).waitFor(WAIT);
		const disputes = await measure();

		expect(mids.overflow).toBeLessThanOrEqual(0);
		expect(disputes.overflow).toBeLessThanOrEqual(0);
		expect([mids.unlabelled, disputes.unlabelled]).toEqual([0, 0]);
	});
});
