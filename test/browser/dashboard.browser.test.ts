// The merchant dashboard in Chromium (issue 18): an operator signs in with
// the keyboard, finds a customer by email, refunds part of a transaction,
// sees the REFUND event and its webhook delivery, and unsubscribes the
// customer; a viewer cannot refund nor read the audit log; a page's own script cannot change
// anything without the CSRF token nor reach another account; repeated failed
// sign-ins lock the email. Every page is saved to test-output/.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type Mailpit, startMailpit } from "../../dev/mailpit";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { waitForEmails } from "../factories/mailbox";
import { admin, bearer } from "../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../factories/webhook-receiver";
import { startApp, type TestApp } from "../setup/app";
import { launchChromium, PROJECT_ROOT, shownMoney } from "./browser";

const PASSWORD = "a long dashboard password";
const WAIT = { timeout: 30_000 };
const OUTPUT = path.join(PROJECT_ROOT, "test-output");

let browser: Browser;
let app: TestApp;
let receiver: WebhookReceiver;
let shop: Shop;
let other: Shop;
let context: BrowserContext;
let mailpit: Mailpit;

beforeAll(async () => {
	mkdirSync(OUTPUT, { recursive: true });
	browser = await launchChromium();
	mailpit = await startMailpit();
	app = await startApp({ env: { DASHBOARD_LOCKOUT_FAILURES: "3", SMTP_URL: mailpit.smtpUrl } });
	receiver = await startWebhookReceiver();
	[shop, other] = await Promise.all([createShop(app), createShop(app)]);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
}, 60_000);

afterAll(async () => {
	await browser?.close();
	await receiver?.stop();
	await app?.stop();
	await mailpit?.stop();
});

beforeEach(async () => {
	context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
});
afterEach(async () => {
	await context?.close();
});

let users = 0;
async function newUser(who: Shop, role: "viewer" | "operator"): Promise<string> {
	const email = `${role}-${++users}-${Date.now()}@shop.example.com`;
	await admin(app).post(`/accounts/${who.accountId}/dashboard-users`, { email, role, password: PASSWORD }).expect(201);
	return email;
}

async function paidCustomer(who: Shop): Promise<{ customerId: number; email: string }> {
	// Base 36: decimal digits joined by dashes could read as a card number, which the checkout refuses in any field.
	const email = `buyer-${Date.now().toString(36)}-${++users}@example.com`;
	const res = await submitCheckout(app, who, { productId: who.products.oneOff, card: CARDS.visa, email });
	return { customerId: res.body.customerId, email };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(OUTPUT, `dashboard-${name}.png`), fullPage: true });

/** Signs in with the keyboard only: Tab to each field, type, Enter. */
async function signIn(page: Page, email: string): Promise<void> {
	await page.goto(`${app.url}/dashboard/`);
	await page.getByLabel("Email").waitFor(WAIT);
	await page.getByLabel("Email").focus();
	await page.keyboard.type(email);
	await page.keyboard.press("Tab");
	await page.keyboard.type(PASSWORD);
	await page.keyboard.press("Enter");
	await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
}

const statusText = (page: Page) => page.locator("#status").textContent();

/** What a customer's details say for a term ("Quantity"). */
const detail = (page: Page, term: string) =>
	page
		.locator("dt", { hasText: new RegExp(`^${term}$`) })
		.locator("xpath=following-sibling::dd[1]")
		.textContent();
const details = async (page: Page, ...terms: string[]) => Promise.all(terms.map(term => detail(page, term)));
const CHANGE_TERMS = ["Product", "Quantity", "Credit", "Pending change"];

describe("The dashboard in Chromium", () => {
	test("When an operator turns emails on in the dashboard, then a buyer's receipt arrives and the customer's page lists it as SENT; a viewer sees the settings but cannot change them", async () => {
		// Arrange
		const own = await createShop(app);
		const page = await context.newPage();
		await signIn(page, await newUser(own, "operator"));

		// Act: the Emails page, with the keyboard where a form is.
		await page.getByRole("link", { name: "Emails" }).click();
		await page.getByRole("heading", { name: "Emails to buyers" }).waitFor(WAIT);
		await page.getByLabel("Send emails to buyers").check();
		await page.getByLabel(/Sender address/).fill("billing@shop.example");
		await page.getByLabel(/Sender name/).fill("Dashboard Shop");
		await page.getByRole("button", { name: "Save" }).click();
		await page.getByText("Email settings saved.").waitFor(WAIT);
		await shot(page, "emails");
		const buyer = await paidCustomer(own);
		const received = await waitForEmails(mailpit, buyer.email, 1, 0);
		await page.goto(`${app.url}/dashboard/#/customer/${buyer.customerId}`);
		await page.getByRole("cell", { name: "SENT", exact: true }).waitFor(WAIT);
		await shot(page, "customer-emails");
		// Another browser: its own session.
		const viewerContext = await browser.newContext({ viewport: { width: 1100, height: 800 } });
		const viewer = await viewerContext.newPage();
		await signIn(viewer, await newUser(own, "viewer"));
		await viewer.getByRole("link", { name: "Emails" }).click();
		await viewer.getByRole("heading", { name: "Emails to buyers" }).waitFor(WAIT);

		// Assert
		expect(received.map(e => [e.from.Name, e.from.Address, e.subject])).toEqual([
			["Dashboard Shop", "billing@shop.example", expect.stringMatching(/^Your receipt from Dashboard Shop \(INV-\d{4}-\d{6}\)$/)],
		]);
		expect(await page.getByRole("cell", { name: /^Your receipt from Dashboard Shop/ }).count()).toBe(1);
		expect(await viewer.getByLabel("Send emails to buyers").isChecked()).toBe(true);
		expect(await viewer.getByLabel("Send emails to buyers").isDisabled()).toBe(true);
		expect(await viewer.getByRole("button", { name: "Save" }).count()).toBe(0);
		await viewerContext.close();
	});

	test("When an operator finds a customer by email, refunds part of a transaction and unsubscribes it, then the REFUND event and its delivery show and the customer is UNSUBSCRIBED", async () => {
		// Arrange
		const page = await context.newPage();
		const buyer = await paidCustomer(shop);
		await signIn(page, await newUser(shop, "operator"));
		await page.getByRole("link", { name: "Customers" }).click();
		await page.getByRole("heading", { name: "Customers" }).waitFor(WAIT);
		await shot(page, "customers");

		// Act: find, open, refund 4.00 of the 25.00 charge (the confirmation shows the amount).
		await page.getByRole("textbox", { name: "Email" }).fill(buyer.email);
		await page.getByRole("button", { name: "Show" }).click();
		await page.getByRole("link", { name: String(buyer.customerId), exact: true }).click();
		await page.getByRole("heading", { name: `Customer ${buyer.customerId}` }).waitFor(WAIT);
		await page.getByRole("button", { name: "Refund" }).waitFor(WAIT);
		expect(
			await page
				.getByRole("definition")
				.filter({ hasText: /^none$/ })
				.count(),
		).toBe(1);
		await shot(page, "customer");
		await page.getByLabel(/Amount to refund of transaction/).fill("4.00");
		await page.getByRole("button", { name: "Refund" }).click();
		const confirmation = await page.locator("#confirm-text").textContent();
		await page.getByRole("button", { name: "Confirm" }).click();
		await page.getByText("Refund success with amount 4").waitFor(WAIT);
		await shot(page, "refunded");

		// Assert: the event and the delivery.
		await page.getByRole("link", { name: "Events" }).click();
		await page.getByRole("cell", { name: "REFUND", exact: true }).waitFor(WAIT);
		await shot(page, "events");
		await page.getByRole("link", { name: "Webhooks" }).click();
		await page.getByRole("cell", { name: "REFUND", exact: true }).first().waitFor(WAIT);
		await shot(page, "webhooks");
		await page.getByRole("link", { name: "Transactions" }).click();
		await page.getByRole("cell", { name: "REFUNDED", exact: true }).first().waitFor(WAIT);
		// The charge's 3-D Secure authentication (docs/authentication.md): none asked for this card.
		await page.getByRole("columnheader", { name: "Authentication" }).waitFor(WAIT);
		await page.getByRole("cell", { name: "NOT_REQUIRED", exact: true }).first().waitFor(WAIT);
		await shot(page, "transactions");
		await page.getByRole("link", { name: "Test clock" }).click();
		await page.getByRole("heading", { name: "Test clock" }).waitFor(WAIT);
		await shot(page, "clock");
		await page.getByRole("link", { name: "Products" }).click();
		await page.getByRole("heading", { name: "Products" }).waitFor(WAIT);
		await shot(page, "products");
		await page.getByRole("link", { name: "Audit log" }).click();
		await page.getByRole("cell", { name: "refund", exact: true }).waitFor(WAIT);
		await shot(page, "audit");

		// Act: unsubscribe, confirmed.
		await page.goto(`${app.url}/dashboard/#/customer/${buyer.customerId}`);
		await page.getByRole("button", { name: "Unsubscribe" }).click();
		await page.getByRole("button", { name: "Confirm" }).click();
		await page.getByText(`Customer ${buyer.customerId} unsubscribed`).waitFor(WAIT);

		// Assert
		const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${buyer.customerId}/transactions`)).body;
		expect(confirmation).toBe(`Refund 4.00 EUR of transaction ${charge.id} (€25.00 charged)?`);
		await page.getByRole("definition").filter({ hasText: "UNSUBSCRIBED" }).waitFor(WAIT);
		const transactions = (await admin(app).get(`/accounts/${shop.accountId}/customers/${buyer.customerId}/transactions`)).body;
		expect(transactions.map((t: { type: string; amount: number }) => [t.type, t.amount])).toEqual([
			["SUBSCRIPTION_START", 25],
			["REFUNDED", -4],
		]);
	});

	test("When an operator pauses a customer until a date and then resumes it, then the customer reads PAUSED with its resume date, then ACTIVE, and the audit log names both", async () => {
		// Arrange: a monthly subscription (a one-off product has nothing to pause).
		const page = await context.newPage();
		const email = `buyer-${Date.now().toString(36)}-${++users}@example.com`;
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa, email })).body;
		await signIn(page, await newUser(shop, "operator"));
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("button", { name: "Pause" }).waitFor(WAIT);

		// Act: pause until a date 30 days ahead (in the browser's time zone, as the buyer's operator types it), confirmed.
		const resumeOn = await page.evaluate(() => {
			const at = new Date(Date.now() + 30 * 86_400_000);
			const two = (n: number) => String(n).padStart(2, "0");
			return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}T${two(at.getHours())}:${two(at.getMinutes())}`;
		});
		await page.getByLabel("Resume on (optional)").fill(resumeOn);
		await page.getByRole("button", { name: "Pause" }).click();
		const confirmation = await page.locator("#confirm-text").textContent();
		await page.getByRole("button", { name: "Confirm" }).click();
		await page.getByText(`Customer ${customerId} paused`).waitFor(WAIT);
		await page.getByRole("definition").filter({ hasText: "PAUSED" }).waitFor(WAIT);
		const paused = await page
			.getByRole("definition")
			.filter({ hasText: /^since / })
			.textContent();
		await shot(page, "customer-paused");

		// Act: resume.
		await page.getByRole("button", { name: "Resume" }).click();
		await page.getByText(`Customer ${customerId} resumed`).waitFor(WAIT);
		await page.getByRole("definition").filter({ hasText: "ACTIVE" }).waitFor(WAIT);
		await shot(page, "customer-resumed");

		// Assert
		expect(confirmation).toBe(`Pause customer ${customerId} (${email}) until ${resumeOn.replace("T", " ")}? No renewal runs meanwhile.`);
		expect(paused).toMatch(/^since \S+, resumes \d{4}-\d\d-\d\dT\d\d:\d\d:00/);
		await page.getByRole("link", { name: "Audit log" }).click();
		await page.getByRole("cell", { name: "resume", exact: true }).waitFor(WAIT);
		const audit = (await page.locator("tbody tr").allTextContents()).filter(row => row.includes(`customer ${customerId}`));
		expect(audit.some(row => row.includes("pause"))).toBe(true);
		expect(audit.some(row => row.includes("resume"))).toBe(true);
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop))).body;
		expect(customer).toMatchObject({ status: "ACTIVE", pause: null });
	}, 90_000);

	test("When an operator quotes 3 seats now prorated and confirms, then the quote's lines and charge show, the customer has 3 seats and a SUBSCRIPTION_CHANGE, and a change scheduled for the period's end can be cancelled, each in the audit log", async () => {
		// Arrange: a monthly subscription of 1 seat (9.99 EUR).
		const page = await context.newPage();
		const email = `buyer-${Date.now().toString(36)}-${++users}@example.com`;
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa, email })).body;
		await signIn(page, await newUser(shop, "operator"));
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByRole("button", { name: "Quote" }).waitFor(WAIT);
		const before = await details(page, ...CHANGE_TERMS);

		// Act: 3 seats, now and prorated (the default), quoted and confirmed with the keyboard.
		await page.getByLabel("Quantity").fill("3");
		await page.keyboard.press("Enter");
		await page.locator("table.totals").waitFor(WAIT);
		const lines = await page
			.locator("table.quote tbody tr")
			.evaluateAll(rows => rows.map(row => Array.from(row.querySelectorAll("td"), td => td.textContent)));
		const charge = await page
			.getByRole("row", { name: /^Charged to the card now/ })
			.getByRole("cell")
			.textContent();
		await shot(page, "customer-change-quote");
		await page.keyboard.press("Enter");
		await page.getByText(`Customer ${customerId} changed: `).waitFor(WAIT);
		await page.getByRole("cell", { name: "SUBSCRIPTION_CHANGE", exact: true }).waitFor(WAIT);
		const changed = await details(page, ...CHANGE_TERMS);
		const changedStatus = await statusText(page);
		await shot(page, "customer-changed");

		// Act: 2 seats at the period's end, then that change cancelled.
		await page.getByLabel("Quantity").fill("2");
		await page.getByLabel("When").selectOption({ label: "At the period's end" });
		await page.getByRole("button", { name: "Quote" }).click();
		await page.getByRole("button", { name: "Confirm change" }).click();
		await page.getByText(`Customer ${customerId}: change scheduled for `).waitFor(WAIT);
		const scheduled = await details(page, ...CHANGE_TERMS);
		await shot(page, "customer-change-scheduled");
		await page.getByRole("button", { name: "Cancel pending change" }).click();
		await page.getByText(`Customer ${customerId}: the pending change is cancelled`).waitFor(WAIT);
		const cancelled = await details(page, ...CHANGE_TERMS);

		// Assert: what the page showed.
		const product = `P (${shop.products.charge})`;
		expect(before).toEqual([product, "1", "€0.00", "–"]);
		const date = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
		expect(lines).toEqual([
			["Unused time credit", product, "1", "€9.99", date, date, expect.stringMatching(/^-€\d+\.\d\d$/)],
			["New plan charge", product, "3", "€9.99", date, date, expect.stringMatching(/^€\d+\.\d\d$/)],
		]);
		expect(charge).toMatch(/^€\d+\.\d\d$/);
		expect(changed).toEqual([product, "3", "€0.00", "–"]);
		expect(scheduled).toEqual([
			product,
			"3",
			"€0.00",
			expect.stringMatching(new RegExp(`^P \\(${shop.products.charge}\\) × 2 from \\d{4}-`)),
		]);
		expect(cancelled).toEqual([product, "3", "€0.00", "–"]);
		// Assert: what the API holds, and the audit log.
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop))).body;
		expect(customer).toMatchObject({ status: "ACTIVE", quantity: 3, pendingChange: null });
		const transactions = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop))).body.data;
		const change = transactions.find((t: { type: string }) => t.type === "SUBSCRIPTION_CHANGE");
		expect(shownMoney(change.amount, "EUR")).toBe(charge);
		expect(changedStatus).toBe(`Customer ${customerId} changed: ${charge} charged`);
		await page.getByRole("link", { name: "Audit log" }).click();
		await page.getByRole("cell", { name: "cancel change", exact: true }).waitFor(WAIT);
		const audit = (await page.locator("tbody tr").allTextContents()).filter(row => row.includes(`customer ${customerId}`));
		const changes = audit.filter(row => row.includes("change subscription"));
		expect(changes.length).toBe(2);
		expect(changes.join("\n")).toContain(
			`now_prorated: product ${shop.products.charge} × 1 → product ${shop.products.charge} × 3; charged ${change.amount} EUR`,
		);
		expect(audit.filter(row => row.includes("cancel change")).length).toBe(1);
		await shot(page, "audit-changes");
	}, 90_000);

	test("When an operator makes a card update link and the customer opens it, then the customer gives a new card in the hosted frame", async () => {
		// Arrange
		const page = await context.newPage();
		const buyer = await paidCustomer(shop);
		await signIn(page, await newUser(shop, "operator"));
		await page.goto(`${app.url}/dashboard/#/customer/${buyer.customerId}`);

		// Act: the operator makes the link; the customer opens it in another browser.
		await page.getByRole("button", { name: "Card update link" }).click();
		const link = (await page.locator(".link code").textContent({ timeout: 30_000 })) ?? "";
		await shot(page, "card-update-link");
		const customerContext = await browser.newContext();
		try {
			const customerPage = await customerContext.newPage();
			await customerPage.goto(link);
			const frame = customerPage.frameLocator("iframe");
			// Typed once the frame's script runs: it reports its height then (the SDK starts the iframe at 480 px).
			await customerPage.waitForFunction(
				() => {
					const iframe = document.querySelector("iframe");
					return iframe !== null && iframe.style.height !== "480px";
				},
				null,
				WAIT,
			);
			await frame.getByLabel("Card number").pressSequentially("5555 5555 5555 4444", WAIT);
			await frame.getByLabel("Expiry").fill("12/34");
			await frame.getByLabel("Security code").fill("123");
			await frame.getByRole("button", { name: "Update card" }).click(WAIT);
			await customerPage.getByText("Your card is updated.").waitFor(WAIT);
			await customerPage.screenshot({ path: path.join(OUTPUT, "dashboard-card-updated.png"), fullPage: true });
		} finally {
			await customerContext.close();
		}

		// Assert
		expect(link).toMatch(new RegExp(`^${app.url}/update-card/#[A-Za-z0-9_-]{43}$`));
		const customer = (await admin(app).get(`/accounts/${shop.accountId}/customers`)).body.find(
			(c: { id: number }) => c.id === buyer.customerId,
		);
		expect(customer).toMatchObject({ cardBin: "555555", cardType: "mastercard" });
	}, 90_000);

	test("When a viewer opens a customer, then no refund or unsubscribe is offered, and a refund its page sends anyway is refused", async () => {
		const page = await context.newPage();
		const buyer = await paidCustomer(shop);
		await signIn(page, await newUser(shop, "viewer"));

		await page.goto(`${app.url}/dashboard/#/customer/${buyer.customerId}`);
		await page.getByRole("heading", { name: "Transactions" }).waitFor(WAIT);
		await page.getByRole("cell", { name: "SUBSCRIPTION_START" }).waitFor(WAIT);
		const forced = await page.evaluate(async customerId => {
			const me = await (await fetch("/dashboard/api/me")).json();
			const tx = (await (await fetch(`/dashboard/api/customers/${customerId}/transactions`)).json()).data[0];
			const res = await fetch(`/dashboard/api/transactions/${tx.id}/refund`, {
				method: "POST",
				headers: { "Content-Type": "application/json", "X-CSRF-Token": me.csrfToken },
				body: "{}",
			});
			return res.status;
		}, buyer.customerId);

		expect(await page.getByRole("button", { name: "Refund" }).count()).toBe(0);
		expect(await page.getByRole("button", { name: "Unsubscribe" }).count()).toBe(0);
		expect(forced).toBe(403);
	});

	test("When a viewer opens the audit log's address, then the page shows the home page instead, offers no audit log, and its API answers 403", async () => {
		const page = await context.newPage();
		await signIn(page, await newUser(shop, "viewer"));

		// A fresh load of the address, as from a bookmark: the page routes once it knows the user.
		await page.goto("about:blank");
		await page.goto(`${app.url}/dashboard/#/audit`);
		await page.locator("#view h1").waitFor(WAIT);
		const status = await page.evaluate(async () => (await fetch("/dashboard/api/audit")).status);

		expect(await page.locator("#view h1").textContent()).toBe("Home");
		expect(await page.getByRole("link", { name: "Audit log" }).isVisible()).toBe(false);
		expect(status).toBe(403);
	});

	test("When a page's script changes something without the CSRF token, or names another account's customer, then it is refused and nothing changes", async () => {
		const page = await context.newPage();
		const mine = await paidCustomer(shop);
		const theirs = await paidCustomer(other);
		await signIn(page, await newUser(shop, "operator"));

		const answers = await page.evaluate(
			async ({ mineId, theirsId }) => {
				const noCsrf = await fetch(`/dashboard/api/customers/${mineId}/unsubscribe`, { method: "POST" });
				const me = await (await fetch("/dashboard/api/me")).json();
				const cross = await fetch(`/dashboard/api/customers/${theirsId}/unsubscribe`, {
					method: "POST",
					headers: { "X-CSRF-Token": me.csrfToken },
				});
				const read = await fetch(`/dashboard/api/customers/${theirsId}`);
				return { noCsrf: `${noCsrf.status} ${await noCsrf.text()}`, cross: await cross.json(), read: await read.text() };
			},
			{ mineId: mine.customerId, theirsId: theirs.customerId },
		);

		expect(answers.noCsrf).toMatch(/^403 /);
		expect(answers.cross).toEqual({ success: false, message: `Customer not found with ID: ${theirs.customerId}` });
		expect(answers.read).toBe("");
		expect(
			(await admin(app).get(`/accounts/${shop.accountId}/customers`)).body.find((c: { id: number }) => c.id === mine.customerId).status,
		).toBe("ACTIVE");
		expect(
			(await admin(app).get(`/accounts/${other.accountId}/customers`)).body.find((c: { id: number }) => c.id === theirs.customerId).status,
		).toBe("ACTIVE");
	});

	test("When sign-in fails 3 times, then the page says the email is locked, even for the right password", async () => {
		const page = await context.newPage();
		const email = await newUser(shop, "operator");
		await page.goto(`${app.url}/dashboard/`);

		for (let i = 0; i < 3; i++) {
			await page.getByLabel("Email").fill(email);
			await page.getByLabel("Password").fill("not the password");
			await page.getByRole("button", { name: "Sign in" }).click();
			await page.getByText("Email or password is wrong").waitFor(WAIT);
			await page.locator("#status").evaluate(node => {
				node.textContent = "";
			});
		}
		await page.getByLabel("Email").fill(email);
		await page.getByLabel("Password").fill(PASSWORD);
		await page.getByRole("button", { name: "Sign in" }).click();
		await page.getByText("Too many failed sign-ins").waitFor(WAIT);
		await shot(page, "locked");

		expect(await statusText(page)).toBe("Too many failed sign-ins: try again in a few minutes");
		expect(await page.getByRole("navigation", { name: "Sections" }).isVisible()).toBe(false);
	});

	test("When the dashboard is 360 px wide, then nothing overflows sideways and every control has a label, on the customers and on a customer's change form with a quote", async () => {
		await context.close();
		context = await browser.newContext({ viewport: { width: 360, height: 740 } });
		const page = await context.newPage();
		await paidCustomer(shop);
		const email = `buyer-${Date.now().toString(36)}-${++users}@example.com`;
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa, email })).body;
		await signIn(page, await newUser(shop, "operator"));
		await page.getByRole("link", { name: "Customers" }).click();
		await page.getByRole("cell").first().waitFor(WAIT);
		await shot(page, "narrow");
		const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		const unlabelled = () =>
			page.evaluate(
				() =>
					Array.from(document.querySelectorAll("input, select")).filter(
						el => !(el.getAttribute("aria-label") || (el.id && document.querySelector(`label[for="${el.id}"]`))),
					).length,
			);
		const list = { overflow: await overflow(), unlabelled: await unlabelled() };
		// A customer's page with its change form and a quote (its table scrolls inside its own box).
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		await page.getByLabel("Quantity").fill("2");
		await page.getByRole("button", { name: "Quote" }).click();
		await page.locator("table.totals").waitFor(WAIT);
		await shot(page, "narrow-change");
		const customer = { overflow: await overflow(), unlabelled: await unlabelled() };

		expect(list.overflow).toBeLessThanOrEqual(0);
		expect(list.unlabelled).toBe(0);
		expect(customer.overflow).toBeLessThanOrEqual(0);
		expect(customer.unlabelled).toBe(0);
	});

	test("When an operator turns the customer portal on and picks what buyers may do, then the settings are saved as shown, and the customer's page lists what the buyer did in the portal", async () => {
		// Arrange
		const own = await createShop(app);
		const page = await context.newPage();
		await signIn(page, await newUser(own, "operator"));

		// Act: the Portal page
		await page.getByRole("link", { name: "Portal" }).click();
		await page.getByRole("heading", { name: "Customer portal" }).waitFor(WAIT);
		await page.getByLabel("Portal on").check();
		await page.getByLabel("Pause and resume").check();
		await page.getByLabel("Cancel", { exact: true }).selectOption("period_end_or_now");
		await page.getByLabel("Return domains (comma separated)").fill("shop.example.com, my.shop.example.com");
		await page.getByRole("button", { name: "Save" }).click();
		await page.getByText("Portal settings saved.").waitFor(WAIT);
		await shot(page, "portal-settings");
		const settings = (await admin(app).get(`/accounts/${own.accountId}`).expect(200)).body.portal;

		// Act: a buyer cancels at the period's end in the portal; the customer's page shows it
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge, card: CARDS.visa })).body;
		const link = (await app.http().post(`/api/customer/${customerId}/portal-session`).set(bearer(own)).send({}).expect(200)).body.url;
		const opened = await app
			.http()
			.post("/portal/api/open")
			.set("Origin", app.url)
			.send({ token: link.split("#")[1] })
			.expect(200);
		const cookie = String(opened.headers["set-cookie"]).split(";")[0];
		const csrf = (await app.http().get("/portal/api/me").set("Cookie", cookie).expect(200)).body.csrfToken;
		await app
			.http()
			.post(`/portal/api/subscriptions/${customerId}/cancel`)
			.set({ Cookie: cookie, Origin: app.url, "X-CSRF-Token": csrf })
			.send({ when: "period_end", reason: "unused" })
			.expect(200);
		await page.goto(`${app.url}/dashboard/#/customer/${customerId}`);
		const row = page.getByRole("row", { name: /CANCELLATION_SCHEDULED/ });
		for (let i = 0; i < 50 && (await row.count()) === 0; i++) {
			await page.waitForTimeout(200);
			await page.reload();
		}

		// Assert
		expect(settings).toMatchObject({
			enabled: true,
			pause: true,
			cancel: "period_end_or_now",
			returnDomains: ["shop.example.com", "my.shop.example.com"],
		});
		await expect(row.textContent()).resolves.toMatch(/the buyer \(portal\).*unused/);
		expect(await detail(page, "Cancels at")).not.toBe("–");
		await shot(page, "customer-portal-events");
	});
});
