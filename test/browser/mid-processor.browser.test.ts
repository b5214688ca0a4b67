// A MID's processor in the dashboard in Chromium (issue 49, docs/dashboard.md#a-mids-processor): an operator sets a
// sandbox account's MID to Adyen's test platform with the Merchant accounts page's form (API key, merchant account,
// HMAC key); the table then shows Adyen with the keys' last 4 characters, neither key is in the page nor in any answer
// the page received, and the audit log has one "set processor"; then sets it back to the sandbox. A live URL prefix on
// a sandbox account shows the API's 409 and a bad HMAC key its 400, and neither changes the MID, nor does a request
// naming more of the MID than its processor. A viewer sees the processors without the form, and a change its page's
// script makes anyway is refused. At 360 px every control has a name and nothing overflows. Only the MID's processor
// is stored: no payment is made, so no Adyen server is needed.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createShop, type Shop } from "../factories/checkout";
import { admin } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");
const FORM = "Set a MID's processor";
/** What a MID on Adyen's test platform with the merchant account ShopCom keeps of its processor, but for the last 4s. */
const ADYEN_TEST = { type: "adyen", keyMode: "test", merchantAccount: "ShopCom", liveUrlPrefix: null };
const LIVE_KEY_IN_SANDBOX =
	"A sandbox account's merchant account takes test keys only (Stripe's sk_test_… or rk_test_…, Adyen's test platform without a liveUrlPrefix): live keys move real money";
const BAD_HMAC_KEY =
	"processor.hmacKey must be the HMAC key of the MID's notification webhook in Adyen's Customer Area: 64 hexadecimal digits";

let browser: Browser;
let app: TestApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	[browser, app] = await Promise.all([launchChromium(), startApp()]);
}, 60_000);
afterEach(() => Promise.all(contexts.splice(0).map(c => c.close())));
afterAll(() => Promise.all([browser?.close(), app?.stop()]));

/**
 * A new dashboard user of the shop with `role`, signed in (the sign-in form has tests of its own: here its request,
 * in the browser's cookie jar), on the Merchant accounts page; `answers` reads every answer of /dashboard/api the
 * page received, as text.
 */
async function midsPage(shop: Shop, role: "viewer" | "operator", width = 1100) {
	const email = `${role}-${randomBytes(4).toString("hex")}@shop.example.com`;
	await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role, password: PASSWORD }).expect(201);
	const context = await browser.newContext({ baseURL: app.url, viewport: { width, height: 800 } });
	contexts.push(context);
	const signIn = await context.request.post("/dashboard/api/sign-in", {
		data: { email, password: PASSWORD },
		headers: { Origin: app.url },
	});
	expect(signIn.status()).toBe(200);
	const received: Promise<string>[] = [];
	context.on("response", response => {
		if (response.url().includes("/dashboard/api/")) received.push(response.text().catch(() => ""));
	});
	const page = await context.newPage();
	await page.goto("/dashboard/#/merchant-accounts");
	await midsShown(page);
	return { page, answers: () => Promise.all(received) };
}

/** Waits for the Merchant accounts page's table of MIDs. */
async function midsShown(page: Page): Promise<void> {
	await page.getByRole("heading", { name: "Merchant accounts" }).waitFor(WAIT);
	await page.locator("table.mids th[scope='rowgroup']").first().waitFor(WAIT);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(OUTPUT, `dashboard-${name}.png`), fullPage: true });

/** An Adyen API key and HMAC key of this run: each unique, so finding one anywhere means it leaked. */
function adyenKeys() {
	return { apiKey: `AQE${randomBytes(30).toString("base64url")}`, hmacKey: randomBytes(32).toString("hex").toUpperCase() };
}

/** The Processor cell of the MID named `name`: its data cells are its id, weight, monthly cap and processor, in that order. */
const processorShown = (page: Page, name: string) =>
	page
		.locator("table.mids tbody")
		.filter({ has: page.locator('th[scope="rowgroup"]', { hasText: name }) })
		.getByRole("cell")
		.nth(3)
		.textContent();

const midsOf = async (shop: Shop) =>
	(await admin(app).get(`/accounts/${shop.accountId}/merchant-accounts`).expect(200)).body as {
		id: number;
		name: string;
		weight: number;
		processor: unknown;
	}[];

/** Waits for the status line to say `text` and answers all it says. */
async function status(page: Page, text: string | RegExp): Promise<string | null> {
	await page.locator("#status", { hasText: text }).waitFor(WAIT);
	return page.locator("#status").textContent();
}

describe("A MID's processor in the dashboard", () => {
	test("When an operator sets a sandbox account's MID to Adyen's test platform with the form, then the page shows Adyen with the keys' last 4 characters, never a key, the audit log has one set processor, and the MID goes back to the sandbox the same way", async () => {
		// Arrange
		const shop = await createShop(app);
		const [midA, midB] = shop.mids;
		const { apiKey, hmacKey } = adyenKeys();
		const { page, answers } = await midsPage(shop, "operator");
		const before = [await processorShown(page, "MID A"), await processorShown(page, "MID B")];
		const headers = await page.locator("table.mids").getByRole("columnheader").allTextContents();

		// Act
		await page.getByLabel("MID", { exact: true }).selectOption(String(midA));
		await page.getByLabel("Processor", { exact: true }).selectOption("adyen");
		await page.getByLabel("API key").fill(apiKey);
		await page.getByLabel("Merchant account").fill("ShopCom");
		await page.getByLabel("HMAC key (optional)").fill(hmacKey);
		const kinds = await page.getByLabel("Processor", { exact: true }).locator("option").allTextContents();
		const secretInputs = await page
			.getByRole("form", { name: FORM })
			.locator("input:visible")
			.evaluateAll(inputs => inputs.map(i => [i.getAttribute("name"), i.getAttribute("type"), i.getAttribute("autocomplete")]));
		await page.getByRole("button", { name: "Set processor" }).click();
		const said = await status(page, "processor set to");
		const shown = await processorShown(page, "MID A");
		const other = await processorShown(page, "MID B");
		const html = await page.content();
		const apiKeyField = await page.getByLabel("API key").inputValue();
		await shot(page, "mid-processor");
		const stored = (await midsOf(shop)).find(m => m.id === midA)?.processor;

		// Assert
		const shownAdyen = `Adyen ShopCom (test, …${apiKey.slice(-4)}; HMAC key …${hmacKey.slice(-4)})`;
		expect(before).toEqual(["Sandbox", "Sandbox"]);
		expect(headers.slice(0, 6)).toEqual(["Id", "MID", "Weight", "Monthly cap", "Processor", "Period"]);
		expect(kinds).toEqual(["Sandbox", "Stripe", "Adyen", "None"]);
		expect(secretInputs).toEqual([
			["apiKey", "password", "off"],
			["merchantAccount", "text", "off"],
			["liveUrlPrefix", "text", "off"],
			["hmacKey", "password", "off"],
		]);
		expect(said).toBe(`MID A (${midA}): processor set to ${shownAdyen}.`);
		expect(shown).toBe(shownAdyen);
		expect(other).toBe("Sandbox");
		expect(stored).toEqual({ ...ADYEN_TEST, apiKeyLast4: apiKey.slice(-4), hmacKeyLast4: hmacKey.slice(-4) });
		// The form is drawn again for the MID, its secrets empty: a key is typed, sent once and never shown.
		expect(apiKeyField).toBe("");
		expect(html).not.toContain(apiKey);
		expect(html).not.toContain(hmacKey);

		// Act: the audit log.
		await page.getByRole("link", { name: "Audit log" }).click();
		await page.getByRole("cell", { name: "set processor", exact: true }).first().waitFor(WAIT);
		const audited = await page
			.locator("tbody tr", { has: page.getByRole("cell", { name: "set processor", exact: true }) })
			.evaluateAll(rows => rows.map(row => Array.from(row.querySelectorAll("td"), td => td.textContent)));
		const auditHtml = await page.content();

		// Assert
		expect(audited).toHaveLength(1);
		expect(audited[0].slice(2, 4)).toEqual(["set processor", `merchant-account ${midA}`]);
		expect(audited[0][4]).toContain(`"apiKeyLast4":"${apiKey.slice(-4)}"`);
		expect(auditHtml).not.toContain(apiKey);
		expect(auditHtml).not.toContain(hmacKey);

		// Act: back to the sandbox.
		await page.getByRole("link", { name: "Merchant accounts" }).click();
		await midsShown(page);
		await page.getByLabel("MID", { exact: true }).selectOption(String(midA));
		await page.getByLabel("Processor", { exact: true }).selectOption("sandbox");
		await page.getByRole("button", { name: "Set processor" }).click();
		const saidBack = await status(page, `MID A (${midA}): processor set to Sandbox.`);
		const shownBack = await processorShown(page, "MID A");

		// Assert
		expect(saidBack).toBe(`MID A (${midA}): processor set to Sandbox.`);
		expect(shownBack).toBe("Sandbox");
		expect((await midsOf(shop)).map(m => [m.id, m.processor])).toEqual([
			[midA, { type: "sandbox" }],
			[midB, { type: "sandbox" }],
		]);
		const received = await answers();
		expect(received.length).toBeGreaterThan(5);
		expect(received.filter(text => text.includes(apiKey) || text.includes(hmacKey))).toEqual([]);
	}, 120_000);

	test("When an operator gives a sandbox account's MID Adyen's live URL prefix, or an HMAC key of the wrong shape, then the page shows the API's 409 and 400, a request naming more than the processor is a 400, and the MID stays as it was", async () => {
		// Arrange
		const shop = await createShop(app);
		const [midA] = shop.mids;
		const { apiKey, hmacKey } = adyenKeys();
		const { page } = await midsPage(shop, "operator");

		// Act: the live platform, on a sandbox account.
		await page.getByLabel("MID", { exact: true }).selectOption(String(midA));
		await page.getByLabel("Processor", { exact: true }).selectOption("adyen");
		await page.getByLabel("API key").fill(apiKey);
		await page.getByLabel("Merchant account").fill("ShopCom");
		await page.getByLabel("Live URL prefix (live platform only)").fill("1797a841fbb37ca7-AdyenDemo");
		await page.getByRole("button", { name: "Set processor" }).click();
		await page.locator("#status.error").waitFor(WAIT);
		const conflict = await page.locator("#status").textContent();
		const kept = await page.getByLabel("Live URL prefix (live platform only)").inputValue();
		await shot(page, "mid-processor-refused");

		// Act: the test platform, with an HMAC key that is not 64 hexadecimal digits.
		await page.getByLabel("Live URL prefix (live platform only)").fill("");
		await page.getByLabel("HMAC key (optional)").fill(hmacKey.slice(1));
		await page.getByRole("button", { name: "Set processor" }).click();
		await page.locator("#status.error", { hasText: "processor.hmacKey" }).waitFor(WAIT);
		const badShape = await page.locator("#status").textContent();
		const html = await page.content();
		// Act: the route takes the processor only, not the rest of the MID the admin API changes.
		const wider = await page.evaluate(async midId => {
			const me = await (await fetch("/dashboard/api/me")).json();
			const res = await fetch(`/dashboard/api/merchant-accounts/${midId}/processor`, {
				method: "PATCH",
				headers: { "Content-Type": "application/json", "X-CSRF-Token": me.csrfToken },
				body: JSON.stringify({ processor: null, name: "Renamed", weight: 0 }),
			});
			return [res.status, (await res.json()).message];
		}, midA);

		// Assert
		expect(conflict).toBe(LIVE_KEY_IN_SANDBOX);
		expect(kept).toBe("1797a841fbb37ca7-AdyenDemo");
		expect(badShape).toBe(BAD_HMAC_KEY);
		expect(wider).toEqual([400, "name is not allowed; weight is not allowed"]);
		expect(await processorShown(page, "MID A")).toBe("Sandbox");
		expect((await midsOf(shop)).map(m => [m.name, m.weight, m.processor])).toEqual([
			["MID A", 1, { type: "sandbox" }],
			["MID B", 1, { type: "sandbox" }],
		]);
		expect(html).not.toContain(apiKey);
	}, 90_000);

	test("When a viewer opens Merchant accounts, then each MID's processor shows without the form, and a change its page's script makes anyway is refused", async () => {
		// Arrange
		const shop = await createShop(app);
		const [midA, midB] = shop.mids;
		await admin(app)
			.patch(`/accounts/${shop.accountId}/merchant-accounts/${midB}`, {
				processor: { type: "stripe", secretKey: "sk_test_51ViewerKey0abcd" },
			})
			.expect(200);
		const { page } = await midsPage(shop, "viewer");

		// Act
		const shown = [await processorShown(page, "MID A"), await processorShown(page, "MID B")];
		const forced = await page.evaluate(async midId => {
			const me = await (await fetch("/dashboard/api/me")).json();
			const res = await fetch(`/dashboard/api/merchant-accounts/${midId}/processor`, {
				method: "PATCH",
				headers: { "Content-Type": "application/json", "X-CSRF-Token": me.csrfToken },
				body: JSON.stringify({ processor: null }),
			});
			return [res.status, (await res.json()).message];
		}, midA);
		await shot(page, "mid-processor-viewer");

		// Assert
		expect(shown).toEqual(["Sandbox", "Stripe (test, …abcd)"]);
		expect(await page.getByRole("form", { name: FORM }).count()).toBe(0);
		expect(await page.getByRole("button", { name: "Set processor" }).count()).toBe(0);
		expect(forced).toEqual([403, "Only an operator may do this"]);
		expect((await midsOf(shop)).map(m => m.processor)).toEqual([
			{ type: "sandbox" },
			{ type: "stripe", keyMode: "test", secretKeyLast4: "abcd", webhookSecretLast4: null },
		]);
	}, 90_000);

	test("When the Merchant accounts page is 360 px wide, then each control shown has an accessible name, whichever processor is chosen, and nothing overflows sideways", async () => {
		// Arrange
		const shop = await createShop(app);
		const { page } = await midsPage(shop, "operator", 360);
		/** The name of each control the page shows (its label's text, or its aria-label; null for none), and how far the page overflows sideways. */
		const layout = () =>
			page.evaluate(() => {
				const shown = Array.from(document.querySelectorAll("#view input, #view select, #view textarea")).filter(
					c => c.getClientRects().length,
				);
				const label = (c: Element) =>
					(c.id ? document.querySelector(`label[for="${c.id}"]`)?.textContent : null) ?? c.getAttribute("aria-label");
				return { names: shown.map(label), overflow: document.documentElement.scrollWidth - window.innerWidth };
			});
		const choose = async (kind: string) => {
			await page.getByLabel("Processor", { exact: true }).selectOption(kind);
			return layout();
		};

		// Act
		const sandbox = await layout();
		const stripe = await choose("stripe");
		const adyen = await choose("adyen");
		await shot(page, "mid-processor-narrow");
		const none = await choose("none");

		// Assert
		expect({ sandbox: sandbox.names, stripe: stripe.names, adyen: adyen.names, none: none.names }).toEqual({
			sandbox: ["MID", "Processor"],
			stripe: ["MID", "Processor", "Secret key", "Webhook signing secret (optional)"],
			adyen: ["MID", "Processor", "API key", "Merchant account", "Live URL prefix (live platform only)", "HMAC key (optional)"],
			none: ["MID", "Processor"],
		});
		expect(Math.max(sandbox.overflow, stripe.overflow, adyen.overflow, none.overflow)).toBeLessThanOrEqual(0);
	}, 90_000);
});
