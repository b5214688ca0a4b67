// Billing nodes (or another service's) as real processes (`npm run node` with
// SERVICES=billing) for the multi-process tests: each joins the test's NATS
// server and database.
import { type ChildProcess, spawn } from "node:child_process";
import type { ServiceBroker } from "moleculer";
import type { ServiceName } from "../../shared/config";
import { projectRoot } from "../../shared/paths";
import { startApp, type TestApp } from "../setup/app";

export interface BillingNodes {
	/** Every node started, by its id: a test SIGKILLs or SIGTERMs them through this. */
	processes: Map<string, ChildProcess>;
	start(nodeId: string): ChildProcess;
	/** Resolves once `broker` sees billing available on every one of these nodes. */
	waitFor(broker: ServiceBroker, nodeIds: string[]): Promise<void>;
	/** SIGKILLs every node still running. */
	killAll(): void;
}

export function billingNodes(): BillingNodes {
	return serviceNodes("billing");
}

/** Nodes that each run only `service` (SERVICES=<service>), e.g. two checkout nodes. */
export function serviceNodes(service: string): BillingNodes {
	const processes = new Map<string, ChildProcess>();
	return {
		processes,
		start(nodeId) {
			const env = { ...process.env, SERVICES: service, NODE_ID: nodeId, LOG_LEVEL: "warn" };
			// tsx as a loader, not its CLI (which would run the node in a child), so SIGKILL kills the node itself.
			const child = spawn(process.execPath, ["--import", "tsx", "bin/node.ts"], {
				cwd: projectRoot,
				env,
				stdio: ["ignore", "ignore", "inherit"],
			});
			processes.set(nodeId, child);
			return child;
		},
		async waitFor(broker, nodeIds) {
			const deadline = Date.now() + 60_000;
			for (;;) {
				const available = broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
				const running = new Set(available.filter(s => s.name === service).map(s => s.nodeID));
				if (nodeIds.every(n => running.has(n))) return;
				if (Date.now() > deadline) throw new Error(`${service} nodes did not join: ${[...running].join(", ")}`);
				await new Promise(r => setTimeout(r, 200));
			}
		},
		killAll() {
			for (const child of processes.values()) if (child.exitCode === null) child.kill("SIGKILL");
		},
	};
}

/** The rest of the service in this process ("support") over the test's NATS server, then the billing nodes, joined. */
export async function startWithBillingNodes(
	nodes: BillingNodes,
	options: { natsUrl: string; nodeIds: string[]; env: Record<string, string>; services: ServiceName[]; requestTimeout: number },
): Promise<TestApp> {
	const app = await startApp({
		env: { TRANSPORTER: options.natsUrl, ...options.env },
		services: options.services,
		broker: { nodeID: "support", requestTimeout: options.requestTimeout },
	});
	for (const name of options.nodeIds) nodes.start(name);
	await nodes.waitFor(app.broker, options.nodeIds);
	return app;
}
