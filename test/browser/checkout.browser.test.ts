// End to end in Chromium: the demo merchant page (public/demo), the SDK
// (public/sdk), the hosted card frame (public/checkout) and the real services
// behind the gateway, with the sandbox demo account.
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";
import { CVC, fillCheckout, openDemoCheckout, resultOf, WAIT } from "./demo-page";

const CARD_APPROVED = "4242424242424242";
const CARD_FAILS_VERIFICATION = "4000000000000002";
const JWE_COMPACT = /^[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/;

interface SentRequest {
	url: string;
	method: string;
	body: string;
}

/** The service's answers to POST /api/checkout, so a failure shows what the service said (its fields, for INVALID_REQUEST). */
function recordCheckoutAnswers(page: Page): string[] {
	const answers: string[] = [];
	page.on("response", response => {
		if (response.request().method() === "POST" && new URL(response.url()).pathname === "/api/checkout")
			void response.text().then(
				text => answers.push(`${response.status()} ${text}`),
				() => undefined,
			);
	});
	return answers;
}

/** The answers recorded so far, once the first has been read (its body is read after the page saw the response). */
async function answered(answers: string[]): Promise<string[]> {
	for (let waited = 0; answers.length === 0 && waited < 5000; waited += 50) await new Promise(r => setTimeout(r, 50));
	return answers;
}

/** Every request the page and its frames send, with its body. */
function recordRequests(page: Page): SentRequest[] {
	const sent: SentRequest[] = [];
	page.on("request", request => sent.push({ url: request.url(), method: request.method(), body: request.postData() ?? "" }));
	return sent;
}

function recordConsole(page: Page): string[] {
	const lines: string[] = [];
	page.on("console", message => lines.push(message.text()));
	return lines;
}

function checkoutBody(sent: SentRequest[]): Record<string, unknown> {
	const post = sent.find(r => r.method === "POST" && new URL(r.url).pathname === "/api/checkout");
	if (!post) throw new Error(`No POST /api/checkout among: ${sent.map(r => `${r.method} ${r.url}`).join(", ")}`);
	return JSON.parse(post.body);
}

/** The string values anywhere in a JSON document. */
function jsonStrings(value: unknown): string[] {
	if (typeof value === "string") return [value];
	if (value && typeof value === "object") return Object.values(value).flatMap(jsonStrings);
	return [];
}

/** Fails naming the request when any URL or body carries the card number or the CVC in plaintext. */
function expectNoPlaintextCard(sent: SentRequest[], cardNumber: string): void {
	const spaced = cardNumber.replace(/(\d{4})(?=\d)/g, "$1 ");
	const leaks = sent.filter(({ url, body }) => {
		let strings: string[] = [];
		try {
			strings = body ? jsonStrings(JSON.parse(body)) : [];
		} catch {
			// not JSON: the substring checks below still apply
		}
		return (
			[url, body].some(text => text.includes(cardNumber) || text.includes(spaced)) ||
			body.includes(`"${CVC}"`) ||
			strings.some(s => s.replace(/\s/g, "") === cardNumber || s === CVC)
		);
	});
	expect(leaks.map(r => `${r.method} ${r.url}`)).toEqual([]);
}

describe("Hosted checkout in Chromium (demo page, SDK, card frame, service)", () => {
	let browser: Browser;
	let app: TestApp;
	let demoUrl: string;
	let context: BrowserContext;

	beforeAll(async () => {
		browser = await launchChromium();
		app = await startApp({ env: { DEMO: "1" } });
		await app.broker.call("accounts.seedDemo");
		// localhost, as a developer opens the demo after npm start; /demo/session
		// binds the session to the host name the page was requested on.
		demoUrl = `${app.url.replace("127.0.0.1", "localhost")}/demo`;
	}, 60_000);

	afterAll(async () => {
		await browser?.close();
		await app?.stop();
	});

	beforeEach(async () => {
		context = await browser.newContext();
	});

	afterEach(async () => {
		await context?.close();
	});

	const openDemo = (page: Page) => openDemoCheckout(page, demoUrl);

	test("When the buyer pays the CHARGE product with 4242 4242 4242 4242, then the demo shows OK with a customer id, and the card number and CVC travel only encrypted", async () => {
		// Arrange
		const page = await context.newPage();
		const sent = recordRequests(page);
		const answers = recordCheckoutAnswers(page);
		const consoleLines = recordConsole(page);
		const frame = await openDemo(page);
		await fillCheckout(frame, CARD_APPROVED);
		await frame.locator("#pay:enabled").waitFor(WAIT);
		const outputDir = path.join(PROJECT_ROOT, "test-output");
		mkdirSync(outputDir, { recursive: true });
		await page.screenshot({ path: path.join(outputDir, "checkout-filled.png"), fullPage: true });

		// Act
		await frame.getByRole("button", { name: "Pay" }).click();
		const result = await resultOf(page);

		// Assert (with the service's answer, should it be another)
		expect({ result, answers: await answered(answers) }).toEqual({
			result: expect.stringMatching(/^OK customer \d+$/),
			answers: [expect.stringMatching(/^200 \{"code":"OK"/)],
		});
		await frame.getByText("Payment complete").waitFor(WAIT);
		const body = checkoutBody(sent);
		expect(body).toMatchObject({
			sessionId: expect.any(String),
			productId: expect.any(Number),
			name: "Ada",
			lastName: "Lovelace",
			landingDomain: "localhost",
			additionalData: { source: "demo" },
			cardExpiry: "1234",
		});
		expect(body.encryptedCardNumber).toMatch(JWE_COMPACT);
		expect(body.encryptedCvc).toMatch(JWE_COMPACT);
		expectNoPlaintextCard(sent, CARD_APPROVED);
		expect(consoleLines.filter(line => line.includes(CARD_APPROVED))).toEqual([]);
	}, 60_000);

	test("When the buyer pays with 4000 0000 0000 0002 (verification fails), then the demo shows CREDITCARD_VALIDATION and the frame says the card could not be verified", async () => {
		// Arrange: a fresh page load, so a fresh session.
		const page = await context.newPage();
		const sent = recordRequests(page);
		const answers = recordCheckoutAnswers(page);
		const frame = await openDemo(page);
		await fillCheckout(frame, CARD_FAILS_VERIFICATION);

		// Act
		await frame.getByRole("button", { name: "Pay" }).click(WAIT);
		const result = await resultOf(page);

		// Assert (with the service's answer, should it be another)
		expect({ result, answers: await answered(answers) }).toEqual({
			result: "CREDITCARD_VALIDATION",
			answers: [expect.stringMatching(/^200 \{"code":"CREDITCARD_VALIDATION"/)],
		});
		await frame.getByText("Your card could not be verified").waitFor(WAIT);
		expectNoPlaintextCard(sent, CARD_FAILS_VERIFICATION);
	}, 60_000);

	test("When the buyer types a card number that fails the Luhn check, then the field shows an error and Pay stays disabled until the number is corrected", async () => {
		// Arrange
		const page = await context.newPage();
		const frame = await openDemo(page);
		await fillCheckout(frame, CARD_APPROVED);
		const cardNumber = frame.getByLabel("Card number");
		await cardNumber.fill("");

		// Act
		await cardNumber.pressSequentially("4242424242424241");

		// Assert
		await frame.getByText("Your card number is invalid.").waitFor(WAIT);
		expect(await cardNumber.getAttribute("aria-invalid")).toBe("true");
		expect(await frame.locator("#pay").isDisabled()).toBe(true);

		// Act: correct the last digit.
		await cardNumber.press("Backspace");
		await cardNumber.pressSequentially("2");

		// Assert
		await frame.locator("#pay:enabled").waitFor(WAIT);
		expect(await cardNumber.inputValue()).toBe("4242 4242 4242 4242");
		expect(await frame.locator("#card-number-error").textContent()).toBe("");
		expect(await frame.locator("#card-brand").textContent()).toBe("Visa");
	}, 60_000);

	test("When the merchant's page is on another origin than the service, then onResult gets the outcome from the frame alone, and additionalData reaches the service without passing through the URL", async () => {
		// Arrange: the merchant's page on localhost:<its own port>, the service on 127.0.0.1:<port>.
		const session = (await app.http().get("/demo/session").set("Host", "localhost")).body as {
			sessionId: string;
			domain: string;
			products: { id: number; billing: string }[];
		};
		expect(session.domain).toBe("localhost");
		const product = session.products.find(p => p.billing === "CHARGE")!;
		const shopPage = `<!doctype html><title>Another shop</title>
				<div id="checkout"></div><output id="result"></output>
				<script src="${app.url}/sdk/checkout.js"></script>
				<script>
					window.results = [];
					PaymentCheckout.mount("#checkout", {
						sessionId: ${JSON.stringify(session.sessionId)},
						productId: ${product.id},
						domain: location.hostname,
						additionalData: { orderRef: "A-1" },
						onResult: result => {
							window.results.push(result);
							document.getElementById("result").textContent = result.code === "OK" ? "OK customer " + result.customerId : result.code;
						},
					});
				</script>`;
		const shop = http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end(shopPage));
		await new Promise<void>(resolve => shop.listen(0, "127.0.0.1", resolve));
		try {
			const page = await context.newPage();
			const sent = recordRequests(page);
			const answers = recordCheckoutAnswers(page);
			await page.goto(`http://localhost:${(shop.address() as AddressInfo).port}/`);
			const frame = page.frameLocator("iframe");
			await fillCheckout(frame, CARD_APPROVED);
			// A script of the page posing as the frame must not reach onResult.
			await page.evaluate(() => window.postMessage({ type: "result", code: "OK", customerId: 666 }, "*"));

			// Act
			// Pay by keyboard: Playwright's hit-target check does not complete inside this
			// cross-site (out-of-process) frame, though the button is visible and enabled.
			await frame.getByRole("button", { name: "Pay" }).press("Enter");
			const result = await resultOf(page);

			// Assert (with the service's answer, should it be another)
			expect({ result, answers: await answered(answers) }).toEqual({
				result: expect.stringMatching(/^OK customer \d+$/),
				answers: [expect.stringMatching(/^200 \{"code":"OK"/)],
			});
			const results = await page.evaluate(() => (window as unknown as { results: { code: string; customerId?: number }[] }).results);
			expect(results).toHaveLength(1);
			expect(results[0]).toMatchObject({ code: "OK", customerId: expect.any(Number) });
			const src = new URL((await page.locator("iframe").getAttribute("src"))!);
			expect(src.origin).toBe(app.url);
			expect(Object.fromEntries(src.searchParams)).toEqual({
				sessionId: session.sessionId,
				productId: String(product.id),
				domain: "localhost",
			});
			expect(checkoutBody(sent)).toMatchObject({ landingDomain: "localhost", additionalData: { orderRef: "A-1" } });
			expectNoPlaintextCard(sent, CARD_APPROVED);
			// The iframe follows the frame's height, outcome message included: nothing to scroll.
			const cardFrame = page.frames().find(f => f.url().includes("/checkout/frame.html"))!;
			await cardFrame.waitForFunction(() => document.documentElement.scrollHeight <= window.innerHeight + 1, null, WAIT);
		} finally {
			shop.closeAllConnections(); // the browser keeps its connections open
			await new Promise<void>(resolve => shop.close(() => resolve()));
		}
	}, 60_000);

	test("When another site embeds the card frame with a merchant's session, then the browser refuses to show it (CSP frame-ancestors is the session's domain)", async () => {
		// Arrange: the session is bound to localhost; the page embedding it is on 127.0.0.1, claiming localhost.
		const session = (await app.http().get("/demo/session").set("Host", "localhost")).body as {
			sessionId: string;
			products: { id: number }[];
		};
		const evilPage = `<!doctype html><title>Not the shop</title><div id="checkout"></div>
				<script src="${app.url}/sdk/checkout.js"></script>
				<script>PaymentCheckout.mount("#checkout", { sessionId: ${JSON.stringify(session.sessionId)}, productId: ${session.products[0].id}, domain: "localhost" });</script>`;
		const evil = http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end(evilPage));
		await new Promise<void>(resolve => evil.listen(0, "127.0.0.1", resolve));
		try {
			const page = await context.newPage();
			const consoleLines = recordConsole(page);

			// Act
			await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
			await page.waitForFunction(() => document.querySelector("iframe") !== null, null, WAIT);
			await page.waitForTimeout(1000);

			// Assert: no frame shows the form, and Chromium says why.
			const forms = await Promise.all(
				page.frames().map(f =>
					f
						.locator("#checkout-form")
						.count()
						.catch(() => 0),
				),
			);
			expect(forms.reduce((a, b) => a + b, 0)).toBe(0);
			expect(consoleLines.some(line => line.includes("frame-ancestors"))).toBe(true);
		} finally {
			evil.closeAllConnections();
			await new Promise<void>(resolve => evil.close(() => resolve()));
		}
	}, 60_000);
});
