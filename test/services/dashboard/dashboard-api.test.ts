// The dashboard's API through HTTP (issue 18): users made through the admin
// API, signing in with a cookie session, the lockout, roles, CSRF, other
// origins and other accounts, the audit log of every change, and the reads of
// the merchant accounts' health and the disputes.
import { readFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "../../../shared/paths";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let other: Shop;

const PASSWORD = "correct horse battery staple";
/** The service's address as buyers reach it (PUBLIC_BASE_URL), not the address the tests call. */
const PUBLIC_URL = "https://pay.example.com";

beforeAll(async () => {
	app = await startApp({ env: { DASHBOARD_LOCKOUT_FAILURES: "3", PUBLIC_BASE_URL: PUBLIC_URL } });
	[shop, other] = await Promise.all([createShop(app), createShop(app)]);
});
afterAll(() => app.stop());

let emails = 0;
async function newUser(who: Shop, role: "viewer" | "operator", password = PASSWORD): Promise<{ id: number; email: string }> {
	const email = `person-${++emails}-${Date.now()}@shop.example.com`;
	const res = await admin(app).post(`/accounts/${who.accountId}/dashboard-users`, { email, role, password }).expect(201);
	return { id: res.body.id, email };
}

interface Session {
	cookie: string;
	csrf: string;
	origin: string;
}

async function signIn(email: string, password = PASSWORD): Promise<Session> {
	const origin = app.url;
	const res = await app.http().post("/dashboard/api/sign-in").set("Origin", origin).send({ email, password }).expect(200);
	const cookie = String(res.headers["set-cookie"]).split(";")[0];
	return { cookie, csrf: res.body.csrfToken, origin };
}

const get = (session: Session, path: string) => app.http().get(`/dashboard/api${path}`).set("Cookie", session.cookie);
const post = (session: Session, path: string, body: object = {}, headers: Record<string, string> = {}) =>
	app
		.http()
		.post(`/dashboard/api${path}`)
		.set({ Cookie: session.cookie, Origin: session.origin, "X-CSRF-Token": session.csrf, ...headers })
		.send(body);

async function paidCustomer(who: Shop = shop): Promise<{ customerId: number; transactionId: number }> {
	const { customerId } = (await submitCheckout(app, who, { productId: who.products.oneOff, card: CARDS.visa })).body;
	const [transaction] = (await admin(app).get(`/accounts/${who.accountId}/customers/${customerId}/transactions`)).body;
	return { customerId, transactionId: transaction.id };
}

describe("Dashboard users and signing in", () => {
	test("When a user signs in, then an HttpOnly SameSite=Strict session cookie (no Max-Age: the server ends it when idle) holds the session and /me names the user, role and account, never a token", async () => {
		// Arrange
		const user = await newUser(shop, "viewer");

		// Act
		const res = await app
			.http()
			.post("/dashboard/api/sign-in")
			.set("Origin", app.url)
			.send({ email: user.email.toUpperCase(), password: PASSWORD });
		const cookie = String(res.headers["set-cookie"]);
		const me = await app.http().get("/dashboard/api/me").set("Cookie", cookie.split(";")[0]);

		// Assert
		expect(res.status).toBe(200);
		expect(cookie).toMatch(/^dashboard_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Strict$/);
		expect(JSON.stringify(res.body)).not.toContain(cookie.split(";")[0].split("=")[1]);
		expect(me.body).toEqual({
			userId: user.id,
			email: user.email,
			role: "viewer",
			csrfToken: res.body.csrfToken,
			account: { id: shop.accountId, name: expect.any(String), environment: "sandbox" },
		});
		expect(JSON.stringify(me.body)).not.toContain(shop.apiToken);
	});

	test("When a production account's user signs in, then its cookie is Secure too", async () => {
		const production = (await admin(app).post("/accounts", { name: "Live shop", environment: "production" }).expect(201)).body;
		const email = `live-${Date.now()}@shop.example.com`;
		await admin(app).post(`/accounts/${production.id}/dashboard-users`, { email, role: "viewer", password: PASSWORD }).expect(201);

		const res = await app.http().post("/dashboard/api/sign-in").set("Origin", app.url).send({ email, password: PASSWORD }).expect(200);

		expect(String(res.headers["set-cookie"])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
	});

	test("When the password is wrong or the email unknown, then the same 401 message, and the admin list shows no password", async () => {
		const user = await newUser(shop, "viewer");

		const wrong = await app
			.http()
			.post("/dashboard/api/sign-in")
			.set("Origin", app.url)
			.send({ email: user.email, password: "not the password!" });
		const unknown = await app
			.http()
			.post("/dashboard/api/sign-in")
			.set("Origin", app.url)
			.send({ email: "nobody@example.com", password: PASSWORD });
		const list = await admin(app).get(`/accounts/${shop.accountId}/dashboard-users`).expect(200);

		expect(wrong.status).toBe(401);
		expect(unknown.status).toBe(401);
		expect(wrong.body).toEqual(unknown.body);
		expect(wrong.body.message).toBe("Email or password is wrong");
		expect(list.body).toContainEqual({
			id: user.id,
			accountId: shop.accountId,
			email: user.email,
			role: "viewer",
			disabled: false,
			createdAt: expect.any(String),
		});
		expect(JSON.stringify(list.body)).not.toMatch(/scrypt|passwordHash/);
	});

	test("When an email fails to sign in 3 times in a row, then it is locked, even with the right password, and an unknown email locks the same way", async () => {
		const user = await newUser(shop, "operator");
		const attempt = (email: string, password: string) =>
			app.http().post("/dashboard/api/sign-in").set("Origin", app.url).send({ email, password });

		for (let i = 0; i < 3; i++) expect((await attempt(user.email, "wrong password!!")).status).toBe(401);
		const locked = await attempt(user.email, PASSWORD);
		for (let i = 0; i < 3; i++) await attempt("ghost@example.com", "wrong password!!");
		const ghost = await attempt("ghost@example.com", "wrong password!!");

		expect(locked.status).toBe(429);
		expect(locked.body.message).toBe("Too many failed sign-ins: try again in a few minutes");
		expect(ghost.body).toEqual(locked.body);
	});

	test("When the operator sets a new password for a locked email, then the lockout ends and the new password signs in", async () => {
		// Arrange
		const user = await newUser(shop, "operator");
		const attempt = (password: string) =>
			app.http().post("/dashboard/api/sign-in").set("Origin", app.url).send({ email: user.email, password });
		for (let i = 0; i < 3; i++) await attempt("wrong password!!");
		const locked = await attempt(PASSWORD);

		// Act
		await admin(app).patch(`/accounts/${shop.accountId}/dashboard-users/${user.id}`, { password: "a brand new password" }).expect(200);
		const signedIn = await attempt("a brand new password");

		// Assert
		expect(locked.status).toBe(429);
		expect(signedIn.status).toBe(200);
		expect(signedIn.body.user.email).toBe(user.email);
	});

	test("When an email is taken, in any account and letter case, then 409 and no user is added", async () => {
		const user = await newUser(shop, "viewer");
		const before = (await admin(app).get(`/accounts/${other.accountId}/dashboard-users`)).body;

		const res = await admin(app)
			.post(`/accounts/${other.accountId}/dashboard-users`, { email: user.email.toUpperCase(), role: "operator", password: PASSWORD })
			.expect(409);

		expect(res.body.message).toBe("A dashboard user with this email exists");
		expect((await admin(app).get(`/accounts/${other.accountId}/dashboard-users`)).body).toEqual(before);
	});

	test("When a user is disabled, then its open session ends at the next request", async () => {
		const user = await newUser(shop, "viewer");
		const session = await signIn(user.email);

		await admin(app).patch(`/accounts/${shop.accountId}/dashboard-users/${user.id}`, { disabled: true }).expect(200);

		expect((await get(session, "/me")).status).toBe(401);
	});

	test("When a user signs out, then the cookie is cleared and the session no longer works", async () => {
		const session = await signIn((await newUser(shop, "viewer")).email);

		const out = await post(session, "/sign-out");

		expect(out.status).toBe(200);
		expect(String(out.headers["set-cookie"])).toContain("Max-Age=0");
		expect((await get(session, "/me")).status).toBe(401);
	});
});

describe("What a session may do", () => {
	test("When an operator refunds part of a transaction, then the REST API's refund runs once per Idempotency-Key and the audit log says who, what, on what and from where", async () => {
		// Arrange
		const user = await newUser(shop, "operator");
		const session = await signIn(user.email);
		const { customerId, transactionId } = await paidCustomer();

		// Act
		const first = await post(session, `/transactions/${transactionId}/refund`, { amountToRefund: "5.00" }, { "Idempotency-Key": "dash-1" });
		const again = await post(session, `/transactions/${transactionId}/refund`, { amountToRefund: "5.00" }, { "Idempotency-Key": "dash-1" });
		const audit = await get(session, "/audit").expect(200);

		// Assert
		expect(first.body).toEqual({ success: true, message: "Refund success with amount 5" });
		expect(again.body).toEqual(first.body);
		const types = (await get(session, `/customers/${customerId}/transactions`)).body.data.map((t: { type: string }) => t.type);
		expect(types).toEqual(["REFUNDED", "SUBSCRIPTION_START"]);
		expect(audit.body.data[0]).toEqual({
			id: expect.any(String),
			at: expect.any(String),
			email: user.email,
			action: "refund",
			target: `transaction ${transactionId}`,
			outcome: "Refund success with amount 5",
			from: expect.stringMatching(/127\.0\.0\.1|::1/),
		});
	});

	test("When a viewer tries to refund or unsubscribe, then 403 and nothing changes", async () => {
		const session = await signIn((await newUser(shop, "viewer")).email);
		const { customerId, transactionId } = await paidCustomer();

		const refund = await post(session, `/transactions/${transactionId}/refund`, {});
		const unsubscribe = await post(session, `/customers/${customerId}/unsubscribe`);

		expect(refund.status).toBe(403);
		expect(unsubscribe.status).toBe(403);
		expect(refund.body.message).toBe("Only an operator may do this");
		expect((await get(session, `/customers/${customerId}`)).body.status).toBe("ACTIVE");
		expect((await get(session, `/customers/${customerId}/transactions`)).body.data[0].refundStatus).toBe("REFUNDABLE");
	});

	test("When a viewer asks for the audit log, then 403, while an operator of the same account reads it", async () => {
		const viewer = await signIn((await newUser(shop, "viewer")).email);
		const operator = await signIn((await newUser(shop, "operator")).email);

		const refused = await get(viewer, "/audit");
		const read = await get(operator, "/audit");

		expect(refused.status).toBe(403);
		expect(refused.body).toEqual({ error: "FORBIDDEN", status: 403, message: "Only an operator may do this" });
		expect(read.status).toBe(200);
		expect(read.body.data.length).toBeGreaterThan(0);
	});

	test("When a change comes without the CSRF token, with a wrong one, or from another origin, then 403 and nothing changes", async () => {
		const session = await signIn((await newUser(shop, "operator")).email);
		const { customerId } = await paidCustomer();

		const noToken = await post(session, `/customers/${customerId}/unsubscribe`, {}, { "X-CSRF-Token": "" });
		const wrongToken = await post(session, `/customers/${customerId}/unsubscribe`, {}, { "X-CSRF-Token": "x".repeat(43) });
		const otherOrigin = await post(session, `/customers/${customerId}/unsubscribe`, {}, { Origin: "https://evil.example" });

		expect([noToken.status, wrongToken.status, otherOrigin.status]).toEqual([403, 403, 403]);
		expect((await get(session, `/customers/${customerId}`)).body.status).toBe("ACTIVE");
	});

	test("When a session names another account's customer, transaction or event, then it reads nothing and changes nothing", async () => {
		const session = await signIn((await newUser(shop, "operator")).email);
		const theirs = await paidCustomer(other);

		const customer = await get(session, `/customers/${theirs.customerId}`);
		const transactions = await get(session, `/customers/${theirs.customerId}/transactions`);
		const refund = await post(session, `/transactions/${theirs.transactionId}/refund`, {}, { "Idempotency-Key": "cross-1" });
		const unsubscribe = await post(session, `/customers/${theirs.customerId}/unsubscribe`);
		const accountParam = await get(session, `/customers?accountId=${other.accountId}`);

		expect(customer.text).toBe("");
		expect(transactions.body).toEqual({ data: [], nextCursor: null });
		expect(refund.body).toEqual({ success: false, message: `Transaction not found with ID: ${theirs.transactionId}` });
		expect(unsubscribe.body).toEqual({ success: false, message: `Customer not found with ID: ${theirs.customerId}` });
		expect(accountParam.status).toBe(400);
		const [transaction] = (await admin(app).get(`/accounts/${other.accountId}/customers/${theirs.customerId}/transactions`)).body;
		expect(transaction.refundStatus).toBe("REFUNDABLE");
	});

	test("When an operator makes a card update link, then its token opens a card update session for the page's host, for 7 days, and the audit log keeps no token", async () => {
		// Arrange
		const session = await signIn((await newUser(shop, "operator")).email);
		const { customerId } = await paidCustomer();

		// Act
		const made = await post(session, `/customers/${customerId}/card-update-link`).expect(200);
		const token = String(made.body.link).split("#")[1];
		const opened = await app.http().post("/api/card-update-link").send({ token }).expect(200);
		const audit = (await get(session, "/audit")).body.data[0];

		// Assert
		expect(made.body).toEqual({
			link: expect.stringMatching(/^https:\/\/pay\.example\.com\/update-card\/#[A-Za-z0-9_-]{43}$/),
			expiresAt: expect.any(String),
			message: expect.stringContaining("valid until"),
		});
		const days = (Date.parse(made.body.expiresAt) - Date.now()) / 86_400_000;
		expect(days).toBeGreaterThan(6.9);
		const read = await app.http().get(`/api/session?sessionId=${opened.body.sessionId}`).set("Authorization", `Bearer ${shop.apiToken}`);
		expect(read.body).toMatchObject({ domain: "127.0.0.1", status: "VALID" });
		expect(audit).toMatchObject({ action: "card update link", target: `customer ${customerId}` });
		expect(JSON.stringify(audit)).not.toContain(token);
	});

	test("When an operator asks for a card update link for an unknown customer or another account's, then 404, as a card update session answers", async () => {
		const session = await signIn((await newUser(shop, "operator")).email);
		const theirs = await paidCustomer(other);

		const unknown = await post(session, "/customers/999999/card-update-link");
		const foreign = await post(session, `/customers/${theirs.customerId}/card-update-link`);
		const viaApi = await app
			.http()
			.post("/api/session?customerId=999999&domain=shop.example.com")
			.set("Authorization", `Bearer ${shop.apiToken}`);

		expect(unknown.status).toBe(404);
		expect(unknown.body).toEqual(viaApi.body);
		expect(foreign.status).toBe(404);
		expect(foreign.body).toEqual(viaApi.body);
	});

	test("When a card update link is unknown or malformed, or a viewer asks for one, then 404, 400 and 403", async () => {
		const viewer = await signIn((await newUser(shop, "viewer")).email);
		const { customerId } = await paidCustomer();

		const unknown = await app
			.http()
			.post("/api/card-update-link")
			.send({ token: "A".repeat(43) });
		const malformed = await app.http().post("/api/card-update-link").send({ token: "short" });
		const withDomain = await app
			.http()
			.post("/api/card-update-link")
			.send({ token: "A".repeat(43), domain: "evil.example" });
		const refused = await post(viewer, `/customers/${customerId}/card-update-link`);

		expect(unknown.status).toBe(404);
		expect(unknown.body.message).toBe("This card update link is unknown or has expired");
		expect(malformed.status).toBe(400);
		expect(withDomain.status).toBe(400);
		expect(refused.status).toBe(403);
	});

	test("When a viewer reads the merchant accounts, their health and the disputes, then its own account's, as the admin API and /api answer them, and naming an account is a 400", async () => {
		// Arrange: two fresh shops (their test clocks move), each with a charge disputed after 3 days.
		const [mine, theirs] = await Promise.all([createShop(app), createShop(app)]);
		for (const who of [mine, theirs]) {
			expect((await submitCheckout(app, who, { productId: who.products.oneOff, card: "4000000000002602" })).body.code).toBe("OK");
			await advanceClock(app, who, 4);
		}
		const session = await signIn((await newUser(mine, "viewer")).email);

		// Act
		const mids = await get(session, "/merchant-accounts");
		const health = await get(session, "/merchant-accounts/health");
		const disputes = await get(session, "/disputes?status=NEEDS_RESPONSE&limit=5");
		const named = await Promise.all(
			["/merchant-accounts", "/merchant-accounts/health", "/disputes"].map(p => get(session, `${p}?accountId=${theirs.accountId}`)),
		);

		// Assert
		expect(mids.status).toBe(200);
		expect(mids.body).toEqual((await admin(app).get(`/accounts/${mine.accountId}/merchant-accounts`).expect(200)).body);
		expect(health.status).toBe(200);
		expect(health.body).toEqual((await admin(app).get(`/accounts/${mine.accountId}/merchant-account-health`).expect(200)).body);
		expect(health.body.map((h: { midId: number }) => h.midId).sort()).toEqual([...mine.mids].sort());
		expect(disputes.status).toBe(200);
		expect(disputes.body).toEqual((await app.http().get("/api/disputes?status=NEEDS_RESPONSE&limit=5").set(bearer(mine)).expect(200)).body);
		expect(disputes.body.data).toHaveLength(1);
		expect(disputes.body.data[0]).toMatchObject({ accountId: mine.accountId, status: "NEEDS_RESPONSE", reason: "fraudulent" });
		expect(named.map(r => r.status)).toEqual([400, 400, 400]);
	});

	test("When there is no session, then every API path but sign-in answers 401", async () => {
		const responses = await Promise.all(
			[
				"/me",
				"/customers",
				"/transactions",
				"/events",
				"/webhooks",
				"/products",
				"/merchant-accounts",
				"/merchant-accounts/health",
				"/disputes",
				"/audit",
			].map(p => app.http().get(`/dashboard/api${p}`)),
		);

		expect(responses.map(r => r.status)).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
	});
});

describe("The pages", () => {
	test("When the dashboard page is fetched, then a strict CSP without inline script or style, and no framing", async () => {
		const res = await app.http().get("/dashboard/").expect(200);

		expect(res.headers["content-security-policy"]).toBe(
			"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		);
		expect(res.text).toContain('<script type="module" src="/dashboard/dashboard.js"></script>');
		expect(res.text).not.toMatch(/<script>|style=/);
	});

	test("When the page's charting library is fetched, then it is Chart.js's browser build from node_modules, as JavaScript a page may not frame", async () => {
		const page = await app.http().get("/dashboard/").expect(200);
		const res = await app.http().get("/vendor/chart.js/chart.umd.min.js").expect(200);

		expect(page.text).toContain('<script defer src="/vendor/chart.js/chart.umd.min.js"></script>');
		expect(res.headers["content-type"]).toMatch(/^(text|application)\/javascript/);
		expect(res.headers["content-security-policy"]).toMatch(/^default-src 'none';.*frame-ancestors 'none'/);
		expect(res.headers["x-content-type-options"]).toBe("nosniff");
		expect(res.text).toBe(readFileSync(path.join(projectRoot, "node_modules/chart.js/dist/chart.umd.min.js"), "utf8"));
	});
});
