// A card update in Chromium: a merchant's page on its own origin mounts the SDK
// in update mode for a customer in recovery; the buyer types a new card into
// the hosted frame; the renewal owed is charged on it and the customer is ACTIVE.

import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { clockToRenewalOf } from "../factories/test-clock";
import { setWallClock } from "../factories/wall-clock";
import { eventually } from "../services/notifications/webhook-events";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";

const WAIT = { timeout: 30_000 };
const DAY = 86_400_000;
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

describe("Card update in Chromium (merchant page, SDK in update mode, card frame, service)", () => {
	let browser: Browser;
	let app: TestApp;
	let context: BrowserContext;
	let merchantPage: http.Server;
	let pageHtml = "";

	beforeAll(async () => {
		browser = await launchChromium();
		// The checkout recovery sweeps every 300 ms, 4 s after a session's end: it settles a card update left at its challenge.
		app = await startApp({ env: { REQUEST_TIMEOUT_MS: "3000", REFUND_RECOVERY_GRACE_MS: "4000", REFUND_RECOVERY_INTERVAL_MS: "300" } });
		mkdirSync(OUTPUT, { recursive: true });
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
		jest.useRealTimers();
		await context?.close();
	});

	/** The merchant's page with the SDK in update mode for this card update session; returns the card frame. */
	async function openUpdatePage(sessionId: string) {
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
		return { page, frame: page.frameLocator("iframe") };
	}
	const resultOf = async (page: Page) => {
		await page.waitForFunction(() => (document.querySelector("#result")?.textContent ?? "") !== "", null, WAIT);
		return page.locator("#result").textContent();
	};

	async function suspendedCustomer(): Promise<{ shop: Shop; customerId: number }> {
		const shop = await createShop(app);
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.renewalsLostCard })).body;
		await clockToRenewalOf(app, shop, customerId);
		return { shop, customerId };
	}

	test("When a SUSPENDED customer types a new card into the frame in update mode, then the page hears OK and recovered, and the customer is ACTIVE on the new card", async () => {
		// Arrange: the merchant's server made a card update session for the customer, bound to localhost.
		const { shop, customerId } = await suspendedCustomer();
		const sessionId = (await app.http().post(`/api/session?domain=localhost&customerId=${customerId}`).set(bearer(shop)).expect(200)).text;
		const { page, frame } = await openUpdatePage(sessionId);

		// Act: only the card is asked for.
		await frame.getByLabel("Card number").pressSequentially("5555 5555 5555 4444");
		await frame.getByLabel("Expiry").fill("12/34");
		await frame.getByLabel("Security code").fill("123");
		const emailHidden = await frame.getByLabel("Email").isHidden();
		await frame.getByRole("button", { name: "Update card" }).click(WAIT);
		const result = await resultOf(page);

		// Assert
		expect(emailHidden).toBe(true);
		expect(result).toBe("OK true");
		await frame.getByText("Your card is updated").waitFor(WAIT);
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0, cardBin: "555555", cardType: "mastercard" });
	}, 90_000);

	describe("The issuer asks the buyer to authenticate the renewal owed (3-D Secure)", () => {
		/** A customer whose renewal was refused for want of authentication, at its card update's challenge in the frame. */
		async function atChallenge() {
			const shop = await createShop(app);
			const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.renewalsNeedAuthentication }))
				.body;
			// The renewal's due time: refused once, its first retry a day later.
			await clockToRenewalOf(app, shop, customerId);
			const sessionId = (await app.http().post(`/api/session?domain=localhost&customerId=${customerId}`).set(bearer(shop)).expect(200))
				.text;
			const { page, frame } = await openUpdatePage(sessionId);
			await frame.getByLabel("Card number").pressSequentially("4000 0000 0000 3220");
			await frame.getByLabel("Expiry").fill("11/30");
			await frame.getByLabel("Security code").fill("123");
			await frame.getByRole("button", { name: "Update card" }).click(WAIT);
			const challenge = frame.frameLocator("#challenge");
			await challenge.getByRole("button", { name: "Complete authentication" }).waitFor(WAIT);
			const customer = async () => (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
			const transactions = async () =>
				(
					(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body as {
						type: string;
						status: string;
						declineReason: string | null;
					}[]
				).map(t => [t.type, t.status, t.declineReason]);
			const events = async () =>
				(
					(await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data as {
						type: string;
					}[]
				).map(e => e.type);
			return { shop, page, frame, challenge, customer, transactions, events };
		}
		const REFUSED = ["RENEWAL", "DECLINED", "authentication_required"];

		test("When the buyer completes it, then the page hears OK and recovered, the renewal owed is charged once, and the customer is ACTIVE on the new card", async () => {
			// Arrange
			const { page, frame, challenge, customer, transactions, events } = await atChallenge();
			await page.screenshot({ path: path.join(OUTPUT, "card-update-challenge-shown.png"), fullPage: true });

			// Act
			await challenge.getByRole("button", { name: "Complete authentication" }).click();

			// Assert
			expect(await resultOf(page)).toBe("OK true");
			await frame.getByText("Your card is updated").waitFor(WAIT);
			expect(await customer()).toMatchObject({ status: "ACTIVE", attempts: 0, cardExpiredTime: "1130" });
			expect(await transactions()).toEqual([["SUBSCRIPTION_START", "APPROVED", null], REFUSED, ["RENEWAL", "APPROVED", null]]);
			await eventually(async () => {
				expect(await events()).toEqual(expect.arrayContaining(["AUTHENTICATION_REQUIRED", "PAYMENT_METHOD_UPDATED", "REACTIVATION"]));
			}, 15_000);
		}, 90_000);

		test("When the buyer double-clicks to fail it, then the page hears AUTHENTICATION_FAILED once, nothing is charged, and the card stays", async () => {
			// Arrange
			const { page, frame, challenge, customer, transactions } = await atChallenge();

			// Act
			await challenge.getByRole("button", { name: "Fail authentication" }).dblclick();

			// Assert
			expect(await resultOf(page)).toBe("AUTHENTICATION_FAILED undefined");
			await frame.getByText("nothing was charged").waitFor(WAIT);
			await page.screenshot({ path: path.join(OUTPUT, "card-update-challenge-failed.png"), fullPage: true });
			expect(await customer()).toMatchObject({ status: "ACTIVE", attempts: 1, cardExpiredTime: "1234" });
			expect(await transactions()).toEqual([
				["SUBSCRIPTION_START", "APPROVED", null],
				REFUSED,
				["RENEWAL", "DECLINED", "authentication_failed"],
			]);
		}, 90_000);

		test("When the buyer reloads the frame during it, then the challenge shows again, and completing it charges once", async () => {
			// Arrange
			const { page, frame, transactions } = await atChallenge();

			// Act
			const cardFrame = page.frames().find(f => f.url().includes("/checkout/frame.html"));
			await cardFrame?.evaluate(() => location.reload());
			await frame.frameLocator("#challenge").getByRole("button", { name: "Complete authentication" }).click(WAIT);

			// Assert
			expect(await resultOf(page)).toBe("OK true");
			expect(await transactions()).toEqual([["SUBSCRIPTION_START", "APPROVED", null], REFUSED, ["RENEWAL", "APPROVED", null]]);
		}, 90_000);

		test("When the buyer closes the page during it, then once the session has ended the recovery settles the update: nothing charged, nothing changed, and renewals go on", async () => {
			// Arrange
			const { shop, page, customer, transactions } = await atChallenge();
			const before = await customer();

			// Act: the buyer leaves; the session's 5 minutes and the recovery's grace pass.
			await page.close();
			setWallClock(Date.now() + 5 * 60 * 1000 + 5000);

			// Assert: while the update waited it held the customer's renewal (for 15 minutes past the session); settled by
			// the recovery, it let it go, so a renewal run retries the old card (refused again, as this card always is).
			let run = 0;
			await eventually(async () => {
				run += 1;
				const at = new Date(Date.now() + 40 * DAY + run * 1000).toISOString();
				await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: at }).expect(200);
				expect((await transactions()).slice(0, 3)).toEqual([["SUBSCRIPTION_START", "APPROVED", null], REFUSED, REFUSED]);
			}, 20_000);
			expect(before).toMatchObject({ status: "ACTIVE", attempts: 1, cardExpiredTime: "1234" });
			expect(await customer()).toMatchObject({ cardExpiredTime: "1234" });
		}, 90_000);
	});
});
