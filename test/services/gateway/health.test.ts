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
					details: {
						accounts: "UP",
						billing: "UP",
						dashboard: "UP",
						invoicing: "UP",
						metrics: "UP",
						notifications: "UP",
						payments: "UP",
						portal: "UP",
						refunds: "UP",
						sessions: "UP",
						usage: "UP",
					},
				},
				transporter: { status: "UP", details: { type: "none (single process)" } },
				services: {
					status: "UP",
					details: {
						accounts: "UP",
						billing: "UP",
						checkout: "UP",
						dashboard: "UP",
						invoicing: "UP",
						metrics: "UP",
						notifications: "UP",
						payments: "UP",
						portal: "UP",
						refunds: "UP",
						sessions: "UP",
						usage: "UP",
					},
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
				invoicing: "DOWN",
				metrics: "DOWN",
				notifications: "DOWN",
				payments: "DOWN",
				portal: "DOWN",
				refunds: "DOWN",
				sessions: "DOWN",
				usage: "DOWN",
			},
		});
	});

	test("When the database server stops, then 503 with each database DOWN since when and why, API requests fail with 503 JSON, and each service logs the outage once", async () => {
		// Arrange: a database server of this test's own, so stopping it harms no other test.
		let db: EmbeddedDb | undefined = await startEmbeddedDb({ persistent: false, dataDir: os.tmpdir() });
		const errors: string[] = [];
		try {
			app = await startApp({
				env: { MONGO_URL: `${db.url}/healthdb`, DB_OUTAGE_LOG_SECONDS: "1" },
				onLog: line => {
					if (/ERROR/.test(line)) errors.push(line);
				},
			});
			const token = (await app.broker.call<{ apiToken: string }, object>("accounts.create", { name: "x", environment: "sandbox" }))
				.apiToken;
			const port = new URL(db.url).port;

			// Act: the outage lasts past DB_OUTAGE_LOG_SECONDS while health and the API are asked again and again.
			const stoppedAt = Date.now();
			await db.stop();
			db = undefined;
			let health = await app.http().get("/actuator/health");
			const api = await app.http().post("/api/session?domain=a.com").set("Authorization", `Bearer ${token}`);
			for (const until = Date.now() + 3000; Date.now() < until; ) {
				health = await app.http().get("/actuator/health");
				await new Promise(resolve => setTimeout(resolve, 200));
			}

			// Assert
			const services = [
				"accounts",
				"billing",
				"dashboard",
				"invoicing",
				"metrics",
				"notifications",
				"payments",
				"portal",
				"refunds",
				"sessions",
				"usage",
			];
			expect(health.status).toBe(503);
			expect(health.body.components.database).toEqual({
				status: "DOWN",
				details: Object.fromEntries(services.map(name => [name, "DOWN"])),
				outages: Object.fromEntries(services.map(name => [name, { since: expect.any(String), lastError: expect.any(String) }])),
			});
			for (const outage of Object.values(health.body.components.database.outages as Record<string, { since: string; lastError: string }>)) {
				expect(Date.parse(outage.since)).toBeGreaterThanOrEqual(stoppedAt - 1000);
				expect(outage.lastError).not.toContain(port); // no server address in an answer without a token
			}
			expect(api.status).toBe(503);
			expect(api.body).toEqual({ error: "SERVICE_UNAVAILABLE", status: 503, message: expect.any(String) });
			for (const name of services) {
				expect(errors.filter(line => line.includes(`${name} has not reached its database for`))).toHaveLength(1);
			}
		} finally {
			await db?.stop();
		}
	}, 60_000);
});
