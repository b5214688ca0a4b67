// The page a buyer's signed invoice link opens (docs/invoices.md#links), in
// Chromium without any token: a checkout on an account with its seller's
// details, German invoices and 19 % tax added; the buyer reads the number,
// seller, buyer, lines, tax and total through the page's roles, at desktop and
// phone widths, each kept as a screenshot in test-output/.
import type { Browser, Locator, Page } from "playwright-core";
import { createShop, type Shop, submitCheckout, uniqueEmail } from "../factories/checkout";
import { admin, bearer, createPlan } from "../factories/merchant";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { keepScreenshot, launchChromium } from "./browser";

const WAIT = { timeout: 30_000 };

let browser: Browser;
let app: TestApp;
let shop: Shop;
let invoice: { id: number; number: string; url: string };
const buyerEmail = uniqueEmail();

beforeAll(async () => {
	browser = await launchChromium();
	app = await startApp();
	shop = await createShop(app);
	await admin(app)
		.patch(`/accounts/${shop.accountId}`, {
			invoicing: {
				legalName: "Muster Software GmbH",
				address: "Hauptstraße 1\n10115 Berlin",
				taxId: "DE123456789",
				invoicePrefix: "MUSTER",
				language: "de",
				taxRateBps: 1900,
				pricesIncludeTax: false,
			},
		})
		.expect(200);
	const productId = await createPlan(app, shop, { name: "Cloud-Speicher Pro", amount: 10 });
	const paid = await submitCheckout(app, shop, { productId, email: buyerEmail });
	expect(paid.body.code).toBe("OK");
	const customerId = paid.body.customerId as number;
	const listed = await eventually(async () => {
		const page = (await app.http().get(`/api/invoices?customerId=${customerId}`).set(bearer(shop)).expect(200)).body;
		expect(page.data).toHaveLength(1);
		return page.data[0];
	});
	// The link as the merchant reads it (GET /api/invoice/{id}): relative without PUBLIC_BASE_URL.
	invoice = (await app.http().get(`/api/invoice/${listed.id}`).set(bearer(shop)).expect(200)).body;
}, 60_000);
afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

/** The buyer's link opened in a fresh browser, nothing but the URL: no token, no cookie. */
async function openInvoice(viewport: { width: number; height: number }, isMobile = false): Promise<Page> {
	const context = await browser.newContext({ viewport, isMobile, hasTouch: isMobile, deviceScaleFactor: isMobile ? 2 : 1 });
	const page = await context.newPage();
	const answer = await page.goto(new URL(invoice.url, app.url).href);
	expect(answer?.status()).toBe(200);
	await page.getByRole("heading", { level: 1 }).waitFor(WAIT);
	return page;
}

/** An element's visible text, its spaces (Intl's no-break ones too) made plain. */
const plain = (text: string) => text.replace(/\s+/g, " ").trim();
const texts = async (locator: Locator) => (await locator.allInnerTexts()).map(plain);

/** What the buyer reads, through the page's roles: the same at every width. */
async function expectReadable(page: Page) {
	expect(await page.locator("html").getAttribute("lang")).toBe("de");
	expect(plain(await page.getByRole("heading", { level: 1 }).innerText())).toBe(`Rechnung ${invoice.number}`);
	expect(plain(await page.getByRole("region", { name: "Verkäufer" }).innerText())).toBe(
		"Verkäufer Muster Software GmbH Hauptstraße 1 10115 Berlin USt-IdNr.: DE123456789",
	);
	expect(plain(await page.getByRole("region", { name: "Rechnungsempfänger" }).innerText())).toBe(
		`Rechnungsempfänger Ada Lovelace ${buyerEmail}`,
	);

	const lines = page.getByRole("table", { name: `Rechnung ${invoice.number}` });
	expect(await texts(lines.getByRole("columnheader"))).toEqual(["Beschreibung", "Menge", "Einzelpreis", "USt.", "Netto", "USt.", "Betrag"]);
	const line = lines.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /Cloud-Speicher Pro/ }) });
	expect(await line.count()).toBe(1);
	expect(plain(await line.getByRole("rowheader").innerText())).toMatch(/^Cloud-Speicher Pro \d\d\.\d\d\.\d{4} – \d\d\.\d\d\.\d{4}$/);
	expect(await texts(line.getByRole("cell"))).toEqual(["1", "10,00 €", "19 %", "10,00 €", "1,90 €", "11,90 €"]);

	const totals = page.getByRole("table", { name: "Gesamt" });
	expect(await texts(totals.getByRole("row"))).toEqual([
		"Summe netto 10,00 €",
		"Summe USt. 1,90 €",
		"Gesamt 11,90 €",
		"Bezahlter Betrag 11,90 €",
	]);
	await page.getByText("Preise zuzüglich USt.").waitFor(WAIT);
	expect(await page.getByRole("link", { name: "PDF" }).getAttribute("href")).toBe(`${invoice.url}/pdf`);
}

describe("The buyer's invoice page", () => {
	test("When the buyer opens the signed link on a desktop, then the page shows the number, seller, buyer, line, tax and total in German", async () => {
		const page = await openInvoice({ width: 1100, height: 900 });

		await expectReadable(page);
		// The PDF link opens without a token too.
		const pdf = await page.request.get(new URL(`${invoice.url}/pdf`, app.url).href);
		expect(pdf.status()).toBe(200);
		expect(pdf.headers()["content-type"]).toBe("application/pdf");
		await keepScreenshot(page, "invoice-page-desktop");
	});

	test("When the buyer opens it on a phone, then the same is read in the screen's width: the parties and the line's cells stack, nothing scrolls sideways", async () => {
		const page = await openInvoice({ width: 375, height: 812 }, true);

		await expectReadable(page);
		const { pageWidth, screenWidth, fontPx } = await page.evaluate(() => ({
			pageWidth: document.documentElement.scrollWidth,
			screenWidth: window.innerWidth,
			fontPx: Number.parseFloat(getComputedStyle(document.body).fontSize),
		}));
		// A mobile browser widens its layout to what overflows and zooms out: 375 means no zoom.
		expect(screenWidth).toBe(375);
		expect(pageWidth).toBeLessThanOrEqual(screenWidth);
		expect(fontPx).toBeGreaterThanOrEqual(16);
		const seller = await page.getByRole("region", { name: "Verkäufer" }).boundingBox();
		const buyer = await page.getByRole("region", { name: "Rechnungsempfänger" }).boundingBox();
		expect(buyer!.y).toBeGreaterThanOrEqual(seller!.y + seller!.height);
		await keepScreenshot(page, "invoice-page-phone");
	});
});
