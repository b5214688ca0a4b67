import { ConfigError, loadConfig } from "../../shared/config";

describe("loadConfig", () => {
	test("When nothing is set, then the documented defaults apply", () => {
		const config = loadConfig({});

		expect(config).toMatchObject({
			port: 3000,
			mongoUrl: undefined,
			transporter: undefined,
			timeZone: "CET",
			demo: true,
			bodyLimit: "100kb",
			rateLimitPerSecond: 100,
			authFailuresPerMinute: 60,
			logLevel: "info",
			requestTimeoutMs: 10_000,
			refundRecoveryIntervalMs: 30_000,
			refundRecoveryGraceMs: 120_000,
			metricsPort: undefined,
			tracing: "off",
			dashboardIdleMinutes: 30,
			dashboardSignInsPerMinute: 20,
			portalOpensPerMinute: 20,
			portalRequestsPerMinute: 120,
			publicBaseUrl: undefined,
			usageGraceHours: 72,
			usageBatchLeaseMs: 30_000,
		});
		expect(config.services).toEqual([
			"gateway",
			"accounts",
			"sessions",
			"checkout",
			"payments",
			"billing",
			"invoicing",
			"refunds",
			"notifications",
			"dashboard",
			"metrics",
			"portal",
			"usage",
		]);
		expect(config.dataDir.endsWith("data")).toBe(true);
	});

	test.each([
		[{ PORT: "http" }, "PORT"],
		[{ PORT: "70000" }, "PORT"],
		[{ MONGO_URL: "localhost:27017" }, "MONGO_URL"],
		[{ TRANSPORTER: "redis://x" }, "TRANSPORTER"],
		[{ TRANSPORTER: "nats://a:4222,redis://b:6379" }, "TRANSPORTER"],
		[{ TRANSPORTER: "nats://a:4222," }, "TRANSPORTER"],
		[{ SERVICES: "gateway,ledger" }, "SERVICES"],
		[{ TIME_ZONE: "Mars/Olympus" }, "TIME_ZONE"],
		[{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
		[{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN"],
		[{ DEMO: "yes" }, "DEMO"],
		[{ BODY_LIMIT: "lots" }, "BODY_LIMIT"],
		[{ RATE_LIMIT_PER_SECOND: "0" }, "RATE_LIMIT_PER_SECOND"],
		[{ CARD_PRIVATE_KEY: "not a pem" }, "CARD_PRIVATE_KEY"],
		[{ VAULT_KEY: "c2hvcnQ=" }, "VAULT_KEY"],
		[{ METRICS_PORT: "0" }, "METRICS_PORT"],
		[{ TRACING: "jaeger" }, "TRACING"],
		[{ REQUEST_TIMEOUT_MS: "10" }, "REQUEST_TIMEOUT_MS"],
		[{ CARD_PREVIOUS_KEY_UNTIL: "2030-01-01T00:00:00Z" }, "CARD_PREVIOUS_KEY_UNTIL"],
		[{ REFUND_RECOVERY_INTERVAL_MS: "10" }, "REFUND_RECOVERY_INTERVAL_MS"],
		// A refund request still at work must never look crashed.
		[{ REFUND_RECOVERY_GRACE_MS: "10000" }, "REFUND_RECOVERY_GRACE_MS"],
		[{ REFUND_RECOVERY_GRACE_MS: "20000", REQUEST_TIMEOUT_MS: "30000" }, "REFUND_RECOVERY_GRACE_MS"],
		[{ DASHBOARD_IDLE_MINUTES: "0" }, "DASHBOARD_IDLE_MINUTES"],
		[{ DASHBOARD_SIGN_INS_PER_MINUTE: "0" }, "DASHBOARD_SIGN_INS_PER_MINUTE"],
		[{ PUBLIC_BASE_URL: "pay.example.com" }, "PUBLIC_BASE_URL"],
		[{ PUBLIC_BASE_URL: "https://pay.example.com/shop" }, "PUBLIC_BASE_URL"],
		[{ PUBLIC_BASE_URL: "https://pay.example.com/?a=1" }, "PUBLIC_BASE_URL"],
		[{ CHARGEBACK_WARNING_PERCENT: "0" }, "CHARGEBACK_WARNING_PERCENT"],
		[{ CHARGEBACK_WARNING_PERCENT: "101" }, "CHARGEBACK_WARNING_PERCENT"],
		[{ CHARGEBACK_WARNING_PERCENT: "0,9" }, "CHARGEBACK_WARNING_PERCENT"],
		[{ MID_CAP_REVIEW_MS: "999" }, "MID_CAP_REVIEW_MS"],
		[{ MID_CAP_REVIEW_MS: "15min" }, "MID_CAP_REVIEW_MS"],
	])("When %p is set, then start-up fails naming %s", (env, variable) => {
		expect(() => loadConfig(env)).toThrow(ConfigError);
		expect(() => loadConfig(env)).toThrow(variable);
	});

	test("When MID_CAP_REVIEW_MS is unset, then a full MID reviews its reservations older than 15 minutes", () => {
		expect(loadConfig({}).midCapReviewMs).toBe(900_000);
		expect(loadConfig({ MID_CAP_REVIEW_MS: "3000" }).midCapReviewMs).toBe(3000);
	});

	test("When CHARGEBACK_WARNING_PERCENT is set, then MIDs are warned at that ratio; unset, at 0.65 %", () => {
		expect(loadConfig({ CHARGEBACK_WARNING_PERCENT: "0.9" }).chargebackWarningRatio).toBeCloseTo(0.009, 10);
		expect(loadConfig({}).chargebackWarningRatio).toBeCloseTo(0.0065, 10);
	});

	test("When DASHBOARD_IDLE_MINUTES has decimals, then they are taken", () => {
		expect(loadConfig({ DASHBOARD_IDLE_MINUTES: "0.5" }).dashboardIdleMinutes).toBe(0.5);
	});

	test("When PUBLIC_BASE_URL ends with a slash, then it is taken without it", () => {
		expect(loadConfig({ PUBLIC_BASE_URL: "https://pay.example.com/" }).publicBaseUrl).toBe("https://pay.example.com");
	});

	test("When TRANSPORTER lists a NATS cluster's servers, then the node gets all of them", () => {
		expect(loadConfig({ TRANSPORTER: "nats://a:4222,nats://b:4222,nats://c:4222" }).transporter).toBe(
			"nats://a:4222,nats://b:4222,nats://c:4222",
		);
	});

	test("When SERVICES names a subset, then only those run", () => {
		expect(loadConfig({ SERVICES: " sessions, gateway " }).services).toEqual(["sessions", "gateway"]);
	});
});
