// A card update in Chromium: a merchant's page on its own origin mounts the SDK
// in update mode for a customer in recovery; the buyer types a new card into
// the hosted frame; the renewal owed is charged on it and the customer is ACTIVE.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium } from "./browser";

const WAIT = { timeout: 30_000 };
const DAY = 86_400_000;

describe("Card update in Chromium (merchant page, SDK in update mode, card frame, service)", () => {
	let browser: Browser;
	let app: TestApp;
	let context: BrowserContext;
	let merchantPage: http.Server;
	let pageHtml = "";

	beforeAll(async () => {
		browser = await launchChromium();
		app = await startApp();
		// The merchant's page, on an origin of its own (localhost:<port>), loading the SDK from the service.
		merchantPage = http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(pageHtml));
		await new Promise<void>(resolve => merchantPage.listen(0, "127.0.0.1", resolve));
	}, 60_000);

	afterAll(async () => {
		await browser?.close();
		await app?.stop();
		await new Promise(resolve => merchantPage?.close(resolve));
	});

	beforeEach(async () => {
		context = await browser.newContext();
	});
	afterEach(async () => {
		await context?.close();
	});

	async function suspendedCustomer(): Promise<{ shop: Shop; customerId: number }> {
		const shop = await createShop(app);
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.renewalsLostCard })).body;
		await admin(app)
			.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(Date.now() + 32 * DAY).toISOString() })
			.expect(200);
		return { shop, customerId };
	}

	test("When a SUSPENDED customer types a new card into the frame in update mode, then the page hears OK and recovered, and the customer is ACTIVE on the new card", async () => {
		// Arrange: the merchant's server made a card update session for the customer, bound to localhost.
		const { shop, customerId } = await suspendedCustomer();
		const sessionId = (await app.http().post(`/api/session?domain=localhost&customerId=${customerId}`).set(bearer(shop)).expect(200)).text;
		pageHtml = `<!doctype html><title>Update your card</title>
			<div id="card"></div><p id="result"></p>
			<script src="${app.url}/sdk/checkout.js"></script>
			<script>
				PaymentCheckout.mount("#card", {
					sessionId: ${JSON.stringify(sessionId)},
					mode: "update",
					onResult: r => { document.querySelector("#result").textContent = r.code + " " + r.recovered; },
				});
			</script>`;
		const page = await context.newPage();
		await page.goto(`http://localhost:${(merchantPage.address() as AddressInfo).port}/`);
		const frame = page.frameLocator("iframe");

		// Act: only the card is asked for.
		await frame.getByLabel("Card number").pressSequentially("5555 5555 5555 4444");
		await frame.getByLabel("Expiry").fill("12/34");
		await frame.getByLabel("Security code").fill("123");
		const emailHidden = await frame.getByLabel("Email").isHidden();
		await frame.getByRole("button", { name: "Update card" }).click(WAIT);
		await page.waitForFunction(() => (document.querySelector("#result")?.textContent ?? "") !== "", null, WAIT);

		// Assert
		expect(emailHidden).toBe(true);
		expect(await page.locator("#result").textContent()).toBe("OK true");
		await frame.getByText("Your card is updated").waitFor(WAIT);
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0, cardBin: "555555", cardType: "mastercard" });
	}, 90_000);
});
