// Emails to buyers (docs/emails.md), read back from a real Mailpit: a receipt
// after a payment, the dunning sequence on the retry days with a last notice
// and a card update link that opens, the card-expiring warning, nothing when
// the account's emails are off, and an SMTP server that is down: retried, and
// each email arrives once when it is back. The receipt carries its invoice's
// PDF, which invoicing renders when it is sent: invoicing down delays the receipt,
// and past the retry window it goes with the invoice's link alone.

import { MongoClient } from "mongodb";
import { type Mailpit, startMailpit } from "../../../dev/mailpit";
import { freePort } from "../../../dev/net";
import { serviceSchemas } from "../../../runtime/services";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { signedIn } from "../../factories/dashboard-session";
import { attachmentBytes, type ReceivedEmail, waitForEmails } from "../../factories/mailbox";
import { admin, advanceClock, bearer, createMerchant } from "../../factories/merchant";
import { pdfText } from "../../factories/pdf-text";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "./webhook-events";

let app: TestApp;
let mailpit: Mailpit;
const PUBLIC_BASE_URL = "https://pay.example.test";
/** A receipt is sent on its payment's invoice (INVOICE_ISSUED): its subject names the invoice's number. */
const RECEIPT = expect.stringMatching(/^Your receipt from Shop Ltd \(INV-\d{4}-\d{6}\)$/);

beforeAll(async () => {
	mailpit = await startMailpit();
	app = await startApp({ env: { SMTP_URL: mailpit.smtpUrl, EMAIL_RETRY_BASE_MS: "300", PUBLIC_BASE_URL } });
});
afterAll(async () => {
	await app?.stop();
	await mailpit?.stop();
});

const EMAILS_ON = {
	enabled: true,
	from: "billing@shop.example",
	fromName: "Shop Ltd",
	replyTo: "help@shop.example",
	brandColor: "#0a7d5a",
};

async function shopWithEmails(emails: object | null = EMAILS_ON, on: TestApp = app): Promise<Shop> {
	const shop = await createShop(on);
	if (emails) await admin(on).patch(`/accounts/${shop.accountId}`, { emails }).expect(200);
	return shop;
}

async function subscribed(shop: Shop, options: { card?: string; expiry?: string } = {}, on: TestApp = app) {
	const email = uniqueEmail();
	const res = await submitCheckout(on, shop, { productId: shop.products.charge, email, ...options });
	expect(res.body.code).toBe("OK");
	return { email, customerId: res.body.customerId as number };
}

/** MMYY of the month `months` from now (UTC). */
function expiryIn(months: number): string {
	const at = new Date();
	at.setUTCDate(1);
	at.setUTCMonth(at.getUTCMonth() + months);
	return `${String(at.getUTCMonth() + 1).padStart(2, "0")}${String(at.getUTCFullYear() % 100).padStart(2, "0")}`;
}

describe("Emails to buyers", () => {
	test("When a buyer pays on an account with emails on, then one receipt arrives from the account's sender, with the amount in its currency", async () => {
		const shop = await shopWithEmails();

		const { email } = await subscribed(shop);
		const received = await waitForEmails(mailpit, email, 1);

		expect(received).toHaveLength(1);
		expect(received[0]).toMatchObject({
			from: { Name: "Shop Ltd", Address: "billing@shop.example" },
			to: [email],
			replyTo: ["help@shop.example"],
			subject: RECEIPT,
		});
		expect(received[0].text).toContain("We received your payment of €9.99 for P.");
		// The invoice's signed link, which the buyer opens without a token.
		const link = /View your invoice: (\S+)/.exec(received[0].text)?.[1] ?? "";
		expect(link).toMatch(/\/api\/buyer\/invoices\/\d+\/[\w-]+$/);
		const page = await app.http().get(new URL(link).pathname).expect(200);
		expect(page.text).toContain("INV-");
		expect(received[0].html).toContain("#0a7d5a");
		expect(received[0].text).not.toMatch(/4242/);
	});

	test("When an account writes in German, then the receipt is in German with the amount as German writes it", async () => {
		const shop = await shopWithEmails({ ...EMAILS_ON, language: "de" });

		const { email } = await subscribed(shop);
		const [receipt] = await waitForEmails(mailpit, email, 1);

		expect(receipt.subject).toMatch(/^Ihre Quittung von Shop Ltd \(INV-\d{4}-\d{6}\)$/);
		expect(receipt.text).toContain("9,99\u00a0€");
	});

	test("When the account's emails are off (the default), then no email is sent", async () => {
		const shop = await shopWithEmails(null);
		const control = await shopWithEmails();

		const { email, customerId } = await subscribed(shop);
		// Paid after it: once its receipt is in, the first payment's would have been too.
		const other = await subscribed(control);
		await waitForEmails(mailpit, other.email, 1);

		expect(await waitForEmails(mailpit, email, 0)).toEqual([]);
		expect((await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/emails`).expect(200)).body).toEqual([]);
	});

	test("When renewals are declined, then a dunning email follows each retry day with a card update link that opens, a last notice before the last try, and a suspension notice", async () => {
		// Arrange: retried 2 and 4 days after the first decline.
		const shop = await shopWithEmails();
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, { renewalRetryDays: [2, 4] })
			.expect(200);
		const { email } = await subscribed(shop, { card: CARDS.renewalsInsufficientFunds });
		// Its receipt in first: rendering the invoice's PDF takes a moment, and the renewal's email must come after it.
		await waitForEmails(mailpit, email, 1, 0);

		// Act: the renewal, its day-2 retry, its day-4 retry.
		await advanceClock(app, shop, 31);
		const afterFirst = await waitForEmails(mailpit, email, 2);
		await advanceClock(app, shop, 33.1);
		const afterSecond = await waitForEmails(mailpit, email, 3);
		await advanceClock(app, shop, 35.2);
		const all = await waitForEmails(mailpit, email, 4);

		// Assert
		expect(afterFirst.map(e => e.subject)).toEqual([RECEIPT, "Your payment to Shop Ltd did not go through"]);
		expect(afterSecond).toHaveLength(3);
		expect(all.map(e => e.subject)).toEqual([
			RECEIPT,
			"Your payment to Shop Ltd did not go through",
			"Last notice: your P subscription will be suspended",
			"Your P subscription is suspended",
		]);
		const link = /Update your card: (\S+)/.exec(all[1].text)?.[1] ?? "";
		expect(link.startsWith(`${PUBLIC_BASE_URL}/update-card/#`)).toBe(true);
		// The link's token opens a fresh card update session on the page that shows it.
		const opened = await app
			.http()
			.post("/api/card-update-link")
			.set("Host", "pay.example.test")
			.send({ token: link.split("#")[1] });
		expect(opened.status).toBe(200);
		expect(opened.body.sessionId).toMatch(/^[0-9a-f-]{36}$/);
	});

	test("When a renewal is hard-declined (a lost card), then the buyer is told at once that the subscription is suspended, with a card update link", async () => {
		const shop = await shopWithEmails();
		const { email } = await subscribed(shop, { card: CARDS.renewalsLostCard });
		await waitForEmails(mailpit, email, 1, 0);

		await advanceClock(app, shop, 31);
		const received = await waitForEmails(mailpit, email, 2);

		expect(received.map(e => e.subject)).toEqual([RECEIPT, "Your P subscription is suspended"]);
		expect(received[1].text).toContain(`Update your card: ${PUBLIC_BASE_URL}/update-card/#`);
		expect(received[1].html).toContain(`href="${PUBLIC_BASE_URL}/update-card/#`);
	});

	test("When a MID refuses a renewal and another MID charges it an hour later, then the buyer gets the renewal's receipt and no dunning email", async () => {
		const shop = await shopWithEmails();
		const { email } = await subscribed(shop, { card: CARDS.renewalsRefusedByFirstMid });

		await advanceClock(app, shop, 32);
		await advanceClock(app, shop, 32.1);
		const received = await waitForEmails(mailpit, email, 2);

		expect(received.map(e => e.subject)).toEqual([RECEIPT, RECEIPT]);
	});

	test("When a renewal will fall after the card's expiry, then the buyer is warned once, with a card update link", async () => {
		const shop = await shopWithEmails();
		const { email } = await subscribed(shop, { expiry: expiryIn(1) });

		await advanceClock(app, shop, 33);
		const received = await waitForEmails(mailpit, email, 3);

		const warnings = received.filter(e => e.subject === "Your card for P is about to expire");
		expect(warnings).toHaveLength(1);
		expect(warnings[0].text).toContain("/update-card/#");
	});

	test("When the SMTP server is down, then the emails are retried and each arrives once when it is back", async () => {
		const shop = await shopWithEmails();
		await mailpit.stop();

		const buyers = [await subscribed(shop), await subscribed(shop), await subscribed(shop)];
		await new Promise(r => setTimeout(r, 1500));
		await mailpit.start();

		for (const { email } of buyers) {
			const received = await waitForEmails(mailpit, email, 1, 0);
			expect(received.map(e => e.subject)).toEqual([RECEIPT]);
		}
		// Long enough for any retry still scheduled to have gone out.
		await new Promise(r => setTimeout(r, 3000));
		for (const { email } of buyers) expect(await waitForEmails(mailpit, email, 1, 0)).toHaveLength(1);
		// Tried while it was down (the first attempt at least), sent once it was back.
		for (const { customerId } of buyers) {
			const [receipt] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/emails`).expect(200)).body;
			expect(receipt).toMatchObject({ kind: "RECEIPT", status: "SENT", lastError: null });
			expect(receipt.attempts).toBeGreaterThanOrEqual(2);
		}
	});
});

describe("Operators see a customer's emails and set an account's", () => {
	test("When a receipt was sent, then the admin API and the dashboard list it with its status and subject, and another account sees none", async () => {
		const shop = await shopWithEmails();
		const { email, customerId } = await subscribed(shop);
		await waitForEmails(mailpit, email, 1, 0);

		const listed = await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/emails`).expect(200);
		const viewer = await signedIn(app, shop, "viewer");
		const inDashboard = await viewer.get(`/customers/${customerId}/emails`).expect(200);
		const other = await createMerchant(app);
		const elsewhere = await admin(app).get(`/accounts/${other.accountId}/customers/${customerId}/emails`).expect(200);

		expect(listed.body).toEqual([
			expect.objectContaining({
				kind: "RECEIPT",
				to: email,
				status: "SENT",
				subject: RECEIPT,
				attempts: 1,
				lastError: null,
			}),
		]);
		expect(inDashboard.body).toEqual(listed.body);
		expect(elsewhere.body).toEqual([]);
	});

	test("When an operator sets the email settings in the dashboard, then a viewer reads them and may not change them", async () => {
		const shop = await createShop(app);
		const operator = await signedIn(app, shop, "operator");
		const viewer = await signedIn(app, shop, "viewer");

		const set = await operator.send("patch", "/email-settings", { enabled: true, from: "billing@shop.example", language: "de" });
		const read = await viewer.get("/email-settings");
		const refused = await viewer.send("patch", "/email-settings", { enabled: false });
		const bad = await operator.send("patch", "/email-settings", { brandColor: "green" });

		expect(set.status).toBe(200);
		expect(read.body).toEqual({
			enabled: true,
			from: "billing@shop.example",
			fromName: null,
			replyTo: null,
			language: "de",
			brandColor: null,
		});
		expect(refused.status).toBe(403);
		expect(bad.status).toBe(400);
		expect((await admin(app).get(`/accounts/${shop.accountId}`).expect(200)).body.emails).toEqual(read.body);
	});
});

/** The customer's one email as the admin API lists it. */
async function emailOf(on: TestApp, shop: Shop, customerId: number) {
	const [email] = (await admin(on).get(`/accounts/${shop.accountId}/customers/${customerId}/emails`).expect(200)).body;
	return email;
}

/**
 * A receipt held PENDING while invoicing is down: Mailpit stopped, the checkout's receipt fails on SMTP, invoicing's
 * service leaves the node (calls to it find no invoicing), Mailpit comes back. Answers how to bring invoicing back.
 */
async function receiptWhileInvoicingDown(on: TestApp, shop: Shop) {
	await mailpit.stop();
	const buyer = await subscribed(shop, {}, on);
	await eventually(async () => expect((await emailOf(on, shop, buyer.customerId)).lastError).toEqual(expect.any(String)));
	await on.broker.destroyService(on.broker.getLocalService("invoicing"));
	await mailpit.start();
	const invoicingBack = async () => {
		on.broker.createService(serviceSchemas.invoicing);
		await on.broker.waitForServices("invoicing", 30_000);
	};
	return { ...buyer, invoicingBack };
}

const INVOICE_NUMBER = /\((INV-\d{4}-\d{6})\)$/;

/** The receipt's attachments, its PDF's bytes and the PDF's text. */
async function attachedPdf(receipt: ReceivedEmail) {
	const [attachment] = receipt.attachments;
	const bytes = await attachmentBytes(mailpit, receipt, attachment);
	return { attachment, bytes, text: (await pdfText(bytes)).text };
}

describe("The receipt's invoice PDF", () => {
	test("When a buyer pays, then the receipt carries the invoice's PDF as <number>.pdf, the same invoice as the merchant's, and the emails collection keeps no PDF", async () => {
		const shop = await shopWithEmails();

		const { email, customerId } = await subscribed(shop);
		const [receipt] = await waitForEmails(mailpit, email, 1);

		const number = INVOICE_NUMBER.exec(receipt.subject)?.[1];
		expect(receipt.attachments).toEqual([
			{ partId: expect.any(String), fileName: `${number}.pdf`, contentType: "application/pdf", size: expect.any(Number) },
		]);
		const { attachment, bytes, text } = await attachedPdf(receipt);
		expect(bytes.subarray(0, 4).toString("latin1")).toBe("%PDF");
		expect(attachment.size).toBe(bytes.length);
		expect(text).toContain(number);
		expect(text).toContain(email);
		// The same invoice the merchant downloads (GET /api/invoice/{id}/pdf), read the same way.
		const [invoice] = (await app.http().get(`/api/invoices?customerId=${customerId}`).set(bearer(shop)).expect(200)).body.data;
		const merchantPdf = await fetch(`${app.url}/api/invoice/${invoice.id}/pdf`, { headers: bearer(shop) });
		expect(merchantPdf.status).toBe(200);
		expect((await pdfText(Buffer.from(await merchantPdf.arrayBuffer()))).text).toBe(text);
		expect(receipt.text).toContain(`Your invoice ${number} is attached as a PDF.`);
		expect(receipt.text).toContain(`View your invoice: ${invoice.url}`);
		// Rendered when sent, never stored: the email's record is its facts, a few hundred bytes.
		const client = await MongoClient.connect(process.env.MONGO_URL!);
		try {
			const emails = client.db(databaseNameFor("notifications", process.env.MONGO_URL!)).collection<{ _id: string }>("emails");
			const stored = await emails.findOne({ _id: `RECEIPT:t${invoice.transactionId}` });
			expect(stored).toMatchObject({ status: "SENT", facts: { invoiceId: invoice.id, invoiceNumber: number } });
			expect(JSON.stringify(stored).length).toBeLessThan(2000);
			expect(JSON.stringify(stored)).not.toContain(bytes.subarray(0, 30).toString("base64").slice(0, 20));
		} finally {
			await client.close();
		}
	});

	test("When invoicing cannot be reached as the receipt is sent, then it is retried like an SMTP failure and arrives once, with its PDF, when invoicing is back", async () => {
		const shop = await shopWithEmails();
		const { email, customerId, invoicingBack } = await receiptWhileInvoicingDown(app, shop);

		// Tried with the SMTP server back: invoicing's PDF is what it waits for.
		const waiting = await eventually(async () => {
			const record = await emailOf(app, shop, customerId);
			expect(record.lastError).toMatch(/^the invoice's PDF could not be had from invoicing: /);
			return record;
		});
		expect(waiting.status).toBe("PENDING");
		expect(await waitForEmails(mailpit, email, 0, 0)).toEqual([]);
		await invoicingBack();
		const received = await waitForEmails(mailpit, email, 1, 1500, 20_000);

		expect(received).toHaveLength(1);
		expect(received[0].subject).toEqual(RECEIPT);
		expect(received[0].attachments).toHaveLength(1);
		expect((await attachedPdf(received[0])).text).toContain(INVOICE_NUMBER.exec(received[0].subject)?.[1]);
		expect(await emailOf(app, shop, customerId)).toMatchObject({ status: "SENT", lastError: null });
	});

	test("When invoicing stays unreachable until the retry window closes, then the last try sends the receipt with the invoice's link alone", async () => {
		// Its own app: a retry window of 7.2 s (EMAIL_RETRY_HOURS), the same Mailpit.
		const short = await startApp({
			env: { SMTP_URL: mailpit.smtpUrl, EMAIL_RETRY_BASE_MS: "300", EMAIL_RETRY_HOURS: "0.002", PUBLIC_BASE_URL },
		});
		try {
			const shop = await shopWithEmails(EMAILS_ON, short);
			const { email, customerId } = await receiptWhileInvoicingDown(short, shop);

			const received = await waitForEmails(mailpit, email, 1, 1500, 30_000);

			expect(received).toHaveLength(1);
			expect(received[0].subject).toEqual(RECEIPT);
			expect(received[0].attachments).toEqual([]);
			expect(/View your invoice: (\S+)/.exec(received[0].text)?.[1]).toMatch(
				/^https:\/\/pay\.example\.test\/api\/buyer\/invoices\/\d+\/[\w-]+$/,
			);
			expect(received[0].text).not.toContain("attached");
			const record = await emailOf(short, shop, customerId);
			expect(record).toMatchObject({ status: "SENT", lastError: null });
			expect(record.attempts).toBeGreaterThanOrEqual(3);
		} finally {
			await short.stop();
		}
	});
});

// Last in this file: its app reads the configuration without PUBLIC_BASE_URL.
describe("Links in emails", () => {
	test("When the service has no PUBLIC_BASE_URL (npm start), then the receipt's invoice link and the dunning email's card update link are both absolute on http://localhost:<PORT>, and the invoice's opens", async () => {
		// Arrange
		const port = await freePort();
		const local = await startApp({ env: { SMTP_URL: mailpit.smtpUrl, EMAIL_RETRY_BASE_MS: "300", PORT: String(port) } });
		try {
			const shop = await shopWithEmails(EMAILS_ON, local);
			const { email } = await subscribed(shop, { card: CARDS.renewalsLostCard }, local);
			await waitForEmails(mailpit, email, 1, 0);

			// Act: the renewal is hard-declined, the buyer is told with a card update link.
			await advanceClock(local, shop, 31);
			const [receipt, dunning] = await waitForEmails(mailpit, email, 2);

			// Assert: one base for both, in the text and in the HTML.
			const base = `http://localhost:${port}`;
			const invoiceLink = /View your invoice: (\S+)/.exec(receipt.text)?.[1] ?? "";
			const cardLink = /Update your card: (\S+)/.exec(dunning.text)?.[1] ?? "";
			expect(invoiceLink).toMatch(new RegExp(`^${base}/api/buyer/invoices/\\d+/[\\w-]+$`));
			expect(cardLink.startsWith(`${base}/update-card/#`)).toBe(true);
			expect(receipt.html).toContain(`href="${invoiceLink}"`);
			expect(dunning.html).toContain(`href="${cardLink}"`);
			const page = await local.http().get(new URL(invoiceLink).pathname);
			expect([page.status, page.headers["content-type"]]).toEqual([200, expect.stringContaining("text/html")]);
		} finally {
			await local.stop();
		}
	});
});
