import { checkoutBody, createShop } from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;

beforeAll(async () => {
	app = await startApp({ env: { RATE_LIMIT_PER_SECOND: "5", AUTH_FAILURES_PER_MINUTE: "4" } });
});
afterAll(() => app.stop());

describe("Rate limits", () => {
	test("When an account exceeds RATE_LIMIT_PER_SECOND, then 429 TOO_MANY_REQUESTS with Retry-After, and other accounts are unaffected", async () => {
		// Arrange
		const busy = await createMerchant(app);
		const quiet = await createMerchant(app);

		// Act
		const answers = await Promise.all(Array.from({ length: 8 }, () => app.http().post("/api/session?domain=a.com").set(bearer(busy))));
		const other = await app.http().post("/api/session?domain=a.com").set(bearer(quiet));

		// Assert
		const statuses = answers.map(a => a.status).sort();
		expect(statuses.filter(s => s === 200)).toHaveLength(5);
		const limited = answers.find(a => a.status === 429)!;
		expect(limited.body).toEqual({ error: "TOO_MANY_REQUESTS", status: 429, message: expect.any(String) });
		expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
		expect(other.status).toBe(200);
	});

	test("When a client address fails authentication too often, then it gets 429 even with a valid token", async () => {
		// Arrange
		const shop = await createMerchant(app);
		for (let i = 0; i < 4; i++) await app.http().get("/api/session?sessionId=x").set("Authorization", "Bearer guess").expect(401);

		// Act
		const res = await app.http().post("/api/session?domain=a.com").set(bearer(shop));

		// Assert
		expect(res.status).toBe(429);
		expect(res.body.error).toBe("TOO_MANY_REQUESTS");
	});

	test("When a client address submits more checkouts than CHECKOUTS_PER_MINUTE, then 429: the checkout needs no token, so card testing is limited per address; every POST without a token shares that limit, and the key's GET does not", async () => {
		// Arrange: an app of its own, since the test above blocks this client address.
		const own = await startApp({ env: { CHECKOUTS_PER_MINUTE: "3" } });
		const answers = [];
		const others: Record<string, number> = {};
		let key = 0;
		try {
			const shop = await createShop(own);
			const bodies = [];
			for (let i = 0; i < 4; i++) bodies.push(await checkoutBody(own, shop, { productId: shop.products.charge }));

			// Act
			for (const body of bodies) answers.push(await own.http().post("/api/checkout").send(body));
			const session = { sessionId: bodies[0].sessionId, landingDomain: "shop.example.com" };
			for (const [path, body] of [
				["/api/checkout/continue", session],
				["/api/sandbox/challenges/sbx3ds_00000000000000000000000000000000", { result: "complete" }],
				["/api/card-update", bodies[0]],
				["/api/card-update/continue", session],
				["/api/card-update-link", { token: "a".repeat(43) }],
			] as const)
				others[path] = (await own.http().post(path).send(body)).status;
			key = (await own.http().get("/api/checkout/key")).status;
		} finally {
			await own.stop();
		}

		// Assert
		expect(answers.slice(0, 3).map(a => a.body.code)).toEqual(["OK", "OK", "OK"]);
		expect(answers[3].status).toBe(429);
		expect(answers[3].body.error).toBe("TOO_MANY_REQUESTS");
		expect(Object.values(others)).toEqual([429, 429, 429, 429, 429]);
		expect(key).toBe(200);
	});

	test("When a client address tries to sign in to the dashboard more than DASHBOARD_SIGN_INS_PER_MINUTE times, then 429 with Retry-After, whatever each attempt's outcome", async () => {
		// Arrange: an app of its own, since a test above blocks this client address.
		const own = await startApp({ env: { DASHBOARD_SIGN_INS_PER_MINUTE: "3" } });
		const answers = [];
		try {
			const shop = await createMerchant(own);
			const email = `limited-${Date.now()}@shop.example.com`;
			const password = "a long dashboard password";
			await admin(own).post(`/accounts/${shop.accountId}/dashboard-users`, { email, role: "viewer", password }).expect(201);
			const attempt = (body: object) => own.http().post("/dashboard/api/sign-in").set("Origin", own.url).send(body);

			// Act
			answers.push(await attempt({ email, password }));
			answers.push(await attempt({ email, password: "not the password" }));
			answers.push(await attempt({ email: "nobody@example.com", password }));
			answers.push(await attempt({ email, password }));
		} finally {
			await own.stop();
		}

		// Assert
		expect(answers.map(a => a.status)).toEqual([200, 401, 401, 429]);
		expect(answers[3].body.message).toBe("Too many sign-in attempts from this address: try again in a minute");
		expect(Number(answers[3].headers["retry-after"])).toBeGreaterThanOrEqual(1);
	});
});
