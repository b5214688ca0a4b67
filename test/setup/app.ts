// Starts the real services in this process with the gateway on a free port
// (PORT=0), against the test run's database server, in databases no other
// test file uses.
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { BrokerOptions, ServiceBroker } from "moleculer";
import request from "supertest";
import { createBroker } from "../../runtime/broker";
import { ALL_SERVICES, resetConfig, type ServiceName } from "../../shared/config";
import { type LogLevel, testLogger } from "./test-logger";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestApp {
	broker: ServiceBroker;
	url: string;
	/** supertest bound to the gateway. */
	http: () => ReturnType<typeof request>;
	stop(): Promise<void>;
}

const BASE_MONGO_URL = process.env.MONGO_URL!;

export interface AppOptions {
	env?: Record<string, string>;
	services?: readonly ServiceName[];
	broker?: Partial<BrokerOptions>;
	/** Reuse a database name (to restart the app on the same data). */
	database?: string;
	/** Also hands every log line to this function (the lines go to the run's log files regardless). */
	onLog?: (line: string) => void;
	/** The level of the app's log file (default debug, or TEST_LOG_LEVEL). */
	logLevel?: LogLevel;
}

export function uniqueDatabaseName(): string {
	return `t${randomBytes(6).toString("hex")}`;
}

/**
 * What an earlier app's `env` replaced, as it was before (null: unset). Kept in the environment itself: jest runs
 * test files one after another in one process, with fresh modules but the same process.env.
 */
const REPLACED = "TEST_APP_ENV_REPLACED";

/** Sets the environment a broker reads when its services are created; an earlier app's `env` is undone first. */
export function testEnvironment(options: AppOptions = {}): void {
	const replaced = JSON.parse(process.env[REPLACED] ?? "{}") as Record<string, string | null>;
	for (const [name, value] of Object.entries(replaced)) {
		if (value === null) delete process.env[name];
		else process.env[name] = value;
	}
	process.env[REPLACED] = JSON.stringify(Object.fromEntries(Object.keys(options.env ?? {}).map(name => [name, process.env[name] ?? null])));
	Object.assign(process.env, {
		PORT: "0",
		ADMIN_TOKEN,
		LOG_LEVEL: "warn",
		MONGO_URL: `${BASE_MONGO_URL}/${options.database ?? uniqueDatabaseName()}`,
		RATE_LIMIT_PER_SECOND: "100000",
		AUTH_FAILURES_PER_MINUTE: "100000",
		CHECKOUTS_PER_MINUTE: "100000",
		DASHBOARD_SIGN_INS_PER_MINUTE: "100000",
		PORTAL_OPENS_PER_MINUTE: "100000",
		PORTAL_REQUESTS_PER_MINUTE: "100000",
		...options.env,
	});
	resetConfig();
}

export async function startApp(options: AppOptions = {}): Promise<TestApp> {
	testEnvironment(options);
	const broker = createBroker(options.services ?? ALL_SERVICES, { logger: testLogger(options.onLog, options.logLevel), ...options.broker });
	await broker.start();
	const gateway = broker.getLocalService("gateway") as unknown as { server: import("node:http").Server };
	const url = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
	return {
		broker,
		url,
		http: () => request(url),
		stop: () => broker.stop(),
	};
}
