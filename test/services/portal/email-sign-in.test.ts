// The customer portal's email sign-in (docs/portal.md#email-sign-in), over HTTP with a real SMTP server (Mailpit): a
// buyer asks on the page, gets a single-use link by email, and it opens their session; an unknown address gets the
// same answer and no email.
import { randomBytes } from "node:crypto";
import { type Mailpit, startMailpit } from "../../../dev/mailpit";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { emailsTo } from "../../factories/mailbox";
import { admin } from "../../factories/merchant";
import { openPortal, portalSettings } from "../../factories/portal";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let mailpit: Mailpit;
let shop: Shop;

beforeAll(async () => {
	mailpit = await startMailpit();
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "invoicing", "notifications", "metrics", "portal"],
		env: { SMTP_URL: mailpit.smtpUrl, EMAIL_RETRY_BASE_MS: "300" },
	});
});
beforeEach(async () => {
	shop = await createShop(app);
	await admin(app)
		.patch(`/accounts/${shop.accountId}`, { emails: { enabled: true } })
		.expect(200);
	await portalSettings(app, shop, { enabled: true, emailSignIn: true });
});
afterAll(async () => {
	await app.stop();
	await mailpit.stop();
});

const ask = (email: string, accountId = shop.accountId) =>
	app.http().post("/portal/api/sign-in").set("Origin", app.url).send({ accountId, email });

test("When a buyer asks with the address they subscribed with, then one email brings a single-use link that opens their subscriptions", async () => {
	// Arrange
	const email = `buyer-${randomBytes(4).toString("hex")}@example.com`;
	const { body } = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa, email });
	const signIns = async () => (await emailsTo(mailpit, email).catch(() => [])).filter(m => m.subject.startsWith("Your link"));

	// Act: asked twice within the minute, the second time in upper case
	const first = await ask(email);
	const second = await ask(email.toUpperCase());
	const deadline = Date.now() + 15_000;
	while ((await signIns()).length === 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 100));
	// A second email would come from the second ask, which is answered already: it would be there by now.
	await new Promise(r => setTimeout(r, 700));
	const mails = await signIns();
	const link = /https?:\/\/\S+\/portal\/#[A-Za-z0-9_-]{43}/.exec(mails[0]?.text ?? "")?.[0];
	const buyer = await openPortal(app, link!.replace(/^https?:\/\/[^/]+/, app.url));
	const me = (await buyer.get("/me").expect(200)).body;
	const again = await app
		.http()
		.post("/portal/api/open")
		.set("Origin", app.url)
		.send({ token: link!.split("#")[1] });

	// Assert
	expect([first.status, second.status]).toEqual([200, 200]);
	expect(first.body).toEqual({ requested: true });
	expect(mails).toHaveLength(1);
	expect(mails[0].subject).toBe("Your link to manage your Test shop subscriptions");
	expect(me.subscriptions.map((s: { id: number }) => s.id)).toEqual([body.customerId]);
	expect(again.status).toBe(401);
});

test("When an unknown address asks, or sign-in is off, then the first gets the same answer and no email, the second 404", async () => {
	// Arrange
	const stranger = `nobody-${randomBytes(4).toString("hex")}@example.com`;
	const other = await createShop(app);

	// Act
	const unknown = await ask(stranger);
	const off = await ask(stranger, other.accountId);
	const notAnEmail = await ask("not-an-email");
	const crossSite = await app
		.http()
		.post("/portal/api/sign-in")
		.set("Origin", "https://evil.example")
		.send({ accountId: shop.accountId, email: stranger });
	await new Promise(r => setTimeout(r, 1_000));

	// Assert
	expect(unknown.status).toBe(200);
	expect(unknown.body).toEqual({ requested: true });
	expect(off.status).toBe(404);
	expect(off.body.message).toBe("This shop does not offer signing in by email");
	expect([notAnEmail.status, crossSite.status]).toEqual([400, 403]);
	expect(await emailsTo(mailpit, stranger)).toEqual([]);
});
