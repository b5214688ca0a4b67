// Usage billing in the dashboard in Chromium (issue 48, docs/dashboard.md#meters-and-usage): an operator creates a
// count meter with the Meters page's form (and sees the API's refusal of a second one with its code); a metered
// product's customer's page then shows its usage this period per meter, priced as computed by hand here, what it
// would bill now, a chart, and its usage events a page at a time, a late one marked after the renewal; the renewal's
// invoice is listed on the page with its usage lines as billed, and the next one's adjustment for the late event is
// marked "late usage"; a viewer reads the meters without the form, and the customer's invoices; at 360 px nothing
// overflows and every control has a label. Pages are saved to test-output/.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer, createPlan } from "../factories/merchant";
import { clockToRenewalOf } from "../factories/test-clock";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT, shownMoney } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

let browser: Browser;
let app: TestApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	browser = await launchChromium();
	app = await startApp();
}, 60_000);
afterAll(async () => {
	await browser?.close();
	await app?.stop();
});
afterEach(async () => {
	await Promise.all(contexts.splice(0).map(c => c.close()));
});

let users = 0;
async function signedIn(shop: Shop, role: "viewer" | "operator", width = 1100): Promise<Page> {
	const email = `${role}-usage-${++users}-${Date.now().toString(36)}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role, password: PASSWORD }).expect(201);
	const context = await browser.newContext({ viewport: { width, height: 800 } });
	contexts.push(context);
	const page = await context.newPage();
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").fill(email);
	await page.getByLabel("Password").fill(PASSWORD);
	await page.getByRole("button", { name: "Sign in" }).click();
	await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
	return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(OUTPUT, `dashboard-${name}.png`), fullPage: true });

const CALLS = { code: "calls", name: "API calls", aggregation: "count", filters: { region: "eu" } };
const TOKENS = { code: "tokens", name: "Tokens", aggregation: "sum", property: "tokens" };

/**
 * Calls: graduated, the first 10 at 50 cents, the rest at 20 cents with 1 EUR once the usage reaches them. Tokens:
 * a fiftieth of a cent each. Amounts are minor units, as the admin API takes them.
 */
const PRICES = [
	{
		meter: "calls",
		model: "graduated",
		tiers: [
			{ upTo: 10, unitAmount: "50" },
			{ upTo: null, unitAmount: "20", flatAmount: 100 },
		],
	},
	{ meter: "tokens", model: "per_unit", unitAmount: "0.02" },
];

/** A metered product on the admin API (the calls meter made first, by the form or here), 9.99 EUR a month. */
async function meteredProduct(shop: Shop, { withCalls }: { withCalls: boolean }): Promise<number> {
	if (withCalls) await admin(app).post(`/accounts/${shop.accountId}/meters`, CALLS).expect(201);
	await admin(app).post(`/accounts/${shop.accountId}/meters`, TOKENS).expect(201);
	return createPlan(app, shop, { name: "Metered", amount: 9.99, usagePrices: PRICES });
}

const CALL_COUNT = 23;
const TOKEN_AMOUNTS = [1500, 2500];

/** A customer of the product, and its usage on the API: 23 calls and 4,000 tokens, each accepted. */
async function customerWithUsage(shop: Shop, productId: number): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card: CARDS.visa });
	expect(body.code).toBe("OK");
	const customerId = body.customerId as number;
	// After the checkout, so within the customer's first period; a millisecond apart, in the order sent.
	const start = Date.now();
	const at = (i: number) => new Date(start + i).toISOString();
	const events = [
		...Array.from({ length: CALL_COUNT }, (_, i) => ({
			id: `call-${i}`,
			customerId,
			meter: "calls",
			timestamp: at(i),
			properties: { region: "eu" },
		})),
		...TOKEN_AMOUNTS.map((tokens, i) => ({ id: `tok-${i}`, customerId, meter: "tokens", timestamp: at(i), properties: { tokens } })),
	];
	const sent = await app.http().post("/api/usage").set(bearer(shop)).send({ events }).expect(200);
	expect(sent.body).toMatchObject({ accepted: events.length, duplicates: 0, refused: 0 });
	return customerId;
}

/** The cells of a table's body rows. */
const cells = (page: Page, selector: string) =>
	page.locator(`${selector} tbody tr`).evaluateAll(rows => rows.map(row => Array.from(row.querySelectorAll("td"), td => td.textContent)));

/** What the usage section's details say for a term. */
const usageDetail = (page: Page, term: string) =>
	page
		.locator("section.usage dt", { hasText: new RegExp(`^${term}$`) })
		.locator("xpath=following-sibling::dd[1]")
		.textContent();

const eventRows = (page: Page) => page.getByRole("table", { name: "Latest usage events" }).locator("tbody tr");

interface Invoice {
	number: string;
	issuedAt: string;
	total: number;
	url: string;
}

/** The customer's invoices on the API, newest first, once there are `count` (invoices are issued after the charge). */
const invoicesOnceIssued = (shop: Shop, customerId: number, count: number) =>
	eventually(async () => {
		const res = await app.http().get(`/api/invoices?customerId=${customerId}`).set(bearer(shop)).expect(200);
		expect(res.body.data).toHaveLength(count);
		return res.body.data as Invoice[];
	});

/** What the customer's page shows of its invoices, in its order: each one's heading, details, PDF link and lines. */
const shownInvoices = (page: Page) =>
	page.locator("section.invoice").evaluateAll(sections =>
		sections.map(section => ({
			title: section.querySelector("h3")?.textContent,
			details: Object.fromEntries(Array.from(section.querySelectorAll("dt"), dt => [dt.textContent, dt.nextElementSibling?.textContent])),
			pdf: section.querySelector("dd a")?.getAttribute("href") ?? null,
			lines: Array.from(section.querySelectorAll("tbody tr"), row => Array.from(row.querySelectorAll("td"), td => td.textContent)),
		})),
	);

describe("Meters and usage in the dashboard", () => {
	test("When an operator creates a count meter with the form and a metered customer uses it, then the meter is listed, and the customer's page shows its usage priced as computed by hand, a chart and its events, a late one marked after the renewal, and the renewal's invoice with its usage lines, the next one's late usage marked", async () => {
		// Arrange
		const shop = await createShop(app);
		const page = await signedIn(shop, "operator");
		await page.getByRole("link", { name: "Meters" }).click();
		await page.getByRole("heading", { name: "Meters" }).waitFor(WAIT);
		await page.getByRole("cell", { name: "No meter yet." }).waitFor(WAIT);

		// Act: a code the API would refuse is caught by the form; a count meter asks for no property, a sum meter does.
		await page.getByLabel("Code").fill("API calls");
		const badCode = await page.getByLabel("Code").evaluate(input => (input as HTMLInputElement).validity.patternMismatch);
		await page.getByLabel("Code").fill("calls");
		await page.getByLabel("Name").fill("API calls");
		const propertyHiddenForCount = await page.getByLabel("Property").isHidden();
		await page.getByLabel("Aggregation").selectOption("sum");
		const propertyForSum = [await page.getByLabel("Property").isVisible(), await page.getByLabel("Property").getAttribute("required")];
		await page.getByLabel("Aggregation").selectOption("count");
		await page.getByLabel("Filters (key=value, one a line)").fill("region=eu");
		await page.getByRole("button", { name: "Create meter" }).click();
		await page.getByText("Meter calls created.").waitFor(WAIT);
		const listed = await cells(page, "#view");
		await shot(page, "meters");

		// Act: the same code again: the API's refusal in the status line, the form kept.
		await page.getByLabel("Code").fill("calls");
		await page.getByLabel("Name").fill("Calls again");
		await page.getByRole("button", { name: "Create meter" }).click();
		await page.locator("#status.error").waitFor(WAIT);
		const refusal = await page.locator("#status").textContent();

		// Assert
		expect(badCode).toBe(true);
		expect(propertyHiddenForCount).toBe(true);
		expect(propertyForSum).toEqual([true, ""]);
		expect(listed).toEqual([["calls", "API calls", "count", "–", "region=eu", expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]]);
		expect(refusal).toBe("The account already has a meter with this code");
		expect(await page.getByLabel("Name").inputValue()).toBe("Calls again");
		const meters = (await admin(app).get(`/accounts/${shop.accountId}/meters`).expect(200)).body;
		expect(meters).toEqual([expect.objectContaining({ ...CALLS, property: null })]);

		// Arrange: the product, its customer and the usage, on the API.
		const productId = await meteredProduct(shop, { withCalls: false });
		const customerId = await customerWithUsage(shop, productId);

		// Act
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("heading", { name: "Usage this period" }).waitFor(WAIT);
		await eventRows(page).first().waitFor(WAIT);
		const usage = await cells(page, "table.usage-meters");
		const wouldBill = await usageDetail(page, "Would bill now");
		const period = await usageDetail(page, "Period");
		const chart = await page.evaluate(() => {
			const canvas = document.querySelector<HTMLCanvasElement>(".usage-chart canvas");
			const drawn = canvas && (window as unknown as { Chart: { getChart(c: HTMLCanvasElement): unknown } }).Chart.getChart(canvas);
			return { label: canvas?.getAttribute("aria-label"), drawn: Boolean(drawn), height: canvas?.getBoundingClientRect().height };
		});
		const firstPage = await eventRows(page).count();
		const newest = await eventRows(page)
			.first()
			.evaluate(row => Array.from(row.querySelectorAll("td"), td => td.textContent));
		await shot(page, "customer-usage");
		await page.getByRole("button", { name: "More events" }).click();
		await page.getByText("All usage events shown.").waitFor(WAIT);
		const allEvents = await eventRows(page).count();
		const moreHidden = await page.getByRole("button", { name: "More events" }).isHidden();

		// Assert: by hand, in cents: calls 23 → 10 × 50 + 13 × 20 + 100 = 860; tokens 4,000 × 0.02 = 80.
		const calls = 10 * 50 + (CALL_COUNT - 10) * 20 + 100;
		const tokens = TOKEN_AMOUNTS.reduce((a, b) => a + b, 0) * 0.02;
		expect([calls, tokens]).toEqual([860, 80]);
		const eur = (cents: number) => shownMoney(cents / 100, "EUR");
		expect(usage).toEqual([
			["API calls (calls)", "23", "1–10: 10 × €0.50; 11+: 13 × €0.20 + €1.00", eur(calls)],
			["Tokens (tokens)", "4,000", "–", eur(tokens)],
		]);
		expect(wouldBill).toBe(eur(calls + tokens));
		expect(period).toMatch(/^\d{4}-\d\d-\d\dT\S+ to \d{4}-\d\d-\d\dT\S+$/);
		expect(chart).toEqual({ label: "Chart: amount per meter this period", drawn: true, height: expect.any(Number) });
		expect(chart.height).toBeGreaterThan(100);
		expect(firstPage).toBe(20);
		expect(newest).toEqual([
			expect.stringMatching(/^\d{4}-/),
			"tokens",
			"tokens=2500",
			"counted",
			expect.any(String),
			expect.stringMatching(/^\d{4}-/),
			"tok-1",
		]);
		expect(allEvents).toBe(CALL_COUNT + TOKEN_AMOUNTS.length);
		expect(moreHidden).toBe(true);

		// Act: the renewal bills the period; an event of it sent then is late, billed with the next charge.
		const renewedAt = await clockToRenewalOf(app, shop, customerId);
		const late = { id: "call-late", customerId, meter: "calls", timestamp: new Date(renewedAt.getTime() - 3_600_000).toISOString() };
		const sent = await app
			.http()
			.post("/api/usage")
			.set(bearer(shop))
			.send({ events: [{ ...late, properties: { region: "eu" } }] })
			.expect(200);
		const issued = await invoicesOnceIssued(shop, customerId, 2);
		await page.reload();
		await page.getByRole("heading", { name: "Usage this period" }).waitFor(WAIT);
		await eventRows(page).first().waitFor(WAIT);
		await page.getByRole("heading", { name: `Invoice ${issued[0].number}`, exact: true }).waitFor(WAIT);
		const afterRenewal = await cells(page, "table.usage-meters");
		const lateRow = await eventRows(page)
			.first()
			.evaluate(row => Array.from(row.querySelectorAll("td"), td => td.textContent));
		const invoices = await shownInvoices(page);
		const pdf = await page.request.get(invoices[0].pdf ?? "");
		await shot(page, "customer-usage-late");

		// Assert: the renewal charged the base fee and the usage in one; the new period has none yet.
		expect(sent.body.results).toEqual([{ id: "call-late", status: "accepted" }]);
		const renewal = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data.find(
			(tx: { type: string }) => tx.type === "RENEWAL",
		);
		expect(renewal).toMatchObject({ status: "APPROVED", amount: (999 + calls + tokens) / 100 });
		expect(afterRenewal.map(row => [row[1], row[3]])).toEqual([
			["0", eur(0)],
			["0", eur(0)],
		]);
		expect(await usageDetail(page, "Would bill now")).toBe(eur(0));
		expect(lateRow.slice(1, 4)).toEqual(["calls", "region=eu", "late: billed with the next charge"]);
		expect(lateRow[6]).toBe("call-late");
		// The renewal's invoice first, then the checkout's; its lines as billed, the usage lines' texts naming their tiers.
		expect(invoices.map(i => i.title)).toEqual(issued.map(i => `Invoice ${i.number}`));
		expect(invoices[0]).toEqual({
			title: `Invoice ${issued[0].number}`,
			details: { Date: issued[0].issuedAt.slice(0, 10), Total: eur(999 + calls + tokens), PDF: `PDF of Invoice ${issued[0].number}` },
			pdf: new URL(`${issued[0].url}/pdf`, app.url).href,
			lines: [
				["Metered", "plan", eur(999)],
				[`API calls: ${CALL_COUNT} units (1–10: 10 × 0.5 EUR; 11+: ${CALL_COUNT - 10} × 0.2 EUR + 1 EUR)`, "usage", eur(calls)],
				["Tokens: 4,000 units", "usage", eur(tokens)],
			],
		});
		expect(invoices[1].lines).toEqual([["Metered", "plan", eur(999)]]);
		expect([pdf.status(), pdf.headers()["content-type"], (await pdf.body()).subarray(0, 5).toString()]).toEqual([
			200,
			"application/pdf",
			"%PDF-",
		]);
		// The meter's creation is in the audit log; the refused second one is not (the action answered an error).
		await page.getByRole("link", { name: "Audit log" }).click();
		await page.getByRole("cell", { name: "create meter", exact: true }).first().waitFor(WAIT);
		expect(await page.getByRole("cell", { name: "create meter", exact: true }).count()).toBe(1);

		// Act: the next renewal bills the late event as an adjustment, on its own line of the next invoice.
		await clockToRenewalOf(app, shop, customerId);
		const [next] = await invoicesOnceIssued(shop, customerId, 3);
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("heading", { name: `Invoice ${next.number}`, exact: true }).waitFor(WAIT);
		const [nextShown] = await shownInvoices(page);
		await shot(page, "customer-invoices-late");

		// Assert: by hand, 24 calls → 10 × 50 + 14 × 20 + 100 = 880 cents, 20 more than the 23 billed.
		const adjustment = 10 * 50 + (CALL_COUNT + 1 - 10) * 20 + 100 - calls;
		expect(adjustment).toBe(20);
		expect(nextShown.title).toBe(`Invoice ${next.number}`);
		expect(nextShown.lines.filter(line => line[1] === "late usage")).toEqual([
			[
				`API calls: late usage of the period before, ${CALL_COUNT} → ${CALL_COUNT + 1} units (1–10: 10 × 0.5 EUR; 11+: ${CALL_COUNT + 1 - 10} × 0.2 EUR + 1 EUR)`,
				"late usage",
				eur(adjustment),
			],
		]);
		// The new period has no usage yet: the fee and the adjustment.
		expect(nextShown.details.Total).toBe(eur(999 + adjustment));
	}, 150_000);

	test("When a viewer opens Meters, then the meters are listed without the form, a meter its page's script creates anyway is refused, and a metered customer's usage and invoice show", async () => {
		// Arrange
		const shop = await createShop(app);
		const productId = await meteredProduct(shop, { withCalls: true });
		const customerId = await customerWithUsage(shop, productId);
		const page = await signedIn(shop, "viewer");

		// Act
		await page.getByRole("link", { name: "Meters" }).click();
		await page.getByRole("cell", { name: "Tokens", exact: true }).waitFor(WAIT);
		const listed = await cells(page, "#view");
		const forced = await page.evaluate(async () => {
			const me = await (await fetch("/dashboard/api/me")).json();
			const res = await fetch("/dashboard/api/meters", {
				method: "POST",
				headers: { "Content-Type": "application/json", "X-CSRF-Token": me.csrfToken },
				body: JSON.stringify({ code: "forced", name: "Forced", aggregation: "count" }),
			});
			return res.status;
		});
		await shot(page, "meters-viewer");
		const [checkoutInvoice] = await invoicesOnceIssued(shop, customerId, 1);
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("heading", { name: "Usage this period" }).waitFor(WAIT);
		await page.getByRole("heading", { name: `Invoice ${checkoutInvoice.number}`, exact: true }).waitFor(WAIT);
		const invoices = await shownInvoices(page);

		// Assert
		expect(listed.map(row => row.slice(0, 5))).toEqual([
			["calls", "API calls", "count", "–", "region=eu"],
			["tokens", "Tokens", "sum", "tokens", "–"],
		]);
		expect(await page.getByRole("form", { name: "New meter" }).count()).toBe(0);
		expect(await page.getByRole("button", { name: "Create meter" }).count()).toBe(0);
		expect(forced).toBe(403);
		expect(await usageDetail(page, "Would bill now")).toBe(shownMoney(9.4, "EUR"));
		expect(invoices.map(i => [i.title, i.lines])).toEqual([
			[`Invoice ${checkoutInvoice.number}`, [["Metered", "plan", shownMoney(9.99, "EUR")]]],
		]);
		expect((await admin(app).get(`/accounts/${shop.accountId}/meters`).expect(200)).body.map((m: { code: string }) => m.code)).toEqual([
			"calls",
			"tokens",
		]);
	}, 90_000);

	test("When the dashboard is 360 px wide, then the Meters page with its form and a customer's usage do not overflow sideways, and every control has a label", async () => {
		// Arrange
		const shop = await createShop(app);
		const productId = await meteredProduct(shop, { withCalls: true });
		const customerId = await customerWithUsage(shop, productId);
		const page = await signedIn(shop, "operator", 360);
		const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		const unlabelled = () =>
			page.evaluate(
				() =>
					Array.from(document.querySelectorAll("input, select, textarea")).filter(
						el => !(el.getAttribute("aria-label") || (el.id && document.querySelector(`label[for="${el.id}"]`))),
					).length,
			);

		// Act
		await page.getByRole("link", { name: "Meters" }).click();
		await page.getByRole("cell", { name: "Tokens", exact: true }).waitFor(WAIT);
		await page.getByLabel("Aggregation").selectOption("unique_count");
		const meters = { overflow: await overflow(), unlabelled: await unlabelled() };
		await shot(page, "meters-narrow");
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("heading", { name: "Usage this period" }).waitFor(WAIT);
		await eventRows(page).first().waitFor(WAIT);
		const customer = { overflow: await overflow(), unlabelled: await unlabelled() };
		await shot(page, "customer-usage-narrow");

		// Assert
		expect(meters).toEqual({ overflow: expect.any(Number), unlabelled: 0 });
		expect(meters.overflow).toBeLessThanOrEqual(0);
		expect(customer).toEqual({ overflow: expect.any(Number), unlabelled: 0 });
		expect(customer.overflow).toBeLessThanOrEqual(0);
	}, 90_000);
});
