// `npm run cluster [-- --nats 3]`: the docker-compose topology as local
// processes, for a machine without Docker. The NATS server `npm install` built
// (with JetStream; `--nats N` starts N of them routed into one cluster, and every
// node gets the full list),
// the embedded database (or MONGO_URL) as the one shared database server, one
// process per service, BILLING_NODES billing processes, `--invoicing-nodes N`
// (or INVOICING_NODES) invoicing processes and `--usage-nodes N` (or
// USAGE_NODES) usage processes, logs prefixed per node. Ctrl-C stops the nodes (SIGTERM: they drain), then the database and NATS.
import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { startEmbeddedDb } from "../dev/embedded-db";
import { applyCardSecrets, type LocalSecrets, newAdminToken, readLocalSecrets, writeLocalSecrets } from "../dev/local-secrets";
import { SINGLE_NODES, spawnNode, startNatsCluster, startNatsServer, stopProcess } from "../dev/processes";
import { createBroker } from "../runtime/broker";
import { config, type ServiceName } from "../shared/config";

/** `--nats N`: how many NATS servers (1 by default). */
function natsServers(argv: string[]): number {
	const at = argv.indexOf("--nats");
	if (at < 0) return 1;
	const n = Number(argv[at + 1]);
	if (!Number.isInteger(n) || n < 1 || n > 5) throw new Error("--nats needs a whole number from 1 to 5");
	return n;
}

/** BILLING_NODES: how many billing processes (2 by default). */
function billingNodeCount(): number {
	return nodeCount("BILLING_NODES", process.env.BILLING_NODES ?? "2");
}

/** `--invoicing-nodes N`, or INVOICING_NODES: how many invoicing processes (1 by default); each account's numbers go to one. */
function invoicingNodeCount(argv: string[]): number {
	const at = argv.indexOf("--invoicing-nodes");
	return nodeCount("--invoicing-nodes", at >= 0 ? argv[at + 1] : (process.env.INVOICING_NODES ?? "1"));
}

/** `--usage-nodes N`, or USAGE_NODES: how many usage processes (1 by default); any node takes any batch (docs/usage.md). */
function usageNodeCount(argv: string[]): number {
	const at = argv.indexOf("--usage-nodes");
	return nodeCount("--usage-nodes", at >= 0 ? argv[at + 1] : (process.env.USAGE_NODES ?? "1"));
}

function nodeCount(name: string, text: string | undefined): number {
	const n = Number(text);
	if (!Number.isInteger(n) || n < 1 || n > 16) throw new Error(`${name} must be a whole number from 1 to 16`);
	return n;
}

/** One NATS server, or `count` routed into a cluster; NATS_PORT pins the (first) server's port. */
function startNats(count: number, jetStreamDir: string) {
	const natsPort = Number(process.env.NATS_PORT) || undefined;
	return count === 1
		? startNatsServer({ port: natsPort, jetStreamDir, stderr: process.stderr })
		: startNatsCluster(count, { jetStreamDir, stderr: process.stderr, ports: natsPort ? [natsPort] : undefined });
}

/** An operator's node, as `npm run repl` starts, seeds the demo account (when configured) and then leaves. */
async function seedDemoAccount(transporter: string, dataDir: string, secrets: LocalSecrets): Promise<void> {
	const operator = createBroker([], {
		nodeID: `cluster-${process.pid}`,
		transporter: { type: "NATS", options: { url: transporter } },
		logLevel: "warn",
	});
	await operator.start();
	await operator.waitForServices(["accounts", "gateway", "billing", "usage"], 120_000);
	const created = config().demo ? await operator.call<{ accountId: number; apiToken: string } | null>("accounts.seedDemo") : null;
	if (created) {
		secrets.demoAccountId = created.accountId;
		secrets.demoApiToken = created.apiToken;
		writeLocalSecrets(dataDir, secrets);
	}
	await operator.stop();
}

/** One process per service, and `counts` billing, invoicing and usage processes, all with the cluster's `env`. */
function startNodes(counts: { billing: number; invoicing: number; usage: number }, env: NodeJS.ProcessEnv): ChildProcess[] {
	const startNode = (services: ServiceName, nodeId: string) =>
		spawnNode({
			env: { ...process.env, SERVICES: services, NODE_ID: nodeId, ...env },
			log: { name: nodeId, stdout: process.stdout, stderr: process.stderr },
		});
	const nodes = SINGLE_NODES.map(service => startNode(service, service));
	for (const service of ["billing", "invoicing", "usage"] as const)
		for (let i = 1; i <= counts[service]; i++) nodes.push(startNode(service, `${service}-${i}`));
	return nodes;
}

/** Ctrl-C or SIGTERM: `stop` once (a second signal while stopping does nothing), then exit. */
function stopOnSignal(stop: () => Promise<void>): void {
	let stopping = false;
	const stopOnce = async () => {
		if (stopping) return;
		stopping = true;
		console.log("[cluster] stopping…");
		await stop();
		process.exit(0);
	};
	process.on("SIGINT", () => void stopOnce());
	process.on("SIGTERM", () => void stopOnce());
}

async function main(): Promise<void> {
	const natsCount = natsServers(process.argv.slice(2));
	const { dataDir, mongoUrl, port } = config();
	const billingNodes = billingNodeCount();
	const invoicingNodes = invoicingNodeCount(process.argv.slice(2));
	const usageNodes = usageNodeCount(process.argv.slice(2));
	const clusterDir = path.join(dataDir, "cluster");
	mkdirSync(clusterDir, { recursive: true });

	// The nodes share the secrets npm start keeps, so a cluster and npm start see the same data the same way.
	const secrets = readLocalSecrets(dataDir);
	secrets.adminToken ??= process.env.ADMIN_TOKEN || newAdminToken();
	applyCardSecrets(secrets);
	writeLocalSecrets(dataDir, secrets);

	const nats = await startNats(natsCount, path.join(clusterDir, "jetstream"));
	const transporter = nats.url;

	const db = mongoUrl ? null : await startEmbeddedDb({ persistent: true, dataDir: clusterDir });
	const databaseUrl = mongoUrl ?? `${db!.url}/payments`;
	console.log(`[cluster] NATS ${transporter}; database ${db ? `embedded ${db.kind} (${db.reason})` : "MONGO_URL"}`);

	const nodes = startNodes(
		{ billing: billingNodes, invoicing: invoicingNodes, usage: usageNodes },
		{
			TRANSPORTER: transporter,
			MONGO_URL: databaseUrl,
			ADMIN_TOKEN: secrets.adminToken,
			PORT: String(port),
		},
	);
	stopOnSignal(async () => {
		await Promise.all(nodes.map(stopProcess));
		await db?.stop();
		await nats.stop();
	});

	await seedDemoAccount(transporter, dataDir, secrets);

	console.log(
		`[cluster] ready: http://localhost:${port} with ${billingNodes} billing, ${invoicingNodes} invoicing and ${usageNodes} usage nodes; admin token ${secrets.adminToken}`,
	);
	if (secrets.demoApiToken) console.log(`[cluster] demo account ${secrets.demoAccountId} API token: ${secrets.demoApiToken}`);
	console.log(`[cluster] operate it: TRANSPORTER=${transporter} npm run repl`);
}

main().catch(err => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
