// The checkout frame encrypts the card in the browser with jose's browser
// build (Web Crypto); the service decrypts with jose on Node. This runs the
// frame's own encryption module (public/checkout/encrypt.js) in Chromium and
// decrypts its output in Node, so the two sides agree on the JWE format
// without the rest of the service.
import { compactDecrypt, exportJWK, generateKeyPair, type KeyLike } from "jose";
import type { Browser, Page } from "playwright-core";
import { launchChromium, type StaticServer, serveStatic } from "./browser";

/** What public/checkout/encrypt.js exports. */
interface EncryptModule {
	importServiceKey(jwk: object): Promise<object>;
	encryptDigits(serviceKey: object, digits: string): Promise<string>;
}

describe("JWE between the checkout frame (browser) and the service (Node)", () => {
	let browser: Browser;
	let server: StaticServer;
	let page: Page;
	let privateKey: KeyLike;
	let publicJwk: Record<string, unknown>;

	beforeAll(async () => {
		browser = await launchChromium();
		// A page that loads encrypt.js as the frame does, as a module, and hands it
		// to the test (page.evaluate cannot import(): TypeScript would compile
		// that to require()).
		const harness = `<!doctype html><title>encrypt.js</title>
			<script type="module">import * as encrypt from "/checkout/encrypt.js"; window.encryptModule = encrypt;</script>`;
		server = await serveStatic({ "/harness.html": { type: "text/html", body: harness } });
		const keys = await generateKeyPair("RSA-OAEP-256", { extractable: true });
		privateKey = keys.privateKey;
		// The shape GET /api/checkout/key answers.
		publicJwk = { ...(await exportJWK(keys.publicKey)), kid: "checkout-key-1", alg: "RSA-OAEP-256", use: "enc" };
		page = await browser.newPage();
		await page.goto(`${server.url}/harness.html`);
		await page.waitForFunction(() => "encryptModule" in window);
	}, 60_000);

	afterAll(async () => {
		await browser?.close();
		await server?.close();
	});

	/** Runs encrypt.js in the page: imports the JWK and encrypts each value on its own, as the frame does. */
	function encryptInBrowser(values: string[]): Promise<string[]> {
		return page.evaluate(
			async ({ jwk, values }) => {
				const { importServiceKey, encryptDigits } = (window as unknown as { encryptModule: EncryptModule }).encryptModule;
				const serviceKey = await importServiceKey(jwk);
				return Promise.all(values.map(digits => encryptDigits(serviceKey, digits)));
			},
			{ jwk: publicJwk, values },
		);
	}

	test("When the frame encrypts a card number and a CVC in Chromium, then jose on Node decrypts each to its digits, with header {alg: RSA-OAEP-256, enc: A256GCM, kid}", async () => {
		// Arrange
		const cardNumber = "4242424242424242";
		const cvc = "123";

		// Act
		const [encryptedCardNumber, encryptedCvc] = await encryptInBrowser([cardNumber, cvc]);

		// Assert
		expect(encryptedCardNumber.split(".")).toHaveLength(5); // compact serialization
		expect(encryptedCardNumber).not.toContain(cardNumber);
		const card = await compactDecrypt(encryptedCardNumber, privateKey);
		expect(new TextDecoder().decode(card.plaintext)).toBe(cardNumber);
		expect(card.protectedHeader).toEqual({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: "checkout-key-1" });
		const code = await compactDecrypt(encryptedCvc, privateKey);
		expect(new TextDecoder().decode(code.plaintext)).toBe(cvc);
		expect(code.protectedHeader).toEqual({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: "checkout-key-1" });
	}, 60_000);

	test("When the same digits are encrypted twice, then the two JWEs differ (fresh content key and IV each time)", async () => {
		// Arrange
		const digits = "4242424242424242";

		// Act
		const [first, second] = await encryptInBrowser([digits, digits]);

		// Assert
		expect(first).not.toBe(second);
		expect(new TextDecoder().decode((await compactDecrypt(second, privateKey)).plaintext)).toBe(digits);
	}, 60_000);

	test("When the service's key has no kid, then the frame refuses to encrypt with it", async () => {
		// Arrange
		const { kid: _kid, ...withoutKid } = publicJwk;

		// Act
		const outcome = await page.evaluate(
			jwk =>
				(window as unknown as { encryptModule: EncryptModule }).encryptModule.importServiceKey(jwk).then(
					() => "accepted",
					(error: Error) => error.message,
				),
			withoutKid,
		);

		// Assert
		expect(outcome).toMatch(/not usable/);
	}, 60_000);
});
