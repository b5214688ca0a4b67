import os from "node:os";
import { type EmbeddedDb, startEmbeddedDb } from "../../../dev/embedded-db";
import { startApp, type TestApp } from "../../setup/app";

describe("GET /actuator/health", () => {
	let app: TestApp;
	afterEach(() => app?.stop());

	test("When everything runs, then 200 UP naming the database, the transporter and every service, without a token", async () => {
		// Arrange
		app = await startApp();

		// Act
		const res = await app.http().get("/actuator/health");

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			status: "UP",
			components: {
				database: {
					status: "UP",
					details: { accounts: "UP", billing: "UP", dashboard: "UP", notifications: "UP", refunds: "UP", sessions: "UP" },
				},
				transporter: { status: "UP", details: { type: "none (single process)" } },
				services: {
					status: "UP",
					details: { accounts: "UP", billing: "UP", checkout: "UP", dashboard: "UP", notifications: "UP", refunds: "UP", sessions: "UP" },
				},
			},
		});
	});

	test("When a service the gateway needs is not running, then 503 DOWN naming it", async () => {
		// Arrange
		app = await startApp({ services: ["gateway", "accounts"] });

		// Act
		const res = await app.http().get("/actuator/health");

		// Assert
		expect(res.status).toBe(503);
		expect(res.body.status).toBe("DOWN");
		expect(res.body.components.services).toEqual({
			status: "DOWN",
			details: {
				accounts: "UP",
				billing: "DOWN",
				checkout: "DOWN",
				dashboard: "DOWN",
				notifications: "DOWN",
				refunds: "DOWN",
				sessions: "DOWN",
			},
		});
	});

	test("When the database server stops, then 503 with the database DOWN, and API requests fail with 503 JSON", async () => {
		// Arrange: a database server of this test's own, so stopping it harms no other test.
		let db: EmbeddedDb | undefined = await startEmbeddedDb({ persistent: false, dataDir: os.tmpdir() });
		try {
			app = await startApp({ env: { MONGO_URL: `${db.url}/healthdb` } });
			const token = (await app.broker.call<{ apiToken: string }, object>("accounts.create", { name: "x", environment: "sandbox" }))
				.apiToken;

			// Act
			await db.stop();
			db = undefined;
			const health = await app.http().get("/actuator/health");
			const api = await app.http().post("/api/session?domain=a.com").set("Authorization", `Bearer ${token}`);

			// Assert
			expect(health.status).toBe(503);
			expect(health.body.components.database).toEqual({
				status: "DOWN",
				details: { accounts: "DOWN", billing: "DOWN", dashboard: "DOWN", notifications: "DOWN", refunds: "DOWN", sessions: "DOWN" },
			});
			expect(api.status).toBe(503);
			expect(api.body).toEqual({ error: "SERVICE_UNAVAILABLE", status: 503, message: expect.any(String) });
		} finally {
			await db?.stop();
		}
	}, 60_000);
});
