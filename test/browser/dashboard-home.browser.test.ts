// The dashboard's home page in Chromium (issue 38, part 4): a shop sells three
// subscriptions of a 9.99 EUR monthly plan, one of a 30 EUR plan, a one-off of
// 25 EUR (5 EUR of it refunded) and a 1,200 JPY plan, all through the public
// API. A viewer signs in and the home page draws its four charts from
// GET /dashboard/api/metrics; the headline figures, each chart's table and its
// CSV download hold exactly the API's numbers for the same query; the range
// and the product filter send new queries and change the charts; the currency
// control switches series; the keyboard reaches every control; screenshots at
// 1280 and 390 px wide are kept in test-output/.
import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { MetricsAnswer, MetricsFigures, MetricsSeries } from "../../shared/contracts/metrics";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer, createPlan } from "../factories/merchant";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { keepScreenshot, launchChromium, shownMoney } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const CHARTS = ["mrr", "subscribers", "volume", "recovery"];
/** Marks the test's own reads of the API, apart from the page's. */
const CHECK = "x-test-check";

let browser: Browser;
let app: TestApp;
let shop: Shop;
let pro: number;
let context: BrowserContext;

beforeAll(async () => {
	browser = await launchChromium();
	app = await startApp();
	shop = await createShop(app);
	pro = await createPlan(app, shop, { name: "Pro", amount: 30 });
	const yen = await createPlan(app, shop, { name: "Yen plan", amount: 1200, currency: "JPY" });
	for (const productId of [shop.products.charge, shop.products.charge, shop.products.charge, pro, shop.products.oneOff, yen]) {
		expect((await submitCheckout(app, shop, { productId, card: CARDS.visa })).body.code).toBe("OK");
	}
	const oneOff = (await app.http().get("/api/transactions?limit=100").set(bearer(shop)).expect(200)).body.data.find(
		(t: { amount: number }) => t.amount === 25,
	);
	await app.http().get(`/api/refund/${oneOff.id}?amountToRefund=5`).set(bearer(shop)).set("Idempotency-Key", "home-refund").expect(200);
	// The counters are applied by billing's relay, just after each change.
	await eventually(async () => {
		const answer = (await app.http().get("/api/metrics?currency=EUR").set(bearer(shop)).expect(200)).body as MetricsAnswer;
		expect(answer.series[0]?.total).toMatchObject({ mrr: 5997, refunds: 500 });
	});
}, 120_000);

afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

afterEach(async () => {
	await context?.close();
});

/** A viewer's page at `width`, signed in with the keyboard, on the home page with its charts drawn; the metrics queries it sends. */
async function homePage(width: number): Promise<{ page: Page; queries: URLSearchParams[]; errors: string[] }> {
	context = await browser.newContext({ viewport: { width, height: 900 }, locale: "en-US", acceptDownloads: true });
	const page = await context.newPage();
	const queries: URLSearchParams[] = [];
	// What the page's CSP refused, and the scripts' uncaught errors (the 401 of /me before signing in is expected).
	const errors: string[] = [];
	page.on("console", message => {
		if (message.type() === "error" && /Content Security Policy|Refused/i.test(message.text())) errors.push(message.text());
	});
	page.on("pageerror", error => errors.push(error.message));
	page.on("request", request => {
		const url = new URL(request.url());
		if (url.pathname === "/dashboard/api/metrics" && !request.headers()[CHECK]) queries.push(url.searchParams);
	});
	const email = `viewer-${width}-${Date.now().toString(36)}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role: "viewer", password: PASSWORD }).expect(201);
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").focus();
	await page.keyboard.type(email);
	await page.keyboard.press("Tab");
	await page.keyboard.type(PASSWORD);
	await page.keyboard.press("Enter");
	await page.getByRole("heading", { name: "Home" }).waitFor(WAIT);
	await drawn(page);
	return { page, queries, errors };
}

/** Waits until the page's four charts are drawn, and answers each one's datasets as Chart.js holds them. */
async function drawn(page: Page): Promise<Record<string, { label: string; data: (number | null)[] }[]>> {
	await page.waitForFunction(() => document.querySelectorAll("[data-chart] canvas").length === 4, undefined, WAIT);
	return page.evaluate(() => {
		const chartOf = (window as unknown as { Chart: { getChart(c: Element): { data: { datasets: { label: string; data: number[] }[] } } } })
			.Chart;
		return Object.fromEntries(
			Array.from(document.querySelectorAll("[data-chart]"), card => [
				(card as HTMLElement).dataset.chart,
				chartOf.getChart(card.querySelector("canvas")!).data.datasets.map(d => ({ label: d.label, data: d.data })),
			]),
		);
	});
}

/** What the dashboard's API answers for a query, in the page's session. */
function answerFor(page: Page, query: URLSearchParams): Promise<MetricsAnswer> {
	return page.evaluate(
		async ([q, check]) => (await fetch(`/dashboard/api/metrics?${q}`, { headers: { [check]: "1" } })).json(),
		[query.toString(), CHECK],
	);
}

/** A table's rows as texts (the row header, then the cells), body and footer. */
function tableOf(page: Page, chart: string): Promise<string[][]> {
	return page
		.locator(`[data-chart="${chart}"] table tbody tr, [data-chart="${chart}"] table tfoot tr`)
		.evaluateAll(rows => rows.map(row => Array.from(row.querySelectorAll("th, td"), cell => cell.textContent ?? "")));
}

const decimal = (minor: number, currency: string) => (currency === "JPY" ? String(minor) : (minor / 100).toFixed(2));
const label = (p: { from: string; to: string }) => (p.from === p.to ? p.from : `${p.from} – ${p.to}`);

/** The MRR chart's table as the API's numbers make it. */
function mrrTable(series: MetricsSeries): string[][] {
	const money = (minor: number | null) => (minor === null ? "–" : shownMoney(Number(decimal(minor, series.currency)), series.currency));
	const row = (f: MetricsFigures) =>
		[f.mrr, f.newMrr, f.expansionMrr, f.contractionMrr, f.churnedMrr, f.reactivatedMrr, f.netNewMrr, f.arpu].map(money);
	return [...series.points.map(p => [label(p), ...row(p)]), ["Whole range", ...row(series.total)]];
}

/** The MRR chart's CSV as docs/dashboard.md defines it, from the API's answer. */
function mrrCsv(series: MetricsSeries): string {
	const fields = ["mrr", "newMrr", "expansionMrr", "contractionMrr", "churnedMrr", "reactivatedMrr", "netNewMrr", "arpu"] as const;
	const rows = series.points.map(p => [
		series.currency,
		p.from,
		p.to,
		...fields.map(f => (p[f] === null ? "" : decimal(p[f] as number, series.currency))),
	]);
	return `${[["currency", "from", "to", ...fields], ...rows].map(r => r.join(",")).join("\r\n")}\r\n`;
}

const headline = (page: Page, term: string) =>
	page
		.locator(".headline", { has: page.locator("dt", { hasText: new RegExp(`^${term}$`) }) })
		.locator("dd")
		.textContent();

describe("The dashboard's home page in Chromium", () => {
	test("When a viewer signs in, then the home page draws its four charts and headline figures from the API's answer for the last 30 days", async () => {
		const { page, queries, errors } = await homePage(1280);
		const charts = await drawn(page);
		const answer = await answerFor(page, queries[0]);
		const eur = answer.series.find(s => s.currency === "EUR")!;
		await keepScreenshot(page, "dashboard-home-desktop");

		expect(queries.map(q => q.toString())).toEqual([""]);
		expect(answer).toMatchObject({ granularity: "day", productId: null });
		expect(answer.series.map(s => s.currency)).toEqual(["EUR", "JPY"]);
		expect(Object.keys(charts)).toEqual(CHARTS);
		for (const datasets of Object.values(charts)) {
			for (const d of datasets) expect(d.data).toHaveLength(eur.points.length);
		}
		expect(charts.mrr.find(d => d.label === "MRR")?.data).toEqual(eur.points.map(p => p.mrr));
		expect(charts.mrr.find(d => d.label === "Churned")?.data).toEqual(eur.points.map(p => -p.churnedMrr));
		// No renewal entered recovery: no rate, a gap in its line rather than 0 %.
		expect(charts.recovery.find(d => d.label === "Recovery rate")?.data).toEqual(eur.points.map(p => p.recoveryRate));
		expect(errors).toEqual([]);
		expect(await headline(page, "MRR")).toBe("€59.97");
		expect(await headline(page, "Active subscribers")).toBe("4");
		expect(await headline(page, "Net volume")).toBe(shownMoney(eur.total.netVolume / 100, "EUR"));
		expect(await tableOf(page, "mrr")).toEqual(mrrTable(eur));
		expect(await page.locator("canvas[role=img]").count()).toBe(4);
		expect(
			await page
				.locator("canvas[aria-describedby]")
				.evaluateAll(cs => cs.map(c => document.getElementById(c.getAttribute("aria-describedby")!)?.textContent)),
		).toEqual(expect.arrayContaining([expect.stringContaining("€59.97")]));
	}, 60_000);

	test("When the range becomes the last 90 days and then a product is chosen, then each change sends its query and the charts and tables change to the API's answer", async () => {
		const { page, queries } = await homePage(1280);
		const today = (await answerFor(page, queries[0])).to;
		const before = await tableOf(page, "mrr");

		await page.getByLabel("Range", { exact: true }).selectOption("90d");
		await page.waitForFunction(() => document.querySelector(".summary")?.textContent?.includes("by week"), undefined, WAIT);
		const ninety = queries.at(-1)!;
		const byWeek = await tableOf(page, "mrr");
		await page.getByLabel("Product", { exact: true }).selectOption(String(pro));
		await page.waitForFunction(p => document.querySelector(".summary")?.textContent?.includes(`product ${p}`), pro, WAIT);
		const product = queries.at(-1)!;
		const charts = await drawn(page);
		const answer = await answerFor(page, product);

		expect(Object.fromEntries(ninety)).toEqual({
			from: new Date(Date.parse(today) - 89 * 86_400_000).toISOString().slice(0, 10),
			to: today,
			granularity: "week",
		});
		expect(byWeek).not.toEqual(before);
		expect(byWeek).toEqual(mrrTable((await answerFor(page, ninety)).series[0]));
		expect(Object.fromEntries(product)).toEqual({ ...Object.fromEntries(ninety), productId: String(pro) });
		expect(answer).toMatchObject({ productId: pro, series: [{ currency: "EUR", total: { mrr: 3000, activeSubscribers: 1 } }] });
		expect(await tableOf(page, "mrr")).toEqual(mrrTable(answer.series[0]));
		expect(charts.mrr.find(d => d.label === "MRR")?.data).toEqual(answer.series[0].points.map(p => p.mrr));
		expect(await headline(page, "MRR")).toBe("€30.00");
	}, 60_000);

	test("When the MRR chart's CSV is downloaded, then it holds the API's numbers for the same query, as decimals with their currency; the currency control shows the yen series", async () => {
		const { page, queries } = await homePage(1280);

		const [download] = await Promise.all([
			page.waitForEvent("download"),
			page.getByRole("link", { name: "Download CSV: MRR and its movements" }).click(),
		]);
		const csv = await readFile((await download.path())!, "utf8");
		const answer = await answerFor(page, queries.at(-1)!);
		await page.getByLabel("Currency", { exact: true }).selectOption("JPY");
		await page.waitForFunction(() => document.querySelector(".summary")?.textContent?.includes("in JPY"), undefined, WAIT);
		const yen = answer.series.find(s => s.currency === "JPY")!;

		expect(download.suggestedFilename()).toBe(`mrr-EUR-${answer.from}-to-${answer.to}-day.csv`);
		expect(csv).toBe(mrrCsv(answer.series.find(s => s.currency === "EUR")!));
		expect(csv.split("\r\n")[0]).toBe("currency,from,to,mrr,newMrr,expansionMrr,contractionMrr,churnedMrr,reactivatedMrr,netNewMrr,arpu");
		expect(await headline(page, "MRR")).toBe("¥1,200");
		expect(await tableOf(page, "mrr")).toEqual(mrrTable(yen));
		expect(queries).toHaveLength(1);
	}, 60_000);

	test("When a keyboard user tabs through the home page, then every control, table view and download is reached, with a visible focus", async () => {
		const { page } = await homePage(1280);
		const wanted = ["Range", "From", "To", "Granularity", "Product", "Currency", ...CHARTS.flatMap(() => ["summary", "download"])];
		const reached: string[] = [];
		const outlines: string[] = [];

		for (let i = 0; i < 60 && reached.filter(r => r !== "link").length < wanted.length; i++) {
			await page.keyboard.press("Tab");
			const focused = await page.evaluate(() => {
				const el = document.activeElement as HTMLElement;
				const label = el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null;
				const kind = label ?? (el.tagName === "SUMMARY" ? "summary" : el.classList.contains("download") ? "download" : "link");
				return { kind, outline: getComputedStyle(el).outlineStyle, inView: el.closest("#view") !== null };
			});
			// A date input's fields (month, day, year) are one control.
			if (!focused.inView || reached.at(-1) === focused.kind) continue;
			reached.push(focused.kind);
			if (focused.kind !== "link") outlines.push(focused.outline);
		}

		expect(reached.filter(r => r !== "link")).toEqual(wanted);
		expect(outlines.every(o => o !== "none")).toBe(true);
		// The table view opens with the keyboard.
		await page.locator('[data-chart="volume"] summary').focus();
		await page.keyboard.press("Enter");
		expect(await page.locator('[data-chart="volume"] table').isVisible()).toBe(true);
	}, 60_000);

	test("When the home page is 390 px wide, then the charts fit the width, the controls wrap and nothing overflows sideways", async () => {
		const { page } = await homePage(390);

		const sizes = await page.evaluate(() => ({
			overflow: document.documentElement.scrollWidth - window.innerWidth,
			canvases: Array.from(document.querySelectorAll("[data-chart] canvas"), c => c.getBoundingClientRect().width),
			unlabelled: Array.from(document.querySelectorAll("#view input, #view select")).filter(
				el => !(el.id && document.querySelector(`label[for="${el.id}"]`)),
			).length,
		}));
		await keepScreenshot(page, "dashboard-home-phone");

		expect(sizes.overflow).toBeLessThanOrEqual(0);
		expect(sizes.canvases).toHaveLength(4);
		for (const width of sizes.canvases) expect(width).toBeLessThanOrEqual(390);
		expect(sizes.unlabelled).toBe(0);
	}, 60_000);
});
