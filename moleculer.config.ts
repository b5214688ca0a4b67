// Broker settings shared by every entry point (npm start, npm run node,
// npm run repl, the tests). The transporter comes from TRANSPORTER; none
// means a single process.
import type { BrokerOptions } from "moleculer";
import { replCommands } from "./runtime/repl-commands";
import { AjvValidator } from "./shared/ajv-validator";
import { config } from "./shared/config";
import { ApiErrorType, isOutageError } from "./shared/errors";
import { LostRequests } from "./shared/lost-requests";
import { RedactingConsoleLogger } from "./shared/redacting-logger";
import { SettleTimedOutRequests } from "./shared/settle-timed-out-requests";

/** Errors that say a node or its database is unwell (not a refused request): they count towards opening a circuit. */
function isOutage(err: Error & { code?: number; type?: string }): boolean {
	if (err.type === ApiErrorType.InvalidSessionDomain) return false;
	return (err.code ?? 0) >= 500 || isOutageError(err);
}

/**
 * The NATS client's connection: reconnect for ever, at once to another server of the list (a server is tried again
 * 500 ms after its last try), and leave a server that stopped answering after two unanswered pings 2 s apart.
 */
export const NATS_CONNECTION = { maxReconnectAttempts: -1, reconnectTimeWait: 500, pingInterval: 2000, maxPingOut: 2 };

export function brokerOptions(overrides: Partial<BrokerOptions> = {}): BrokerOptions {
	const { namespace, transporter, logLevel, requestTimeoutMs, metricsPort, tracing } = config();
	return {
		namespace,
		nodeID: process.env.NODE_ID || undefined,
		transporter: transporter ? { type: "NATS", options: { url: transporter, ...NATS_CONNECTION } } : null,
		serializer: "JSON",
		logger: new RedactingConsoleLogger({ level: logLevel, formatter: "short", colors: process.stdout.isTTY }),
		logLevel,

		// Ajv JSON Schemas instead of fastest-validator.
		validator: new AjvValidator({}),

		requestTimeout: requestTimeoutMs,
		// Off by default: a retried payment action could charge twice. Actions marked
		// idempotent (shared/action.ts) turn it on for themselves with these settings.
		retryPolicy: {
			enabled: false,
			retries: 2,
			delay: 100,
			maxDelay: 1000,
			factor: 2,
			check: err => Boolean((err as { retryable?: boolean }).retryable),
		},
		maxCallLevel: 20,
		// A node silent for 15 s is dropped from the registry; its requests go elsewhere.
		heartbeatInterval: 5,
		heartbeatTimeout: 15,
		contextParamsCloning: false,
		// On SIGTERM in-flight requests finish before services stop (a renewal cycle stops claiming and finishes what it holds).
		tracking: { enabled: true, shutdownTimeout: 30_000 },
		// A request lost with a NATS connection fails when both ends are connected again, not at its timeout.
		middlewares: [SettleTimedOutRequests, LostRequests()],
		disableBalancer: false,
		registry: { strategy: "RoundRobin", preferLocal: true },
		// An endpoint failing half its calls (20 or more in a minute) is skipped for 10 s, then tried again.
		circuitBreaker: {
			enabled: true,
			threshold: 0.5,
			minRequestCount: 20,
			windowTime: 60,
			halfOpenTime: 10_000,
			check: err => isOutage(err as Error),
		},
		// At most 64 concurrent calls per action and node; the rest wait, and beyond 1,000 waiting they are refused (429).
		bulkhead: { enabled: true, concurrency: 64, maxQueueSize: 1000 },
		metrics: metricsPort
			? { enabled: true, reporter: { type: "Prometheus", options: { port: metricsPort, path: "/metrics" } } }
			: { enabled: false },
		tracing:
			tracing === "console"
				? { enabled: true, exporter: { type: "Console", options: { width: 100 } }, sampling: { rate: 1 } }
				: { enabled: false },

		// moleculer-repl passes parsed args as an object, though its typings say string[].
		replOptions: { customCommands: replCommands as never },
		...overrides,
	};
}

export default brokerOptions;
