// Broker settings shared by every entry point (npm start, npm run node,
// npm run repl, the tests). The transporter comes from TRANSPORTER; none
// means a single process.
import type { BrokerOptions } from "moleculer";
import { replCommands } from "./bin/repl-commands";
import { AjvValidator } from "./shared/ajv-validator";
import { config } from "./shared/config";
import { RedactingConsoleLogger } from "./shared/redacting-logger";

export function brokerOptions(overrides: Partial<BrokerOptions> = {}): BrokerOptions {
	const { namespace, transporter, logLevel } = config();
	return {
		namespace,
		nodeID: process.env.NODE_ID || undefined,
		transporter: transporter ? { type: "NATS", options: { url: transporter, maxReconnectAttempts: -1, reconnectTimeWait: 500 } } : null,
		serializer: "JSON",
		logger: new RedactingConsoleLogger({ level: logLevel, formatter: "short", colors: process.stdout.isTTY }),
		logLevel,

		// Ajv JSON Schemas instead of fastest-validator.
		validator: new AjvValidator({}),

		requestTimeout: 10_000,
		// Retries stay off broker-wide: a retried payment action could charge twice.
		retryPolicy: { enabled: false, retries: 0, delay: 100, maxDelay: 1000, factor: 2, check: () => false },
		maxCallLevel: 20,
		heartbeatInterval: 5,
		heartbeatTimeout: 15,
		contextParamsCloning: false,
		tracking: { enabled: true, shutdownTimeout: 10_000 },
		disableBalancer: false,
		registry: { strategy: "RoundRobin", preferLocal: true },
		circuitBreaker: { enabled: false },
		bulkhead: { enabled: false },
		metrics: { enabled: false },
		tracing: { enabled: false },

		// moleculer-repl passes parsed args as an object, though its typings say string[].
		replOptions: { customCommands: replCommands as never },
		...overrides,
	};
}

export default brokerOptions;
