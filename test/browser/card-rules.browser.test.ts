// The card form's rules (public/checkout/card.js), run in Chromium where the
// frame runs them: brand detection, Luhn, grouping, expiry and CVC.
import type { Browser, Page } from "playwright-core";
import { launchChromium, type StaticServer, serveStatic } from "./browser";

interface Check {
	error: string | null;
	definite: boolean;
}

describe("Card rules of the checkout frame", () => {
	let browser: Browser;
	let server: StaticServer;
	let page: Page;

	beforeAll(async () => {
		browser = await launchChromium();
		const harness = `<!doctype html><title>card.js</title>
			<script type="module">import * as card from "/checkout/card.js"; window.card = card;</script>`;
		server = await serveStatic({ "/harness.html": { type: "text/html", body: harness } });
		page = await browser.newPage();
		await page.goto(`${server.url}/harness.html`);
		await page.waitForFunction(() => "card" in window);
	}, 60_000);

	afterAll(async () => {
		await browser?.close();
		await server?.close();
	});

	/** Calls an export of card.js in the page; a "Date:" string argument becomes a Date there. */
	function call<T>(name: string, ...args: unknown[]): Promise<T> {
		return page.evaluate(
			({ name, args }) => {
				const card = (window as unknown as { card: Record<string, (...a: unknown[]) => unknown> }).card;
				return card[name](...args.map(a => (typeof a === "string" && a.startsWith("Date:") ? new Date(a.slice(5)) : a)));
			},
			{ name, args },
		) as Promise<T>;
	}

	test("When a test card's number is typed, then its brand is detected", async () => {
		// Arrange
		const cards: [string, string | null][] = [
			["4242424242424242", "visa"],
			["5555555555554444", "mastercard"],
			["2221000000000009", "mastercard"],
			["378282246310005", "amex"],
			["6011111111111117", "discover"],
			["3530111333300000", "jcb"],
			["30569309025904", "diners"],
			["6200000000000005", "unionpay"],
			["6759649826438453", "maestro"],
			["9999999999999995", null],
		];

		// Act
		const brands = await Promise.all(cards.map(([number]) => call<string | null>("brandOf", number)));

		// Assert
		expect(brands).toEqual(cards.map(([, brand]) => brand));
	});

	test("When a number is typed with or without spaces, then it is grouped as printed on the card and cut at the brand's longest length", async () => {
		// Act
		const formatted = await Promise.all(
			["4242424242424242", "4242 42424 2424242", "378282246310005", "30569309025904", "37828224631000599", "42424242424242424242"].map(v =>
				call<string>("formatCardNumber", v),
			),
		);

		// Assert
		expect(formatted).toEqual([
			"4242 4242 4242 4242",
			"4242 4242 4242 4242",
			"3782 822463 10005",
			"3056 930902 5904",
			"3782 822463 10005",
			"4242 4242 4242 4242 424",
		]);
	});

	test("When a complete number fails the Luhn check, then the error shows at once; an incomplete one waits for the buyer to leave the field", async () => {
		// Act
		const wrongCheckDigit = await call<Check>("validateCardNumber", "4242 4242 4242 4241");
		const incomplete = await call<Check>("validateCardNumber", "4242 4242");
		const valid = await call<Check>("validateCardNumber", "4242 4242 4242 4242");
		const amex = await call<Check>("validateCardNumber", "3782 822463 10005");

		// Assert
		expect(wrongCheckDigit).toEqual({ error: "Your card number is invalid.", definite: true });
		expect(incomplete).toEqual({ error: "Your card number is incomplete.", definite: false });
		expect(valid.error).toBeNull();
		expect(amex.error).toBeNull();
	});

	test("When an expiry is typed, then it reads MM/YY, and a past month or a month above 12 is refused", async () => {
		// Arrange
		const today = "Date:2026-11-22T12:00:00";

		// Act
		const formats = await Promise.all(["1234", "4", "1/25", "12/3"].map(v => call<string>("formatExpiry", v)));
		const thisMonth = await call<Check>("validateExpiry", "11/26", today);
		const lastMonth = await call<Check>("validateExpiry", "10/26", today);
		const month13 = await call<Check>("validateExpiry", "13", today);
		const future = await call<Check>("validateExpiry", "12/34", today);

		// Assert
		expect(formats).toEqual(["12/34", "04", "01/25", "12/3"]);
		expect(thisMonth.error).toBeNull();
		expect(lastMonth).toEqual({ error: "Your card has expired.", definite: true });
		expect(month13).toEqual({ error: "Enter a month from 01 to 12.", definite: true });
		expect(future.error).toBeNull();
	});

	test("When a CVC is typed, then it must be 3 digits, or 4 for amex", async () => {
		// Act
		const visa3 = await call<Check>("validateCvc", "123", "visa");
		const visa4 = await call<Check>("validateCvc", "1234", "visa");
		const amex3 = await call<Check>("validateCvc", "123", "amex");
		const amex4 = await call<Check>("validateCvc", "1234", "amex");

		// Assert
		expect(visa3.error).toBeNull();
		expect(visa4).toEqual({ error: "The security code is 3 digits, on the back of the card.", definite: true });
		expect(amex3).toEqual({ error: "The security code is 4 digits, on the front of the card.", definite: false });
		expect(amex4.error).toBeNull();
	});

	test("When an email is typed, then a missing @ or domain is refused", async () => {
		// Act
		const results = await Promise.all(
			["buyer@example.com", "buyer@example", "buyer.example.com", " "].map(v => call<Check>("validateEmail", v)),
		);

		// Assert
		expect(results.map(r => r.error === null)).toEqual([true, false, false, false]);
	});
});
