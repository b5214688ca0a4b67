import { bearer, createMerchant } from "../../factories/merchant";
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
		const answers = await Promise.all(
			Array.from({ length: 8 }, () => app.http().post("/api/session?domain=a.com").set(bearer(busy))),
		);
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
});
