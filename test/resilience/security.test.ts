// Security (issue 7, section 3), through the public surface. What other tests
// already cover is not repeated here (see docs/security.md):
// this file adds what they did not prove.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { clientKey } from "../../services/gateway/api-auth";
import { apiEndpoints } from "../../services/gateway/endpoints";
import { CARDS, createShop, newSession, type Shop, submitCheckout } from "../factories/checkout";
import { signedIn as dashboardSession } from "../factories/dashboard-session";
import { admin, advanceClock, bearer, createMerchant, type TestMerchant } from "../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../factories/webhook-receiver";
import { eventually } from "../services/notifications/webhook-events";
import { ADMIN_TOKEN, startApp, type TestApp } from "../setup/app";
import { findSecretsInLog, knownSecrets } from "../setup/log-scan";

interface Answer {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: string;
}

/** A request from a chosen loopback address (127.0.0.0/8 all reach this machine), as another client would send it. */
function requestFrom(
	app: TestApp,
	localAddress: string,
	method: string,
	path: string,
	headers: Record<string, string> = {},
	body?: object,
): Promise<Answer> {
	const { port } = new URL(app.url);
	return new Promise((resolve, reject) => {
		const req = http.request({ host: "127.0.0.1", port, method, path, headers, localAddress, agent: false }, res => {
			let body = "";
			res.on("data", chunk => (body += chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
		});
		req.on("error", reject);
		if (body) req.setHeader("Content-Type", "application/json");
		req.end(body ? JSON.stringify(body) : undefined);
	});
}

/** A paid customer and its first transaction. */
async function paid(app: TestApp, shop: Shop): Promise<{ customerId: number; transactionId: number }> {
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
	const [transaction] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
	return { customerId, transactionId: transaction.id };
}

describe("Cross-account access", () => {
	let app: TestApp;
	let mine: Shop;
	let theirs: Shop;
	let their: { customerId: number; transactionId: number; sessionId: string; eventId: string; disputeId: number };

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
				"refunds",
				"notifications",
				"metrics",
				"portal",
				"usage",
				"dashboard",
			],
		});
		mine = await createShop(app);
		theirs = await createShop(app);
		const paidOne = await paid(app, theirs);
		// Their checkout's events are taken in a moment after it answers (the outbox relay).
		const eventId = await eventually(async () => {
			const [event] = (await app.http().get("/api/events?limit=1").set(bearer(theirs)).expect(200)).body.data;
			expect(event).toBeDefined();
			return event.id as string;
		});
		// A charge the sandbox disputes 3 days after it (docs/disputes.md#test-cards).
		await submitCheckout(app, theirs, { productId: theirs.products.oneOff, card: "4000000000002610" });
		await advanceClock(app, theirs, 4);
		const [dispute] = (await app.http().get("/api/disputes").set(bearer(theirs)).expect(200)).body.data;
		their = { ...paidOne, sessionId: await newSession(app, theirs), eventId, disputeId: dispute.id };
	});
	afterAll(() => app.stop());

	const UNKNOWN_ID = 987654321;
	const UNKNOWN_SESSION = "00000000-0000-4000-8000-000000000000";

	/** Each /api endpoint that names a resource: the request for another account's, and for one that does not exist. */
	const cases: Record<string, { foreign: () => [string, string]; unknown: [string, string]; body?: object }> = {
		"GET /session": {
			foreign: () => ["GET", `/api/session?sessionId=${their.sessionId}`],
			unknown: ["GET", `/api/session?sessionId=${UNKNOWN_SESSION}`],
		},
		"GET /customer/:id": { foreign: () => ["GET", `/api/customer/${their.customerId}`], unknown: ["GET", `/api/customer/${UNKNOWN_ID}`] },
		"GET /transaction/:id": {
			foreign: () => ["GET", `/api/transaction/${their.transactionId}`],
			unknown: ["GET", `/api/transaction/${UNKNOWN_ID}`],
		},
		"GET /refund/:id": { foreign: () => ["GET", `/api/refund/${their.transactionId}`], unknown: ["GET", `/api/refund/${UNKNOWN_ID}`] },
		"POST /unsubscribe/:customerId": {
			foreign: () => ["POST", `/api/unsubscribe/${their.customerId}`],
			unknown: ["POST", `/api/unsubscribe/${UNKNOWN_ID}`],
		},
		"GET /events/:id": { foreign: () => ["GET", `/api/events/${their.eventId}`], unknown: ["GET", `/api/events/${UNKNOWN_SESSION}`] },
		"GET /disputes/:id": { foreign: () => ["GET", `/api/disputes/${their.disputeId}`], unknown: ["GET", `/api/disputes/${UNKNOWN_ID}`] },
		"POST /disputes/:id/evidence": {
			foreign: () => ["POST", `/api/disputes/${their.disputeId}/evidence`],
			unknown: ["POST", `/api/disputes/${UNKNOWN_ID}/evidence`],
			body: { evidence: { uncategorized_text: "Not yours" } },
		},
		// A subscription's pause, resume and change (docs/subscriptions.md).
		"POST /customer/:id/pause": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/pause`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/pause`],
		},
		"POST /customer/:id/cancel-at-period-end": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/cancel-at-period-end`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/cancel-at-period-end`],
		},
		"DELETE /customer/:id/cancel-at-period-end": {
			foreign: () => ["DELETE", `/api/customer/${their.customerId}/cancel-at-period-end`],
			unknown: ["DELETE", `/api/customer/${UNKNOWN_ID}/cancel-at-period-end`],
		},
		"POST /customer/:id/portal-session": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/portal-session`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/portal-session`],
		},
		// Usage billing (docs/usage.md): a batch's events naming another account's customer are refused one by one.
		"GET /customer/:id/usage": {
			foreign: () => ["GET", `/api/customer/${their.customerId}/usage`],
			unknown: ["GET", `/api/customer/${UNKNOWN_ID}/usage`],
		},
		"GET /customer/:id/usage-events": {
			foreign: () => ["GET", `/api/customer/${their.customerId}/usage-events`],
			unknown: ["GET", `/api/customer/${UNKNOWN_ID}/usage-events`],
		},
		"POST /customer/:id/resume": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/resume`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/resume`],
		},
		"POST /customer/:id/change-quote": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/change-quote`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/change-quote`],
			body: { quantity: 2, mode: "now_prorated" },
		},
		"POST /customer/:id/change": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/change`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/change`],
			body: { quantity: 2, mode: "now_prorated" },
		},
		"DELETE /customer/:id/pending-change": {
			foreign: () => ["DELETE", `/api/customer/${their.customerId}/pending-change`],
			unknown: ["DELETE", `/api/customer/${UNKNOWN_ID}/pending-change`],
		},
		"POST /customer/:id/credit-refund": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/credit-refund`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/credit-refund`],
		},
		// A customer's coupon (docs/coupons.md).
		"POST /customer/:id/coupon": {
			foreign: () => ["POST", `/api/customer/${their.customerId}/coupon`],
			unknown: ["POST", `/api/customer/${UNKNOWN_ID}/coupon`],
			body: { promotionCode: "WELCOME10" },
		},
		"DELETE /customer/:id/coupon": {
			foreign: () => ["DELETE", `/api/customer/${their.customerId}/coupon`],
			unknown: ["DELETE", `/api/customer/${UNKNOWN_ID}/coupon`],
		},
		// Invoices and credit notes (docs/invoices.md): a document's id is its transaction's.
		...Object.fromEntries(
			["invoice/:id", "invoice/:id/pdf", "credit-note/:id", "credit-note/:id/pdf"].map(route => [
				`GET /${route}`,
				{
					foreign: (): [string, string] => ["GET", `/api/${route.replace(":id", String(their.transactionId))}`],
					unknown: ["GET", `/api/${route.replace(":id", String(UNKNOWN_ID))}`] as [string, string],
				},
			]),
		),
		"GET /invoices": {
			foreign: () => ["GET", `/api/invoices?customerId=${their.customerId}`],
			unknown: ["GET", `/api/invoices?customerId=${UNKNOWN_ID}`],
		},
		"GET /credit-notes": {
			foreign: () => ["GET", `/api/credit-notes?customerId=${their.customerId}`],
			unknown: ["GET", `/api/credit-notes?customerId=${UNKNOWN_ID}`],
		},
		// The lists name a customer through a filter or the path: another account's lists nothing, as an unknown one.
		"GET /customer/:id/transactions": {
			foreign: () => ["GET", `/api/customer/${their.customerId}/transactions`],
			unknown: ["GET", `/api/customer/${UNKNOWN_ID}/transactions`],
		},
		"GET /transactions": {
			foreign: () => ["GET", `/api/transactions?customerId=${their.customerId}`],
			unknown: ["GET", `/api/transactions?customerId=${UNKNOWN_ID}`],
		},
		"GET /events": {
			foreign: () => ["GET", `/api/events?customerId=${their.customerId}`],
			unknown: ["GET", `/api/events?customerId=${UNKNOWN_ID}`],
		},
		"GET /customers": {
			foreign: () => ["GET", `/api/customers?productId=${theirs.products.charge}`],
			unknown: ["GET", `/api/customers?productId=${UNKNOWN_ID}`],
		},
		"GET /metrics": {
			foreign: () => ["GET", `/api/metrics?productId=${theirs.products.charge}`],
			unknown: ["GET", `/api/metrics?productId=${UNKNOWN_ID}`],
		},
	};
	/** Endpoints whose path names nothing of an account's: creating a session, the disputes list, a batch of usage events. */
	const NAMES_NOTHING = ["POST /session", "GET /disputes", "POST /usage"];
	const LISTS = [
		"GET /customer/:id/transactions",
		"GET /transactions",
		"GET /events",
		"GET /customers",
		"GET /invoices",
		"GET /credit-notes",
	];
	/** Our additions to the spec answer a 404, as REST does: the spec's 200 answers are for the spec's routes. */
	const NOT_FOUND_404: Record<string, string> = {
		"GET /disputes/:id": "Dispute not found",
		"POST /disputes/:id/evidence": "Dispute not found",
		"POST /customer/:id/pause": "Customer not found",
		"POST /customer/:id/resume": "Customer not found",
		"POST /customer/:id/cancel-at-period-end": "Customer not found",
		"DELETE /customer/:id/cancel-at-period-end": "Customer not found",
		"POST /customer/:id/portal-session": "Customer not found",
		"GET /customer/:id/usage": "Customer not found",
		"GET /customer/:id/usage-events": "Customer not found",
		"POST /customer/:id/change-quote": "Customer not found",
		"POST /customer/:id/change": "Customer not found",
		"DELETE /customer/:id/pending-change": "Customer not found",
		"POST /customer/:id/credit-refund": "Customer not found",
		"POST /customer/:id/coupon": "Customer not found",
		"DELETE /customer/:id/coupon": "Customer not found",
		"GET /invoice/:id": "Invoice not found",
		"GET /invoice/:id/pdf": "Invoice not found",
		"GET /credit-note/:id": "Credit note not found",
		"GET /credit-note/:id/pdf": "Credit note not found",
		"GET /metrics": "Product not found",
	};

	test("When an /api endpoint names a resource, then it is in this table", () => {
		expect(
			Object.keys(apiEndpoints)
				.filter(route => !NAMES_NOTHING.includes(route))
				.sort(),
		).toEqual(Object.keys(cases).sort());
	});

	test.each(Object.keys(cases))(
		"When %s names another account's resource, then the answer is the spec's not-found answer, the same as for an id that does not exist, and nothing of theirs changes",
		async route => {
			// Arrange
			const before = {
				customer: (await app.http().get(`/api/customer/${their.customerId}`).set(bearer(theirs))).body,
				transaction: (await app.http().get(`/api/transaction/${their.transactionId}`).set(bearer(theirs))).body,
				session: (await app.http().get(`/api/session?sessionId=${their.sessionId}`).set(bearer(theirs))).body,
				dispute: (await app.http().get(`/api/disputes/${their.disputeId}`).set(bearer(theirs))).body,
			};
			const [method, path] = cases[route].foreign();
			const [unknownMethod, unknownPath] = cases[route].unknown;

			// Act
			const foreign = await requestFrom(app, "127.0.0.1", method, path, bearer(mine), cases[route].body);
			const unknown = await requestFrom(app, "127.0.0.1", unknownMethod, unknownPath, bearer(mine), cases[route].body);

			// Assert: indistinguishable, but for the id the message names.
			const idOf = (p: string) => p.split(/[/=]/).pop()!;
			expect(foreign.status).toBe(route in NOT_FOUND_404 ? 404 : 200);
			expect(foreign.body.split(idOf(path)).join("<id>")).toBe(unknown.body.split(idOf(unknownPath)).join("<id>"));
			expect(foreign.headers["content-type"]).toBe(unknown.headers["content-type"]);
			if (LISTS.includes(route)) expect(JSON.parse(foreign.body)).toEqual({ data: [], nextCursor: null });
			else if (route in NOT_FOUND_404) expect(JSON.parse(foreign.body)).toMatchObject({ status: 404, message: NOT_FOUND_404[route] });
			else if (method === "GET" && !path.startsWith("/api/refund")) expect(foreign.body).toBe("");
			else expect(JSON.parse(foreign.body)).toEqual({ success: false, message: expect.stringMatching(/ not found with ID: \d+$/) });
			expect((await app.http().get(`/api/customer/${their.customerId}`).set(bearer(theirs))).body).toEqual(before.customer);
			expect((await app.http().get(`/api/transaction/${their.transactionId}`).set(bearer(theirs))).body).toEqual(before.transaction);
			expect((await app.http().get(`/api/session?sessionId=${their.sessionId}`).set(bearer(theirs))).body).toEqual(before.session);
			expect((await app.http().get(`/api/disputes/${their.disputeId}`).set(bearer(theirs))).body).toEqual(before.dispute);
		},
	);

	test("When a dashboard operator sets the processor of another account's MID, then 404 as for a MID that does not exist, and their MID keeps its processor", async () => {
		// Arrange: an operator of our account; their MIDs as they are.
		const operator = await dashboardSession(app, mine, "operator");
		const theirMids = async () => (await admin(app).get(`/accounts/${theirs.accountId}/merchant-accounts`).expect(200)).body;
		const before = await theirMids();
		const processor = { type: "adyen", apiKey: "AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1", merchantAccount: "NotTheirs" };
		const patch = (midId: number) => operator.send("patch", `/merchant-accounts/${midId}/processor`, { processor });

		// Act
		const foreign = await patch(theirs.mids[0]);
		const unknown = await patch(UNKNOWN_ID);

		// Assert
		expect(foreign.status).toBe(404);
		expect(foreign.body).toEqual({ error: "NOT_FOUND", status: 404, message: "No merchant account with this id in the account" });
		expect(foreign.text).toBe(unknown.text);
		expect(await theirMids()).toEqual(before);
		expect(before[0].processor).toEqual({ type: "sandbox" });
	});

	test("When a checkout pays with one account's session for another account's product, then PRODUCT_NOT_FOUND and no customer is made for either", async () => {
		const res = await submitCheckout(app, mine, { productId: theirs.products.charge });

		expect(res.body).toEqual({ code: "PRODUCT_NOT_FOUND", message: expect.any(String) });
		expect((await admin(app).get(`/accounts/${mine.accountId}/customers`)).body).toEqual([]);
		expect((await admin(app).get(`/accounts/${theirs.accountId}/customers`)).body).toHaveLength(2);
	});
});

describe("Failed authentication is limited per client address", () => {
	let app: TestApp;
	let shop: TestMerchant;

	beforeAll(async () => {
		app = await startApp({ services: ["gateway", "accounts", "sessions"], env: { AUTH_FAILURES_PER_MINUTE: "3" } });
		shop = await createMerchant(app);
	});
	afterAll(() => app.stop());

	const session = (from: string, headers: Record<string, string>) =>
		requestFrom(app, from, "POST", "/api/session?domain=shop.example.com", headers);

	test("When one address guesses tokens past the limit, then it gets 429 even with a valid token, while another address is served", async () => {
		// Arrange
		for (let i = 0; i < 3; i++) expect((await session("127.0.0.11", { Authorization: `Bearer sk_test_guess${i}` })).status).toBe(401);

		// Act
		const guesser = await session("127.0.0.11", bearer(shop));
		const neighbour = await session("127.0.0.12", bearer(shop));

		// Assert
		expect(guesser.status).toBe(429);
		expect(JSON.parse(guesser.body)).toEqual({ error: "TOO_MANY_REQUESTS", status: 429, message: "Too many requests, retry later" });
		expect(Number(guesser.headers["retry-after"])).toBeGreaterThanOrEqual(1);
		expect(neighbour.status).toBe(200);
	});

	test("When the guesses claim other addresses in X-Forwarded-For, then they still count against the connection's address, and the header cannot lift the block", async () => {
		// Arrange
		for (let i = 0; i < 3; i++) await session("127.0.0.13", { Authorization: "Bearer sk_test_guess", "X-Forwarded-For": `10.0.0.${i}` });

		// Act
		const claimingAnother = await session("127.0.0.13", { ...bearer(shop), "X-Forwarded-For": "10.9.9.9" });

		// Assert
		expect(claimingAnother.status).toBe(429);
	});

	test("When the guesses are at the admin token, then they count too: the address is blocked on /api as well", async () => {
		for (let i = 0; i < 3; i++)
			expect((await requestFrom(app, "127.0.0.14", "GET", "/admin/accounts", { Authorization: "Bearer not-the-admin-token" })).status).toBe(
				401,
			);

		const api = await session("127.0.0.14", bearer(shop));
		const adminApi = await requestFrom(app, "127.0.0.14", "GET", "/admin/accounts", { Authorization: `Bearer ${ADMIN_TOKEN}` });

		expect([api.status, adminApi.status]).toEqual([429, 429]);
	});

	test.each([
		["203.0.113.7", "itself", "203.0.113.7"],
		["::ffff:203.0.113.7", "the IPv4 address it maps", "203.0.113.7"],
		["2001:db8:1:2:aaaa::1", "its /64", "2001:db8:1:2::/64"],
		["2001:db8:1:2:ffff:ffff:ffff:ffff", "the same /64: one client", "2001:db8:1:2::/64"],
		["2001:db8:1:3::1", "another /64: another client", "2001:db8:1:3::/64"],
	])("When a client connects from %s, then its limits count against %s", (address, _, key) => {
		expect(clientKey(address)).toBe(key);
	});
});

describe("Secrets in the logs", () => {
	let app: TestApp;
	let receiver: WebhookReceiver;
	const lines: string[] = [];

	beforeAll(async () => {
		receiver = await startWebhookReceiver();
		// Debug: the most the service ever logs, moleculer-web's request lines included.
		app = await startApp({ logLevel: "debug", onLog: line => lines.push(line) });
	});
	afterAll(async () => {
		await app.stop();
		await receiver.stop();
	});

	test("When merchants and operators use, misuse and rotate their secrets, then no token, webhook secret, key, card number or CVC appears in any log line", async () => {
		// Arrange: an account, its token used, misused and rotated, its webhooks signed and sent.
		const shop = await createShop(app);
		await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
		const rotated = (await admin(app).post(`/accounts/${shop.accountId}/tokens`, { graceSeconds: 60 }).expect(201)).body.apiToken as string;
		const token = shop.apiToken;

		// Act
		await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa });
		await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.failsVerification });
		await app.http().post("/api/checkout").send({ cardNumber: CARDS.mastercard, cvc: "737", encryptedCardNumber: CARDS.amex });
		// A token where it does not belong: in the query string, as a session's domain, as a request id.
		await app.http().post(`/api/session?domain=shop.example.com&access_token=${token}`).set(bearer(shop));
		await app
			.http()
			.post(`/api/session?domain=${token}`)
			.set({ Authorization: `Bearer ${rotated}` });
		await app.http().get(`/api/customer/1?token=${rotated}`).set("X-Request-ID", token);
		await app.http().get("/admin/accounts").set("Authorization", `Bearer ${ADMIN_TOKEN}x`);
		await app.http().get(`/admin/accounts?key=${ADMIN_TOKEN}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`);
		await app
			.http()
			.get("/api/customer/1")
			.set("Authorization", `Bearer ${token.slice(0, -1)}`);
		await app.http().get(`/api/session/${shop.webhookSecret}`).set(bearer(shop));
		await receiver.waitForRequests(2);
		await app.stop();

		// Assert
		const secrets: [string, string][] = [
			...knownSecrets(),
			["the API token", token],
			["the rotated API token", rotated],
			["the webhook secret", shop.webhookSecret],
		];
		expect(lines.length).toBeGreaterThan(100);
		expect(findSecretsInLog(lines.join("\n"), "debug log", secrets)).toEqual([]);
	});
});

describe("Security headers of the SDK, the card frame and the demo", () => {
	let app: TestApp;
	let shop: TestMerchant;

	beforeAll(async () => {
		app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout"] });
		shop = await createMerchant(app);
	});
	afterAll(() => app.stop());

	const FRAME_POLICY =
		"default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-src 'self' https:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors";

	test.each([
		"/sdk/checkout.js",
		"/checkout/frame.html",
		"/checkout/frame.js",
		"/checkout/card.js",
		"/checkout/frame.css",
		"/checkout/challenge.html",
		"/checkout/challenge-return.html",
		"/demo/",
		"/demo/demo.js",
		"/vendor/jose/index.js",
		"/vendor/chart.js/chart.umd.min.js",
	])("When %s is fetched, then it has a Content-Security-Policy, X-Content-Type-Options: nosniff and a Referrer-Policy", async path => {
		const res = await app.http().get(path);

		expect(res.status).toBe(200);
		expect(res.headers["content-security-policy"]).toMatch(/frame-ancestors /);
		expect(res.headers["content-security-policy"]).toMatch(/object-src 'none'|default-src 'none'/);
		expect(res.headers["x-content-type-options"]).toBe("nosniff");
		expect(res.headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
	});

	test("When the card frame is opened for a session, then only the session's domain may embed it, on any port", async () => {
		const sessionId = await newSession(app, shop, "Shop.Example.com");

		const res = await app.http().get(`/checkout/frame.html?sessionId=${sessionId.toUpperCase()}&productId=1&domain=shop.example.com`);

		expect(res.headers["content-security-policy"]).toBe(`${FRAME_POLICY} shop.example.com:*`);
	});

	test.each([
		["no session", ""],
		["an unknown session", "?sessionId=00000000-0000-4000-8000-000000000000&domain=evil.example"],
		["a malformed session id", "?sessionId=%7B%22%24gt%22%3A%22%22%7D&domain=evil.example"],
		["a session id twice", "?sessionId=a&sessionId=b"],
	])("When the card frame is opened with %s, then no site may embed it", async (_, query) => {
		const res = await app.http().get(`/checkout/frame.html${query}`);

		expect(res.status).toBe(200);
		expect(res.headers["content-security-policy"]).toBe(`${FRAME_POLICY} 'none'`);
	});

	test("When the card frame is revalidated (304), then the answer still carries the session's policy", async () => {
		const sessionId = await newSession(app, shop, "other.example.com");
		const first = await app.http().get(`/checkout/frame.html?sessionId=${sessionId}`);

		const again = await app.http().get(`/checkout/frame.html?sessionId=${sessionId}`).set("If-None-Match", String(first.headers.etag));

		expect(again.status).toBe(304);
		expect(again.headers["content-security-policy"]).toBe(`${FRAME_POLICY} other.example.com:*`);
	});
});

describe("Webhook URLs of production accounts (SSRF)", () => {
	let app: TestApp;
	let receiver: WebhookReceiver;

	beforeAll(async () => {
		receiver = await startWebhookReceiver();
		app = await startApp({
			services: ["gateway", "accounts", "notifications"],
			env: { WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_RETRY_HOURS: "0.0005" },
		});
	});
	afterAll(async () => {
		await app.stop();
		await receiver.stop();
	});

	// Other spellings of 127.0.0.1, which the URL parser turns into it; the plain ones are in test/services/notifications.
	test.each(["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[0:0:0:0:0:ffff:7f00:1]", "[::ffff:7f00:1]"])(
		"When the webhook URL's host is %s, then the receiver on 127.0.0.1 is never reached and the refusal is recorded",
		async host => {
			// Arrange
			const live = await createMerchant(app, { environment: "production" });
			await admin(app)
				.patch(`/accounts/${live.accountId}`, { webhookUrl: `http://${host}:${receiver.port}/webhooks` })
				.expect(200);
			const event = {
				id: randomUUID(),
				type: "CANCELLATION",
				createdAt: "2026-11-22T10:00:00.000",
				accountId: live.accountId,
				customerId: 1,
				transaction_id: null,
				data: {},
			};

			// Act: handed over as billing's outbox relay does (a production account's checkout would need a real processor).
			await app.broker.call("notifications.enqueueAll", { events: [event] });
			let lastError: string | null = null;
			for (let i = 0; i < 100 && !lastError; i++) {
				await new Promise(resolve => setTimeout(resolve, 50));
				const [delivery] = (await admin(app).get(`/accounts/${live.accountId}/webhooks`)).body;
				lastError = delivery?.lastError ?? null;
			}

			// Assert
			expect(lastError).toMatch(/^refused: .* is a loopback address$/);
			expect(receiver.requests).toEqual([]);
		},
	);
});

describe("Requests no merchant meant to send cannot move money", () => {
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds"] });
		shop = await createShop(app);
	});
	afterAll(() => app.stop());

	test("When a refund is sent as a bare OPTIONS, as HEAD, or as a preflight, with a valid token, then nothing is refunded", async () => {
		// Arrange
		const { transactionId } = await paid(app, shop);
		const path = `/api/refund/${transactionId}`;

		// Act
		const answers = [
			await requestFrom(app, "127.0.0.1", "OPTIONS", path, bearer(shop)),
			await requestFrom(app, "127.0.0.1", "HEAD", path, bearer(shop)),
			await requestFrom(app, "127.0.0.1", "OPTIONS", path, {
				...bearer(shop),
				"Access-Control-Request-Method": "GET",
				Origin: "https://evil.example",
			}),
		];
		const transaction = await app.http().get(`/api/transaction/${transactionId}`).set(bearer(shop));

		// Assert
		expect(answers.map(a => a.status)).toEqual([204, 405, 204]);
		expect(transaction.body.refundStatus).toBe("REFUNDABLE");
	});

	test("When an unsubscribe is asked for through a method-override header on a GET, then the customer stays ACTIVE", async () => {
		// Arrange
		const { customerId } = await paid(app, shop);

		// Act
		const answers = await Promise.all(
			["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"].map(header =>
				requestFrom(app, "127.0.0.1", "GET", `/api/unsubscribe/${customerId}`, { ...bearer(shop), [header]: "POST" }),
			),
		);
		const customer = await app.http().get(`/api/customer/${customerId}`).set(bearer(shop));

		// Assert
		expect(answers.map(a => [a.status, a.headers.allow])).toEqual(Array(3).fill([405, "POST"]));
		expect(customer.body.status).toBe("ACTIVE");
	});

	test("When an admin route is preflighted for DELETE, then the BIN stays blocked", async () => {
		// Arrange
		await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "412345" }).expect(201);

		// Act
		const res = await requestFrom(app, "127.0.0.1", "OPTIONS", `/admin/accounts/${shop.accountId}/bin-blacklist/412345`, {
			Authorization: `Bearer ${ADMIN_TOKEN}`,
			"Access-Control-Request-Method": "DELETE",
		});

		// Assert
		expect(res.status).toBe(405);
		expect((await admin(app).get(`/accounts/${shop.accountId}/bin-blacklist`)).body).toContain("412345");
	});

	test("When a token rotation's graceSeconds is null, then the old token is not cut off (null is not 0)", async () => {
		// Arrange
		const merchant = await createMerchant(app);

		// Act
		const res = await admin(app).post(`/accounts/${merchant.accountId}/tokens`, { graceSeconds: null });

		// Assert
		expect(res.status).toBe(400);
		expect((await app.http().get("/api/customer/1").set(bearer(merchant))).status).toBe(200);
	});

	test("When the spec's plain-text 500 echoes a domain that looks like HTML, then the browser is told not to sniff it", async () => {
		// Act
		const res = await requestFrom(
			app,
			"127.0.0.1",
			"POST",
			`/api/session?domain=${encodeURIComponent("<script>alert(1)</script>")}`,
			bearer(shop),
		);

		// Assert
		expect(res.status).toBe(500);
		expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
		expect(res.headers["x-content-type-options"]).toBe("nosniff");
	});
});
