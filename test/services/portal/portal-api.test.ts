// The customer portal over HTTP (docs/portal.md): links made by the merchant's API, the buyer's session, what the
// settings allow, and the refusals; webhooks received by a real server say what the buyer did.
import { randomBytes } from "node:crypto";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { signedIn } from "../../factories/dashboard-session";
import { admin, bearer } from "../../factories/merchant";
import { type BuyerSession, openPortal, portalLink, portalSettings, tokenOf } from "../../factories/portal";
import { setWallClock } from "../../factories/wall-clock";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp({
		services: [
			"gateway",
			"accounts",
			"sessions",
			"checkout",
			"payments",
			"billing",
			"invoicing",
			"notifications",
			"metrics",
			"portal",
			"dashboard",
		],
	});
	receiver = await startWebhookReceiver();
});
beforeEach(async () => {
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	await portalSettings(app, shop, { enabled: true, returnDomains: ["shop.example.com"] });
});
afterEach(() => jest.useRealTimers());
afterAll(async () => {
	await receiver.stop();
	await app.stop();
});

async function subscribed(email?: string, productId = shop.products.charge): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card: CARDS.visa, ...(email ? { email } : {}) });
	expect(body.code).toBe("OK");
	return body.customerId;
}

const customer = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop)).expect(200)).body;

async function eventsOf(customerId: number, type: string): Promise<Envelope[]> {
	const deadline = Date.now() + 10_000;
	const found = () =>
		receiver.requests.map(r => JSON.parse(r.rawBody) as Envelope).filter(e => e.customerId === customerId && e.type === type);
	while (found().length === 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	return found();
}

const open = async (id: number, body?: object): Promise<BuyerSession> => openPortal(app, await portalLink(app, shop, id, body));
const openRaw = (token: string) => app.http().post("/portal/api/open").set("Origin", app.url).send({ token });

describe("Portal links", () => {
	test("When the merchant makes a link, then it is a single-use URL on the service's /portal/ page, valid for 5 minutes", async () => {
		// Arrange
		const id = await subscribed();
		const before = Date.now();

		// Act
		const res = await app
			.http()
			.post(`/api/customer/${id}/portal-session`)
			.set(bearer(shop))
			.send({ returnUrl: "https://shop.example.com/account", locale: "de" });

		// Assert
		expect(res.status).toBe(200);
		expect(res.body.url).toMatch(new RegExp(`^${app.url}/portal/#[A-Za-z0-9_-]{43}$`));
		const ttl = Date.parse(res.body.expiresAt) - before;
		expect(ttl).toBeGreaterThan(4.9 * 60_000);
		expect(ttl).toBeLessThanOrEqual(5 * 60_000 + 5_000);
		expect((await openRaw(tokenOf(res.body.url))).status).toBe(200);
		const again = await openRaw(tokenOf(res.body.url));
		expect(again.status).toBe(401);
		expect(again.body.message).toBe("This link is invalid, has expired or was already used. Ask the shop for a new one.");
	});

	test("When a link is forged, expired, or opened from another site, then it is refused and opens no session", async () => {
		// Arrange
		const id = await subscribed();
		const url = await portalLink(app, shop, id);
		const other = await portalLink(app, shop, id);

		// Act
		const forged = await openRaw(randomBytes(32).toString("base64url"));
		const malformed = await openRaw("short");
		const crossSite = await app
			.http()
			.post("/portal/api/open")
			.set("Origin", "https://evil.example")
			.send({ token: tokenOf(other) });
		setWallClock(Date.now() + 5 * 60_000 + 1_000);
		const expired = await openRaw(tokenOf(url));

		// Assert
		expect([forged.status, malformed.status, crossSite.status, expired.status]).toEqual([401, 401, 403, 401]);
		for (const res of [forged, malformed, crossSite, expired]) expect(res.headers["set-cookie"]).toBeUndefined();
	});

	test("When the portal is off, the customer another account's, or the returnUrl on another domain, then no link is made", async () => {
		// Arrange
		const id = await subscribed();
		const other = await createShop(app);
		await portalSettings(app, other, { enabled: true });
		const link = (body: object, who: Shop = shop) => app.http().post(`/api/customer/${id}/portal-session`).set(bearer(who)).send(body);

		// Act
		const elsewhere = await link({ returnUrl: "https://evil.example/steal" });
		const plainHttp = await link({ returnUrl: "http://shop.example.com/account" });
		const lookalike = await link({ returnUrl: "https://shop.example.com.evil.example/" });
		const sub = await link({ returnUrl: "https://my.shop.example.com/account" });
		const theirs = await link({}, other);
		const posing = await link({ baseUrl: "https://evil.example" });
		await portalSettings(app, shop, { enabled: false });
		const off = await link({});

		// Assert
		expect([elsewhere.status, plainHttp.status, lookalike.status]).toEqual([400, 400, 400]);
		expect(elsewhere.body.message).toBe("returnUrl must be an https URL on one of the account's portal return domains");
		expect(sub.status).toBe(200);
		expect(theirs.status).toBe(404);
		expect(posing.status).toBe(400);
		expect(off.status).toBe(409);
		expect(off.body.message).toBe("The customer portal is turned off for this account (its portal settings)");
	});
});

describe("The buyer's session", () => {
	test("When the page is fetched and a link opened, then the CSP is the dashboard's (the card frame of this origin besides) and the cookie HttpOnly, SameSite=Strict and scoped to /portal", async () => {
		// Arrange
		const id = await subscribed();

		// Act
		const pages = await Promise.all(
			["/portal/", "/portal/portal.js", "/portal/phrases.js", "/portal/portal.css"].map(p => app.http().get(p)),
		);
		const opened = await openRaw(tokenOf(await portalLink(app, shop, id)));

		// Assert
		for (const page of pages) {
			expect(page.status).toBe(200);
			expect(page.headers["content-security-policy"]).toBe(
				"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
			);
			expect(page.headers["x-content-type-options"]).toBe("nosniff");
		}
		expect(pages[0].text).not.toMatch(/<script(?![^>]*\bsrc=)|\bstyle=|https?:\/\//);
		const cookie = String(opened.headers["set-cookie"]);
		expect(cookie).toMatch(/^portal_session=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=3600$/);
		expect(opened.body).toEqual({ opened: true });
	});

	test("When the buyer opens a link, then the page reads the buyer's subscriptions on this account (same email), with the card's brand and last 4 only", async () => {
		// Arrange
		const email = `buyer-${randomBytes(4).toString("hex")}@example.com`;
		const first = await subscribed(email);
		const second = await subscribed(email, shop.products.schedule);
		await subscribed();

		// Act
		const buyer = await open(first, { locale: "es", returnUrl: "https://shop.example.com/account" });
		const me = (await buyer.get("/me").expect(200)).body;

		// Assert
		expect(me).toMatchObject({ locale: "es", returnUrl: "https://shop.example.com/account", account: { brandColor: null } });
		expect(me.subscriptions.map((s: { id: number }) => s.id).sort()).toEqual([first, second].sort());
		const sub = me.subscriptions.find((s: { id: number }) => s.id === first);
		expect(sub.card).toEqual({ brand: "visa", last4: "4242", expiry: expect.stringMatching(/^\d{2}\/\d{2}$/) });
		expect(JSON.stringify(me)).not.toMatch(/424242|cardBin|cardToken/);
		expect(sub.actions).toMatchObject({ cancel: true, cancelAtPeriodEnd: true, cancelNow: false, pause: false, undoCancel: false });
	});

	test("When a request has no session, another site's Origin, or no CSRF token, then it is refused and changes nothing", async () => {
		// Arrange
		const id = await subscribed();
		const buyer = await open(id);
		const cookie = String((await buyer.get("/me")).request.getHeader("Cookie"));
		const cancel = (headers: Record<string, string>) =>
			app.http().post(`/portal/api/subscriptions/${id}/cancel`).set(headers).send({ when: "period_end", reason: "other" });

		// Act
		const noSession = await app.http().get("/portal/api/me");
		const forgedSession = await app
			.http()
			.get("/portal/api/me")
			.set("Cookie", `portal_session=${randomBytes(32).toString("base64url")}`);
		const crossSite = await cancel({ Cookie: cookie, Origin: "https://evil.example", "X-CSRF-Token": buyer.csrfToken });
		const noCsrf = await cancel({ Cookie: cookie, Origin: app.url });
		const wrongCsrf = await cancel({ Cookie: cookie, Origin: app.url, "X-CSRF-Token": "x".repeat(43) });
		const posing = await buyer.send("post", `/subscriptions/${id}/cancel`, { when: "period_end", reason: "other", sessionToken: "x" });

		// Assert
		expect([noSession.status, forgedSession.status]).toEqual([401, 401]);
		expect([crossSite.status, noCsrf.status, wrongCsrf.status, posing.status]).toEqual([403, 403, 403, 400]);
		expect((await customer(id)).cancelAt).toBeNull();
	});

	test("When the buyer names another buyer's subscription, or signs out, then 404, then 401", async () => {
		// Arrange
		const mine = await subscribed();
		const theirs = await subscribed();
		const buyer = await open(mine);

		// Act
		const other = await buyer.send("post", `/subscriptions/${theirs}/cancel`, { when: "period_end", reason: "other" });
		const otherDocuments = await buyer.get(`/subscriptions/${theirs}/documents`);
		await buyer.send("post", "/sign-out", {}).expect(200);
		const after = await buyer.get("/me");

		// Assert
		expect([other.status, otherDocuments.status]).toEqual([404, 404]);
		expect(after.status).toBe(401);
		expect((await customer(theirs)).cancelAt).toBeNull();
	});
});

describe("What the buyer does", () => {
	test("When the buyer cancels at the period's end with a reason and undoes it, then the events are the API's, saying the buyer did it", async () => {
		// Arrange
		const id = await subscribed();
		const buyer = await open(id);

		// Act
		const scheduled = await buyer.send("post", `/subscriptions/${id}/cancel`, {
			when: "period_end",
			reason: "too_expensive",
			comment: "Too dear",
		});
		const afterCancel = await customer(id);
		const undone = await buyer.send("delete", `/subscriptions/${id}/cancel`);

		// Assert
		expect([scheduled.status, undone.status]).toEqual([200, 200]);
		expect(afterCancel.cancelAt).toBe(afterCancel.nextRenewalTimestamp);
		expect((await customer(id)).cancelAt).toBeNull();
		const [event] = await eventsOf(id, "CANCELLATION_SCHEDULED");
		expect(event.data).toMatchObject({ by: "buyer", cancellation: { reason: "too_expensive", comment: "Too dear" } });
		expect((await eventsOf(id, "CANCELLATION_UNDONE"))[0].data).toMatchObject({ by: "buyer" });
	});

	test("When an action is turned off in the settings, then the page does not offer it and its endpoint refuses it", async () => {
		// Arrange
		const id = await subscribed();
		await portalSettings(app, shop, { cancel: "off", changePlan: false, pause: false });
		const buyer = await open(id);

		// Act
		const { actions } = (await buyer.get("/me")).body.subscriptions[0];
		const cancel = await buyer.send("post", `/subscriptions/${id}/cancel`, { when: "period_end", reason: "other" });
		const now = await buyer.send("post", `/subscriptions/${id}/cancel`, { when: "now", reason: "other" });
		const quote = await buyer.send("post", `/subscriptions/${id}/change-quote`, { quantity: 2 });
		const pause = await buyer.send("post", `/subscriptions/${id}/pause`, {});

		// Assert
		expect(actions).toMatchObject({ cancel: false, cancelNow: false, changePlan: false, pause: false });
		expect([cancel.status, now.status, quote.status, pause.status]).toEqual([403, 403, 403, 403]);
		expect(cancel.body.message).toBe("This action is not available for this subscription");
		expect(await customer(id)).toMatchObject({ status: "ACTIVE", cancelAt: null, quantity: 1 });
	});

	test("When the buyer cancels at once where the merchant allows it, then the subscription ends with one CANCELLATION carrying the reason", async () => {
		// Arrange
		const id = await subscribed();
		await portalSettings(app, shop, { cancel: "period_end_or_now", cancellationReasons: ["unused", "other"] });
		const buyer = await open(id);

		// Act
		const notOffered = await buyer.send("post", `/subscriptions/${id}/cancel`, { when: "now", reason: "too_expensive" });
		const res = await buyer.send("post", `/subscriptions/${id}/cancel`, { when: "now", reason: "unused" });

		// Assert
		expect(notOffered.status).toBe(400);
		expect(res.status).toBe(200);
		expect(await customer(id)).toMatchObject({ status: "UNSUBSCRIBED" });
		const [event] = await eventsOf(id, "CANCELLATION");
		expect(event.data).toMatchObject({ by: "buyer", cancellation: { reason: "unused", comment: null } });
	});

	test("When the buyer takes the retention offer, then its coupon is attached once: a second take, even at once, is refused", async () => {
		// Arrange
		const { body: coupon } = await admin(app)
			.post(`/accounts/${shop.accountId}/coupons`, {
				code: `STAY${randomBytes(3).toString("hex")}`,
				percentOff: 20,
				duration: "repeating",
				durationInPeriods: 3,
			})
			.expect(201);
		await portalSettings(app, shop, { retentionCouponId: coupon.id });
		const id = await subscribed();
		const buyer = await open(id);

		// Act
		const takes = await Promise.all([1, 2, 3].map(() => buyer.send("post", `/subscriptions/${id}/retention-offer`, {})));
		const me = (await buyer.get("/me")).body;

		// Assert
		expect(takes.map(t => t.status).sort()).toEqual([200, 409, 409]);
		expect((await customer(id)).coupon).toMatchObject({ couponId: coupon.id, percentOff: 20 });
		expect(me.settings.retentionOffer).toMatchObject({ couponId: coupon.id, percentOff: 20, duration: "repeating", durationInPeriods: 3 });
		expect(me.subscriptions[0].retentionOfferUsed).toBe(true);
	});
});

describe("The portal settings in the dashboard", () => {
	test("When an operator changes them, then the portal follows at once and the audit log names the change; a viewer reads them and cannot change them", async () => {
		// Arrange
		const operator = await signedIn(app, shop, "operator");
		const viewer = await signedIn(app, shop, "viewer");
		const id = await subscribed();
		const buyer = await open(id);

		// Act
		const changed = await operator.send("patch", "/portal-settings", { pause: true, cancel: "period_end_or_now", language: "es" });
		const read = await viewer.get("/portal-settings");
		const refused = await viewer.send("patch", "/portal-settings", { enabled: false });
		const bad = await operator.send("patch", "/portal-settings", { cancel: "sometimes" });
		const me = (await buyer.get("/me")).body;
		const audit = (await operator.get("/audit")).body.data as { action: string; email: string }[];

		// Assert
		expect(changed.status).toBe(200);
		expect(changed.body).toMatchObject({ enabled: true, pause: true, cancel: "period_end_or_now", language: "es" });
		expect(read.body).toEqual(changed.body);
		expect([refused.status, bad.status]).toEqual([403, 400]);
		expect(me.subscriptions[0].actions).toMatchObject({ pause: true, cancelNow: true });
		expect(audit.filter(entry => entry.action === "portal settings")).toHaveLength(1);
	});
});
