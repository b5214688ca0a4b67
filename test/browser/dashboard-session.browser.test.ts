// A dashboard session's idle limit in Chromium (issue 22), with a short one
// (DASHBOARD_IDLE_MINUTES=0.1, 6 s): a user who keeps working stays signed in
// well past the limit, in the browser and on the server; one who stops for
// the limit is asked to sign in again at the next click.
import type { Browser, Page, Response } from "playwright-core";
import { createShop } from "../factories/checkout";
import { admin } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const IDLE_MS = 6000;

let browser: Browser;
let app: TestApp;

beforeAll(async () => {
	browser = await launchChromium();
	app = await startApp({ env: { DASHBOARD_IDLE_MINUTES: String(IDLE_MS / 60_000) } });
}, 60_000);

afterAll(async () => {
	await browser?.close();
	await app?.stop();
});

/** Clicks a section of the navigation and answers the status of the API request it made; 0 when signed out (no navigation). */
async function open(page: Page, section: string): Promise<number> {
	const link = page.getByRole("link", { name: section });
	if (!(await link.isVisible())) return 0;
	const [response] = await Promise.all([
		page.waitForResponse((r: Response) => r.url().includes("/dashboard/api/"), WAIT),
		link.click(WAIT),
	]);
	return response.status();
}

describe("A dashboard session's idle limit in Chromium", () => {
	test("When a user works without a break for longer than the idle limit, then the session holds; when the user then stops for the limit, then the next click asks to sign in again", async () => {
		// Arrange
		const shop = await createShop(app);
		const email = `steady-${Date.now()}@shop.example.com`;
		await admin(app).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role: "viewer", password: PASSWORD }).expect(201);
		const context = await browser.newContext();
		const page = await context.newPage();
		await page.goto(`${app.url}/dashboard/`);
		await page.getByLabel("Email").fill(email);
		await page.getByLabel("Password").fill(PASSWORD);
		await page.getByRole("button", { name: "Sign in" }).click();
		await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);

		try {
			// Act: a request about every half second for two and a half idle limits (each gap far below the limit).
			const working: number[] = [];
			const start = Date.now();
			while (Date.now() - start < 2.5 * IDLE_MS && !working.some(status => status !== 200)) {
				working.push(await open(page, working.length % 2 === 0 ? "Products" : "Customers"));
				await page.waitForTimeout(500);
			}
			const cookie = (await context.cookies()).find(c => c.name === "dashboard_session");
			const last = working.length % 2 === 0 ? "Products" : "Customers";
			// Then a break longer than the limit: no request at all.
			await page.waitForTimeout(IDLE_MS + 1000);
			const afterBreak = await open(page, last);
			await page.getByText("Your session ended: sign in again.").waitFor(WAIT);

			// Assert
			expect(new Set(working)).toEqual(new Set([200]));
			expect(working.length).toBeGreaterThan(10);
			// A session cookie: the browser never drops it on a clock of its own; the server ends the session.
			expect(cookie?.expires).toBe(-1);
			expect(afterBreak).toBe(401);
			expect(await page.getByRole("navigation", { name: "Sections" }).isVisible()).toBe(false);
		} finally {
			await context.close();
		}
	}, 90_000);
});
