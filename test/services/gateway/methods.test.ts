// Every method sent to every route of the gateway's route tables, with valid
// credentials, a valid body and real ids: only the route's own method may run
// its handler. OPTIONS, HEAD where GET changes state, TRACE, QUERY and
// method-override headers must leave everything as it was, which the test
// checks by reading the whole state back through the API.
import http from "node:http";
import {
	actuatorEndpoints,
	adminEndpoints,
	apiEndpoints,
	dashboardEndpoints,
	dashboardSignInEndpoints,
	demoEndpoints,
	type Endpoint,
	portalEndpoints,
	processorEndpoints,
	publicEndpoints,
} from "../../../services/gateway/endpoints";
import { CARDS, cardUpdateSession, checkoutBody, createShop, encrypt, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { ADMIN_TOKEN, startApp, type TestApp } from "../../setup/app";
import { deliveriesOf, eventually } from "../notifications/webhook-events";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "QUERY"];
const OVERRIDE_HEADERS = ["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"];
const CORS_PREFIXES = ["/api", "/actuator", "/demo"];

interface Route {
	method: string;
	path: string;
	endpoint: Endpoint;
	auth: "api" | "admin" | "dashboard" | "portal" | "none";
}

function routesOf(prefix: string, table: Record<string, Endpoint>, auth: Route["auth"]): Route[] {
	return Object.entries(table).map(([key, endpoint]) => {
		const [method, path] = key.split(" ");
		return { method, path: prefix + path, endpoint, auth };
	});
}

const ROUTES: Route[] = [
	...routesOf("/api", apiEndpoints, "api"),
	...routesOf("/api", publicEndpoints, "none"),
	...routesOf("/api/processors", processorEndpoints, "none"),
	...routesOf("/admin", adminEndpoints, "admin"),
	...routesOf("/demo", demoEndpoints, "none"),
	...routesOf("/actuator", actuatorEndpoints, "none"),
	...routesOf("/dashboard/api", dashboardSignInEndpoints, "none"),
	...routesOf("/dashboard/api", dashboardEndpoints, "dashboard"),
	...routesOf("/portal/api", portalEndpoints, "portal"),
];

/** The methods a route's path answers, in the order of `Allow`: every route's at that path, and HEAD beside a GET that is safe to repeat. */
function methodsAt(path: string): string[] {
	const own = ROUTES.filter(r => r.path === path).flatMap(r =>
		r.method === "GET" && !r.endpoint.changesState ? ["GET", "HEAD"] : [r.method],
	);
	return METHODS.filter(m => own.includes(m));
}

interface RawAnswer {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: string;
}

function send(app: TestApp, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
	return new Promise((resolve, reject) => {
		// Node's client frames a GET's body only when told its length.
		const framing = body ? { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) } : {};
		const req = http.request(`${app.url}${path}`, { method, headers: { ...headers, ...framing } }, res => {
			const chunks: Buffer[] = [];
			res.on("data", chunk => chunks.push(chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
		});
		req.on("error", reject);
		req.end(body);
	});
}

let app: TestApp;
let shop: Shop;
let ids: Record<string, string | number>;
/** An operator's dashboard session: its cookie and CSRF token. */
let dashboard: { cookie: string; csrf: string };
let portal: { cookie: string; csrf: string };
const DASHBOARD_PASSWORD = "a dashboard password";
/** A valid request of each route: its query string or its JSON body. */
let samples: Record<string, { query?: string; body?: object }>;

/** Everything a wrongly routed request could change, read through the API. */
async function readBack(): Promise<unknown> {
	const a = admin(app);
	const account = `/accounts/${shop.accountId}`;
	const reads = await Promise.all([
		a.get("/accounts"),
		a.get(account),
		a.get(`${account}/products`),
		a.get(`${account}/merchant-accounts`),
		a.get(`${account}/bin-blacklist`),
		a.get(`${account}/blocked-buyers`),
		a.get(`${account}/coupons`),
		a.get(`${account}/customers`),
		a.get(`${account}/customers/${ids.customerId}/transactions`),
		a.get(`${account}/webhooks`),
		a.get("/sandbox/operations?cardBin=424242"),
		a.get(`${account}/dashboard-users`),
		app.http().get(`/api/customer/${ids.customerId}`).set(bearer(shop)),
		app.http().get(`/api/transaction/${ids.transactionId}`).set(bearer(shop)),
		app.http().get(`/api/session?sessionId=${ids.sessionId}`).set(bearer(shop)),
	]);
	return reads.map(res => [res.status, res.body]);
}

beforeAll(async () => {
	app = await startApp();
	shop = await createShop(app);
	// Without a webhook URL the account's events wait, so its deliveries stay as they are.
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: null }).expect(200);
	const checkout = await submitCheckout(app, shop, { productId: shop.products.charge });
	const customerId = checkout.body.customerId as number;
	const [transaction] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "400000" }).expect(201);
	await admin(app).post(`/accounts/${shop.accountId}/blocked-buyers`, { email: "blocked@example.com" }).expect(201);
	const coupon = (
		await admin(app).post(`/accounts/${shop.accountId}/coupons`, { code: "METHODS", percentOff: 10, duration: "once" }).expect(201)
	).body;
	const [delivery] = await eventually(async () => {
		const waiting = await deliveriesOf(app, shop, "WAITING");
		expect(waiting.length).toBeGreaterThan(0);
		return waiting;
	});
	const sessionId = (await app.http().post("/api/session?domain=shop.example.com").set(bearer(shop)).expect(200)).text;
	const user = (
		await admin(app)
			.post(`/accounts/${shop.accountId}/dashboard-users`, {
				email: "operator@shop.example.com",
				role: "operator",
				password: DASHBOARD_PASSWORD,
			})
			.expect(201)
	).body;
	const signedIn = await app
		.http()
		.post("/dashboard/api/sign-in")
		.set("Origin", app.url)
		.send({ email: user.email, password: DASHBOARD_PASSWORD })
		.expect(200);
	dashboard = { cookie: String(signedIn.headers["set-cookie"]).split(";")[0], csrf: signedIn.body.csrfToken };
	// A buyer's portal session, and a link for POST /portal/api/open.
	await admin(app)
		.patch(`/accounts/${shop.accountId}`, { portal: { enabled: true, pause: true } })
		.expect(200);
	const link = async () =>
		(await app.http().post(`/api/customer/${customerId}/portal-session`).set(bearer(shop)).send({}).expect(200)).body.url.split("#")[1];
	const opened = await app
		.http()
		.post("/portal/api/open")
		.set("Origin", app.url)
		.send({ token: await link() })
		.expect(200);
	const portalCookie = String(opened.headers["set-cookie"]).split(";")[0];
	portal = { cookie: portalCookie, csrf: (await app.http().get("/portal/api/me").set("Cookie", portalCookie).expect(200)).body.csrfToken };
	const openToken = await link();
	// A checkout stopped at its 3-D Secure challenge, for the continuation and the sandbox's challenge page.
	const challengedSession = (await app.http().post("/api/session?domain=shop.example.com").set(bearer(shop)).expect(200)).text;
	const challenge = (
		await app
			.http()
			.post("/api/checkout")
			.send(await checkoutBody(app, shop, { productId: shop.products.charge, card: CARDS.challenge, sessionId: challengedSession }))
			.expect(200)
	).body as { challengeUrl: string };
	ids = {
		challengeId: String(new URL(challenge.challengeUrl, app.url).searchParams.get("challenge")),
		userId: user.id,
		accountId: shop.accountId,
		customerId,
		transactionId: transaction.id,
		productId: shop.products.charge,
		midId: shop.mids[0],
		bin: "400000",
		kind: "email",
		value: "blocked@example.com",
		eventId: delivery.id,
		sessionId,
		couponId: coupon.id,
		// An Adyen return token no challenge was asked under: the route keeps nothing for it.
		token: "A".repeat(43),
	};
	const future = "2099-01-01T00:00:00Z";
	samples = {
		"POST /api/session": { query: "domain=shop.example.com" },
		"GET /api/session": { query: `sessionId=${sessionId}` },
		"GET /api/customer/:id": {},
		"GET /api/transaction/:id": {},
		"GET /api/customers": { query: "limit=5" },
		"GET /api/transactions": { query: "limit=5" },
		"GET /api/customer/:id/transactions": {},
		"GET /api/events": { query: "limit=5" },
		"GET /api/events/:id": {},
		"GET /api/refund/:id": { query: "amountToRefund=1.00" },
		"GET /api/invoices": { query: "limit=5" },
		"GET /api/invoice/:id": {},
		"GET /api/invoice/:id/pdf": {},
		"GET /api/credit-notes": { query: "limit=5" },
		"GET /api/credit-note/:id": {},
		"GET /api/credit-note/:id/pdf": {},
		"GET /api/buyer/invoices/:id/:signature": {},
		"GET /api/buyer/invoices/:id/:signature/pdf": {},
		"GET /api/buyer/credit-notes/:id/:signature": {},
		"GET /api/buyer/credit-notes/:id/:signature/pdf": {},
		"GET /api/disputes": { query: "limit=5" },
		"GET /api/metrics": { query: "granularity=week" },
		"GET /api/disputes/:id": {},
		"POST /api/disputes/:id/evidence": { body: { evidence: { uncategorized_text: "Delivered" } } },
		"POST /api/unsubscribe/:customerId": {},
		"POST /api/customer/:id/pause": {},
		"POST /api/customer/:id/resume": {},
		"POST /api/customer/:id/cancel-at-period-end": {},
		"DELETE /api/customer/:id/cancel-at-period-end": {},
		"POST /api/customer/:id/change-quote": { body: { quantity: 2, mode: "now_prorated" } },
		"POST /api/customer/:id/change": { body: { quantity: 2, mode: "at_period_end" } },
		"DELETE /api/customer/:id/pending-change": {},
		"POST /api/customer/:id/credit-refund": {},
		"POST /api/customer/:id/coupon": { body: { couponId: coupon.id } },
		"DELETE /api/customer/:id/coupon": {},
		"POST /api/usage": { body: { events: [{ id: "wrong-method", customerId, meter: "calls", timestamp: new Date().toISOString() }] } },
		"GET /api/customer/:id/usage": {},
		"GET /api/customer/:id/usage-events": { query: "limit=5" },
		"GET /api/openapi.json": {},
		"GET /api/checkout/key": {},
		"POST /api/checkout": { body: await checkoutBody(app, shop, { productId: shop.products.oneOff, card: CARDS.mastercard }) },
		"POST /api/card-update": {
			body: {
				sessionId: (await cardUpdateSession(app, shop, Number(ids.customerId)).expect(200)).text,
				landingDomain: "shop.example.com",
				encryptedCardNumber: await encrypt(app, CARDS.mastercard),
				encryptedCvc: await encrypt(app, "123"),
				cardExpiry: "1234",
			},
		},
		"POST /api/card-update-link": { body: { token: "A".repeat(43) } },
		"POST /api/checkout/continue": { body: { sessionId: challengedSession, landingDomain: "shop.example.com" } },
		"POST /api/card-update/continue": {
			body: { sessionId: (await cardUpdateSession(app, shop, Number(ids.customerId)).expect(200)).text, landingDomain: "shop.example.com" },
		},
		"POST /api/sandbox/challenges/:challengeId": { body: { result: "complete" } },
		"POST /api/processors/stripe/:midId/events": { body: { id: "evt_1", object: "event", type: "charge.dispute.created" } },
		"POST /api/processors/adyen/:midId/notifications": { body: { live: "false", notificationItems: [] } },
		"GET /api/processors/adyen/returns/:token": { query: "redirectResult=X6XtfGC3%21Y" },
		"POST /dashboard/api/customers/:customerId/card-update-link": {},
		"GET /demo/session": {},
		"GET /actuator/health": {},
		"POST /admin/accounts": { body: { name: "Made by a wrong method", environment: "sandbox" } },
		"GET /admin/accounts": {},
		"GET /admin/accounts/:accountId": {},
		"PATCH /admin/accounts/:accountId": { body: { environment: "production" } },
		"POST /admin/accounts/:accountId/tokens": { body: { graceSeconds: 0 } },
		"POST /admin/accounts/:accountId/merchant-accounts": { body: { name: "MID X", group: "default", cardTypes: ["visa"] } },
		"GET /admin/accounts/:accountId/merchant-accounts": {},
		"GET /admin/accounts/:accountId/merchant-account-health": {},
		"GET /admin/accounts/:accountId/metrics": { query: "granularity=month" },
		"PATCH /admin/accounts/:accountId/merchant-accounts/:id": { body: { name: "MID A" } },
		"POST /admin/accounts/:accountId/products": {
			body: { name: "X", amount: 1, currency: "EUR", billing: "CHARGE", merchantAccountGroup: "default" },
		},
		"GET /admin/accounts/:accountId/products": {},
		"PATCH /admin/accounts/:accountId/products/:productId": { body: { active: false } },
		"POST /admin/accounts/:accountId/meters": { body: { code: "wrong-method", name: "Made by a wrong method", aggregation: "count" } },
		"GET /admin/accounts/:accountId/meters": {},
		"POST /admin/accounts/:accountId/bin-blacklist": { body: { bin: "555555" } },
		"GET /admin/accounts/:accountId/bin-blacklist": {},
		"DELETE /admin/accounts/:accountId/bin-blacklist/:bin": {},
		"POST /admin/accounts/:accountId/blocked-buyers": { body: { email: "blocked-by-a-wrong-method@example.com" } },
		"GET /admin/accounts/:accountId/blocked-buyers": {},
		"DELETE /admin/accounts/:accountId/blocked-buyers/:kind/:value": {},
		"POST /admin/accounts/:accountId/coupons": { body: { code: "WRONG-METHOD", percentOff: 5, duration: "once" } },
		"GET /admin/accounts/:accountId/coupons": {},
		"POST /admin/accounts/:accountId/coupons/:couponId/deactivate": {},
		"GET /admin/accounts/:accountId/customers": {},
		"GET /admin/accounts/:accountId/customers/:customerId/transactions": {},
		"GET /admin/accounts/:accountId/customers/:customerId/emails": {},
		"GET /admin/accounts/:accountId/recovery": {},
		"GET /admin/sandbox/operations": {},
		"GET /admin/accounts/:accountId/webhooks": {},
		"POST /admin/accounts/:accountId/webhooks/redeliver": {},
		"POST /admin/webhooks/:eventId/redeliver": {},
		"POST /admin/accounts/:accountId/dashboard-users": {
			body: { email: "made-by-a-wrong-method@shop.example.com", role: "viewer", password: DASHBOARD_PASSWORD },
		},
		"GET /admin/accounts/:accountId/dashboard-users": {},
		"PATCH /admin/accounts/:accountId/dashboard-users/:userId": { body: { disabled: true } },
		"POST /dashboard/api/sign-in": { body: { email: "operator@shop.example.com", password: DASHBOARD_PASSWORD } },
		"POST /dashboard/api/sign-out": {},
		"GET /dashboard/api/me": {},
		"GET /dashboard/api/customers": {},
		"GET /dashboard/api/customers/:id": {},
		"GET /dashboard/api/customers/:id/transactions": {},
		"GET /dashboard/api/customers/:customerId/emails": {},
		"GET /dashboard/api/customers/:customerId/invoices": {},
		"GET /dashboard/api/email-settings": {},
		"PATCH /dashboard/api/email-settings": { body: { language: "de" } },
		"GET /dashboard/api/transactions": {},
		"GET /dashboard/api/events": {},
		"GET /dashboard/api/webhooks": {},
		"GET /dashboard/api/products": {},
		"GET /dashboard/api/merchant-accounts": {},
		"GET /dashboard/api/merchant-accounts/health": {},
		"PATCH /dashboard/api/merchant-accounts/:id/processor": { body: { processor: null } },
		"GET /dashboard/api/metrics": { query: `midId=${shop.mids[0]}` },
		"GET /dashboard/api/disputes": { query: "limit=5" },
		"GET /dashboard/api/audit": {},
		"GET /dashboard/api/coupons": {},
		"POST /dashboard/api/coupons": { body: { code: "WRONG-METHOD-2", percentOff: 5, duration: "once" } },
		"POST /dashboard/api/coupons/:couponId/deactivate": {},
		"POST /dashboard/api/transactions/:id/refund": { body: { amountToRefund: "1.00" } },
		"POST /dashboard/api/customers/:customerId/unsubscribe": {},
		"POST /dashboard/api/customers/:id/pause": {},
		"POST /dashboard/api/customers/:id/resume": {},
		"POST /dashboard/api/customers/:id/cancel-at-period-end": {},
		"DELETE /dashboard/api/customers/:id/cancel-at-period-end": {},
		"POST /dashboard/api/customers/:id/change-quote": { body: { quantity: 2, mode: "now_prorated" } },
		"POST /dashboard/api/customers/:id/change": { body: { quantity: 2, mode: "at_period_end" } },
		"DELETE /dashboard/api/customers/:id/pending-change": {},
		"POST /dashboard/api/webhooks/:eventId/redeliver": {},
		"POST /dashboard/api/clock": { body: { advanceTo: future } },
		"GET /dashboard/api/portal-settings": {},
		"PATCH /dashboard/api/portal-settings": { body: { pause: true } },
		"GET /dashboard/api/meters": {},
		"POST /dashboard/api/meters": { body: { code: "wrong-method-2", name: "Made by a wrong method", aggregation: "count" } },
		"GET /dashboard/api/customers/:id/usage": {},
		"GET /dashboard/api/customers/:id/usage-events": {},
		"POST /admin/renewals/run": { body: { at: future } },
		"POST /api/customer/:id/portal-session": {},
		"POST /portal/api/open": { body: { token: openToken } },
		"POST /portal/api/sign-in": { body: { accountId: shop.accountId, email: "someone@example.com" } },
		"GET /portal/api/me": {},
		"GET /portal/api/subscriptions/:id/documents": {},
		"POST /portal/api/subscriptions/:id/change-quote": { body: { quantity: 2 } },
		"POST /portal/api/subscriptions/:id/change": { body: { quoteId: `q_${"0".repeat(32)}` } },
		"POST /portal/api/subscriptions/:id/pause": {},
		"POST /portal/api/subscriptions/:id/resume": {},
		"POST /portal/api/subscriptions/:id/cancel": { body: { when: "period_end", reason: "other" } },
		"DELETE /portal/api/subscriptions/:id/cancel": {},
		"POST /portal/api/subscriptions/:id/retention-offer": {},
		"POST /portal/api/subscriptions/:id/card-session": {},
		"POST /portal/api/sign-out": {},
		"POST /admin/accounts/:accountId/clock": { body: { advanceTo: future } },
	};
});
afterAll(() => app.stop());

function urlOf(route: Route): string {
	const path = route.path.replace(/:(\w+)/g, (_, name: string) =>
		String(
			name !== "id"
				? ids[name]
				: route.path.includes("/merchant-accounts/")
					? ids.midId
					: route.path.includes("/customer/") || route.path.includes("/customers/") || route.path.includes("/subscriptions/")
						? ids.customerId
						: route.path.includes("/events/")
							? ids.eventId
							: ids.transactionId,
		),
	);
	const query = samples[`${route.method} ${route.path}`]?.query;
	return query ? `${path}?${query}` : path;
}

function credentials(route: Route): Record<string, string> {
	if (route.auth === "admin") return { Authorization: `Bearer ${ADMIN_TOKEN}` };
	if (route.auth === "api") return bearer(shop);
	if (route.auth === "dashboard") return { Cookie: dashboard.cookie, "X-CSRF-Token": dashboard.csrf, Origin: app.url };
	if (route.auth === "portal") return { Cookie: portal.cookie, "X-CSRF-Token": portal.csrf, Origin: app.url };
	return {};
}

describe("The route tables", () => {
	test("When a route is added, then this test has a valid request for it", () => {
		// Act
		const missing = ROUTES.map(r => `${r.method} ${r.path}`).filter(name => !(name in samples));

		// Assert
		expect(missing).toEqual([]);
	});
});

describe("Every other method on every route", () => {
	test("When each route gets every method but its own, then nothing runs: a bare preflight, or 405 naming the route's methods, and the state reads back unchanged", async () => {
		// Arrange
		const before = await readBack();
		const answers: string[] = [];

		// Act
		for (const route of ROUTES) {
			const sample = samples[`${route.method} ${route.path}`];
			const body = sample.body ? JSON.stringify(sample.body) : undefined;
			for (const method of METHODS.filter(m => !methodsAt(route.path).includes(m))) {
				// An OPTIONS both bare and as a browser's preflight of the route's own method; every request also asks for the
				// route's method through the override headers some frameworks honour.
				const variants: Record<string, string>[] =
					method === "OPTIONS" ? [{}, { "Access-Control-Request-Method": route.method, Origin: "https://shop.example.com" }] : [{}];
				for (const variant of variants) {
					const overrides = Object.fromEntries(OVERRIDE_HEADERS.map(name => [name, route.method]));
					const res = await send(
						app,
						method,
						urlOf(route),
						{ ...credentials(route), ...overrides, ...variant },
						method === "HEAD" ? undefined : body,
					).catch(err => {
						throw new Error(`${method} ${route.path}: ${err.message}`);
					});
					const preflight = method === "OPTIONS" && CORS_PREFIXES.some(prefix => route.path.startsWith(`${prefix}/`));
					const expected = preflight ? "204 -" : `405 ${methodsAt(route.path).join(", ")}`;
					const got = `${res.status} ${res.status === 405 ? res.headers.allow : "-"}`;
					if (got !== expected || (preflight && res.body !== "")) answers.push(`${method} ${route.path}: ${got} ${res.body.slice(0, 200)}`);
				}
			}
		}

		// Assert
		expect(answers).toEqual([]);
		expect(await readBack()).toEqual(before);
	});

	test("When a browser preflights a money-moving GET, then it gets the CORS headers and no refund is made", async () => {
		// Act
		const res = await send(app, "OPTIONS", `/api/refund/${ids.transactionId}`, {
			...bearer(shop),
			Origin: "https://shop.example.com",
			"Access-Control-Request-Method": "GET",
		});
		const transaction = await app.http().get(`/api/transaction/${ids.transactionId}`).set(bearer(shop));

		// Assert
		expect(res.status).toBe(204);
		expect(res.headers["access-control-allow-origin"]).toBe("*");
		expect(res.headers["access-control-allow-methods"]).toContain("GET");
		expect(transaction.body.refundStatus).toBe("REFUNDABLE");
	});

	test("When a GET that reads is sent as HEAD, then it answers the GET's status without a body", async () => {
		// Act
		const res = await send(app, "HEAD", `/api/customer/${ids.customerId}`, bearer(shop));

		// Assert
		expect(res.status).toBe(200);
		expect(res.headers["content-type"]).toMatch(/^application\/json/);
		expect(res.body).toBe("");
	});

	test("When an unknown path gets OPTIONS outside the CORS routes, then 404 and nothing runs", async () => {
		// Act
		const res = await send(app, "OPTIONS", "/admin/nothing", { Authorization: `Bearer ${ADMIN_TOKEN}` });

		// Assert
		expect(res.status).toBe(404);
		expect(JSON.parse(res.body)).toEqual({ error: "NOT_FOUND", status: 404 });
	});

	test("When any answer is sent, then it carries X-Content-Type-Options: nosniff, the spec's plain-text 500 included", async () => {
		// Act
		const badDomain = await send(app, "POST", "/api/session?domain=not%20a%20host", bearer(shop));
		const json = await send(app, "GET", `/api/customer/${ids.customerId}`, bearer(shop));
		const preflight = await send(app, "OPTIONS", "/api/session", { Origin: "https://x.example", "Access-Control-Request-Method": "POST" });

		// Assert
		expect(badDomain.status).toBe(500);
		expect(badDomain.headers["content-type"]).toMatch(/^text\/plain/);
		for (const res of [badDomain, json, preflight]) expect(res.headers["x-content-type-options"]).toBe("nosniff");
	});
});
