import { admin, bearer, createMerchant, type TestMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let merchant: TestMerchant;

beforeAll(async () => {
	app = await startApp();
	merchant = await createMerchant(app);
});
afterAll(() => app.stop());

const UNAUTHORIZED = { error: "UNAUTHORIZED", status: 401 };

describe("Bearer authentication on /api", () => {
	test.each([
		["no Authorization header", {}],
		["an unknown token", { Authorization: "Bearer sk_test_unknown" }],
		["a scheme other than Bearer", { Authorization: "Basic dXNlcjpwYXNz" }],
		["an empty Bearer", { Authorization: "Bearer " }],
		["a token with a NoSQL operator", { Authorization: 'Bearer {"$gt":""}' }],
	])("When the request has %s, then 401 with exactly the documented JSON", async (_, headers) => {
		// Act
		const res = await app.http().post("/api/session?domain=shop.example.com").set(headers);

		// Assert
		expect(res.status).toBe(401);
		expect(res.headers["content-type"]).toMatch(/^application\/json/);
		expect(res.text).toBe(JSON.stringify(UNAUTHORIZED));
	});

	test("When the token is valid, then the request is served", async () => {
		const res = await app.http().post("/api/session?domain=shop.example.com").set(bearer(merchant));

		expect(res.status).toBe(200);
	});

	test("When the account is created, then its token and webhook secret are shown once and never again", async () => {
		const list = await admin(app).get(`/accounts/${merchant.accountId}`);

		expect(merchant.apiToken).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
		expect(merchant.webhookSecret).toMatch(/^whsec_/);
		expect(JSON.stringify(list.body)).not.toContain(merchant.apiToken);
		expect(JSON.stringify(list.body)).not.toContain(merchant.webhookSecret);
	});
});

describe("POST /admin/accounts/:accountId/tokens (rotation)", () => {
	test("When a token is rotated with the default grace period, then old and new tokens both work", async () => {
		// Arrange
		const shop = await createMerchant(app);

		// Act
		const res = await admin(app).post(`/accounts/${shop.accountId}/tokens`);

		// Assert
		expect(res.status).toBe(201);
		expect(res.body.apiToken).toMatch(/^sk_test_/);
		const withOld = await app.http().post("/api/session?domain=a.com").set(bearer(shop));
		const withNew = await app
			.http()
			.post("/api/session?domain=a.com")
			.set({ Authorization: `Bearer ${res.body.apiToken}` });
		expect([withOld.status, withNew.status]).toEqual([200, 200]);
	});

	test("When a token is rotated with graceSeconds 0, then the old token stops at once, even if it was cached", async () => {
		// Arrange
		const shop = await createMerchant(app);
		await app.http().post("/api/session?domain=a.com").set(bearer(shop)).expect(200);

		// Act
		const res = await admin(app).post(`/accounts/${shop.accountId}/tokens`, { graceSeconds: 0 });

		// Assert
		const withOld = await app.http().post("/api/session?domain=a.com").set(bearer(shop));
		const withNew = await app
			.http()
			.post("/api/session?domain=a.com")
			.set({ Authorization: `Bearer ${res.body.apiToken}` });
		expect(withOld.status).toBe(401);
		expect(withNew.status).toBe(200);
	});

	test("When the grace period ends, then the old token stops", async () => {
		// Arrange
		const shop = await createMerchant(app);
		await admin(app).post(`/accounts/${shop.accountId}/tokens`, { graceSeconds: 1 }).expect(201);
		const during = await app.http().post("/api/session?domain=a.com").set(bearer(shop));

		// Act
		await new Promise(resolve => setTimeout(resolve, 1100));
		const after = await app.http().post("/api/session?domain=a.com").set(bearer(shop));

		// Assert
		expect(during.status).toBe(200);
		expect(after.status).toBe(401);
	});

	test("When the account does not exist, then 404", async () => {
		const res = await admin(app).post("/accounts/999999/tokens");

		expect(res.status).toBe(404);
		expect(res.body).toMatchObject({ error: "NOT_FOUND", status: 404 });
	});
});

describe("Admin authentication", () => {
	test.each([
		["no token", {}],
		["the wrong token", { Authorization: "Bearer not-the-admin-token-at-all" }],
	])("When an admin request has %s, then 401 with the same body as the API", async (_, headers) => {
		const res = await app.http().post("/admin/accounts").set(headers).send({ name: "x", environment: "sandbox" });

		expect(res.status).toBe(401);
		expect(res.text).toBe(JSON.stringify(UNAUTHORIZED));
	});

	test("When a merchant's API token is used on the admin API, then 401", async () => {
		const res = await app.http().get("/admin/accounts").set(bearer(merchant));

		expect(res.status).toBe(401);
	});
});
