// Every node's broker: the named services on the shared broker settings, and a stop on SIGINT or SIGTERM that
// drains the requests in flight first.
import { type BrokerOptions, ServiceBroker } from "moleculer";
import { brokerOptions } from "../moleculer.config";
import type { ServiceName } from "../shared/config";
import { serviceSchemas } from "./services";

/** A broker running the named services; every entry point and test builds its nodes here. */
export function createBroker(services: readonly ServiceName[], overrides: Partial<BrokerOptions> = {}): ServiceBroker {
	const broker = new ServiceBroker(brokerOptions(overrides));
	for (const name of services) broker.createService(serviceSchemas[name]);
	return broker;
}

/** What a process's main broker is created with when stopOnSignals handles its signals (Moleculer's own handlers would stop it a second time). */
export const OWN_SIGNAL_HANDLING: Partial<BrokerOptions> = { skipProcessEventRegistration: true };

/** Stops the broker (draining in-flight requests) on SIGINT/SIGTERM, then runs `after`. Create the broker with OWN_SIGNAL_HANDLING. */
export function stopOnSignals(broker: ServiceBroker, after: () => Promise<void> = async () => {}): void {
	let stopping = false;
	const stop = async (signal: string) => {
		if (stopping) return;
		stopping = true;
		broker.logger.info(`${signal} received, stopping…`);
		// Long-running work (a renewal cycle) stops taking new items now, before the broker waits for in-flight requests.
		broker.broadcastLocal("broker.draining");
		await broker.stop().catch(err => broker.logger.error("Stop failed:", err));
		await after();
		process.exit(0);
	};
	process.on("SIGINT", () => void stop("SIGINT"));
	process.on("SIGTERM", () => void stop("SIGTERM"));
}
