// What the benchmark runs against. One database server for the whole run
// (the embedded one, as `npm start` and the tests use, or MONGO_URL), and on
// it, each in databases of its own:
//   - embedded mode: every service in one process, what `npm start` runs;
//   - cluster mode: one process per service over NATS, what `npm run cluster` runs;
//   - the renewal topology: accounts, notifications and 1–4 billing processes;
//   - the baseline server (baseline-server.ts).
// Every process is a real child process, started as the cluster starts its nodes;
// a deployment may have each node serve its metrics (METRICS_PORT) on a port of its own.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, type WriteStream } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedDb } from "../dev/embedded-db";
import { applyCardSecrets } from "../dev/local-secrets";
import { freePort, waitForPort } from "../dev/net";
import { type NatsProcess, SINGLE_NODES, spawnNode, startNatsServer, stopProcess } from "../dev/processes";
import type { ServiceName } from "../shared/config";
import { projectRoot } from "../shared/paths";
import { childNamed } from "./cpu-time";

export const ADMIN_TOKEN = `bench_admin_${randomBytes(12).toString("hex")}`;
const START_TIMEOUT_MS = 120_000;

export interface BenchContext {
	/** The database server, without a database name. */
	mongoUrl: string;
	database: { kind: string; reason: string };
	/** The embedded database server's process (java), whose CPU use the renewal runs report; null with MONGO_URL. */
	databasePid: number | null;
	/** The environment every service process gets (secrets, limits), without per-node variables. */
	serviceEnv: NodeJS.ProcessEnv;
	/** Where every child process writes its output. */
	log: WriteStream;
	/** When set, service processes run with --cpu-prof and write their profiles here. */
	profileDir?: string;
	nats(): Promise<NatsProcess>;
	/** Every service and baseline process started, so an interrupted run can kill what is left. */
	children: Set<ChildProcess>;
	stop(): Promise<void>;
}

/**
 * Runs `start` with the embedded mongo-java-server given three quarters of the machine's memory as its largest heap,
 * unless EMBEDDED_DB_JAVA_OPTS sets one. The JVM's default, a quarter (6 GB on a 24 GB machine), holds every document
 * of the memory backend, and the usage scenario's embedded deployment (its events and its baseline's, some 4 million)
 * filled it once ingestion got faster (011946a): the server then spent its time in full collections, and runs stalled.
 */
async function withJavaHeap<T>(start: () => Promise<T>): Promise<T> {
	const given = process.env.EMBEDDED_DB_JAVA_OPTS;
	if (/-Xmx|MaxHeapSize|MaxRAM/.test(given ?? "")) return start();
	process.env.EMBEDDED_DB_JAVA_OPTS = [given, "-XX:MaxRAMPercentage=75"].filter(Boolean).join(" ");
	try {
		return await start();
	} finally {
		if (given === undefined) delete process.env.EMBEDDED_DB_JAVA_OPTS;
		else process.env.EMBEDDED_DB_JAVA_OPTS = given;
	}
}

/** Starts the shared database server (unless MONGO_URL names one) and prepares what the service processes need. */
export async function createContext(options: { logFile: string; profileDir?: string; persistent?: boolean }): Promise<BenchContext> {
	mkdirSync(path.dirname(options.logFile), { recursive: true });
	const log = createWriteStream(options.logFile);
	let mongoUrl = process.env.MONGO_URL?.replace(/\/[^/]*$/, "");
	let database = { kind: "MONGO_URL", reason: "MONGO_URL was set" };
	let stopDb = async () => {};
	let databasePid: number | null = null;
	if (!mongoUrl) {
		// The memory backend, as the tests use: nothing on disk, nothing left behind. Or, with --persistent, the H2
		// backend npm start uses, in a folder of its own that is removed at the end.
		const dataDir = options.persistent ? mkdtempSync(path.join(os.tmpdir(), "bench-db-")) : path.join(projectRoot, "data");
		const db = await withJavaHeap(() => startEmbeddedDb({ persistent: options.persistent ?? false, dataDir }));
		mongoUrl = db.url;
		database = { kind: db.kind, reason: db.reason };
		stopDb = async () => {
			await db.stop();
			if (options.persistent) rmSync(dataDir, { recursive: true, force: true });
		};
		// A real mongod runs under mongodb-memory-server; mongo-java-server is our own java child.
		databasePid = childNamed(process.pid, db.kind === "mongod" ? "mongod" : "java");
	}

	const serviceEnv: NodeJS.ProcessEnv = { ...process.env };
	for (const name of ["MONGO_URL", "TRANSPORTER", "SERVICES", "NODE_ID", "NAMESPACE", "PORT", "METRICS_PORT"]) delete serviceEnv[name];
	applyCardSecrets({}, serviceEnv);
	Object.assign(serviceEnv, {
		ADMIN_TOKEN,
		LOG_LEVEL: "warn",
		DEMO: "0",
		// The merchant API's limits would answer 429 long before the service is saturated; the benchmark measures the service.
		RATE_LIMIT_PER_SECOND: "1000000",
		AUTH_FAILURES_PER_MINUTE: "1000000",
		CHECKOUTS_PER_MINUTE: "1000000",
		// Renewal cycles run only when the renewal scenario asks for them.
		RENEWAL_CRON: "0 0 1 1 *",
	});

	let nats: Promise<NatsProcess> | undefined;
	const children = new Set<ChildProcess>();
	return {
		children,
		mongoUrl,
		database,
		databasePid,
		serviceEnv,
		log,
		profileDir: options.profileDir,
		nats: () => (nats ??= startNatsServer({ stderr: log })),
		async stop() {
			await Promise.all([...children].map(child => stopProcess(child)));
			if (nats) await (await nats).stop();
			await stopDb();
			await new Promise(resolve => log.end(resolve));
		},
	};
}

export interface Deployment {
	/** The gateway's base URL, when the deployment has one. */
	url: string | undefined;
	/** `<base>`: each service uses `<base>_<service>`. */
	mongoUrl: string;
	namespace: string;
	nodes: Map<string, ChildProcess>;
	/** Node id -> its Prometheus port, when the spec asked for metrics. */
	metricsPorts: Map<string, number>;
	stop(): Promise<void>;
}

export interface DeploySpec {
	/** Database name prefix, fresh per deployment. */
	database: string;
	/** Node id -> the services it runs (all of them when undefined). */
	nodes: Record<string, ServiceName[] | undefined>;
	/** Over NATS (every node in its own process) or not (one node with every service). */
	transporter: boolean;
	/** Each node serves its metrics (METRICS_PORT), e.g. the database commands it sent. */
	metrics?: boolean;
}

/** Starts the nodes and resolves once they run (the gateway's health check says UP, when there is a gateway). */
export async function deploy(ctx: BenchContext, spec: DeploySpec): Promise<Deployment> {
	const mongoUrl = `${ctx.mongoUrl}/${spec.database}`;
	const namespace = spec.database.replace(/[^A-Za-z0-9_-]/g, "-");
	const transporter = spec.transporter ? (await ctx.nats()).url : undefined;
	const hasGateway = Object.values(spec.nodes).some(services => !services || services.includes("gateway"));
	const port = hasGateway ? await freePort() : 0;
	const nodes = new Map<string, ChildProcess>();
	const metricsPorts = new Map<string, number>();
	for (const [nodeId, services] of Object.entries(spec.nodes)) {
		const env: NodeJS.ProcessEnv = { ...ctx.serviceEnv, NODE_ID: nodeId, MONGO_URL: mongoUrl, PORT: String(port), NAMESPACE: namespace };
		if (services) env.SERVICES = services.join(",");
		if (transporter) env.TRANSPORTER = transporter;
		if (spec.metrics) {
			metricsPorts.set(nodeId, await freePort());
			env.METRICS_PORT = String(metricsPorts.get(nodeId));
		}
		// One folder per node: its main thread and tsx's loader thread each write a profile.
		const nodeArgs = ctx.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${path.join(ctx.profileDir, `${spec.database}-${nodeId}`)}`] : [];
		const child = spawnNode({ env, nodeArgs, log: { name: `${spec.database}/${nodeId}`, stdout: ctx.log, stderr: ctx.log } });
		ctx.children.add(child);
		child.once("exit", () => ctx.children.delete(child));
		nodes.set(nodeId, child);
	}
	const deployment: Deployment = {
		url: hasGateway ? `http://127.0.0.1:${port}` : undefined,
		mongoUrl,
		namespace,
		nodes,
		metricsPorts,
		async stop() {
			await Promise.all([...nodes.values()].map(child => stopProcess(child)));
		},
	};
	try {
		const alive = () => [...nodes.values()].every(child => child.exitCode === null);
		if (deployment.url) {
			await waitForPort(port, START_TIMEOUT_MS, alive);
			await waitForHealth(deployment.url, alive);
		}
		for (const metricsPort of metricsPorts.values()) await waitForPort(metricsPort, START_TIMEOUT_MS, alive);
	} catch (err) {
		const exited = [...nodes].filter(([, child]) => child.exitCode !== null || child.signalCode !== null);
		const which = exited.map(([nodeId, child]) => `${nodeId} exited with ${child.exitCode ?? child.signalCode}`).join(", ");
		await deployment.stop();
		// CI keeps only what the bench prints: the last lines of each exited node say why it stopped.
		const lines = readFileSync(String(ctx.log.path), "utf8").split("\n");
		const tails = exited.map(([nodeId]) => lines.filter(line => line.startsWith(`[${spec.database}/${nodeId}]`)).slice(-15));
		throw new Error(
			`${spec.database} did not start: ${(err as Error).message}${which ? ` (${which})` : ""} (the service logs are in ${ctx.log.path})${tails
				.flat()
				.map(line => `\n  ${line}`)
				.join("")}`,
		);
	}
	return deployment;
}

async function waitForHealth(url: string, alive: () => boolean): Promise<void> {
	const deadline = Date.now() + START_TIMEOUT_MS;
	for (;;) {
		if (!alive()) throw new Error("a node exited");
		const status = await fetch(`${url}/actuator/health`).then(
			res => res.status,
			() => 0,
		);
		if (status === 200) return;
		if (Date.now() > deadline) throw new Error(`health check still ${status}`);
		await new Promise(resolve => setTimeout(resolve, 200));
	}
}

/** `npm start`'s topology: every service in one process. */
export function embeddedSpec(database: string, options: { metrics?: boolean } = {}): DeploySpec {
	return { database, nodes: { embedded: undefined }, transporter: false, ...options };
}

/**
 * `npm run cluster`'s topology: one process per service, `billingNodes` billing processes, one invoicing process, and
 * `usageNodes` usage processes (1 unless asked, as `npm run cluster -- --usage-nodes N`: the gateway's health check
 * waits for every service behind its endpoints, usage's included).
 */
export function clusterSpec(database: string, billingNodes = 1, options: { metrics?: boolean; usageNodes?: number } = {}): DeploySpec {
	const { usageNodes = 1, ...rest } = options;
	const nodes: Record<string, ServiceName[]> = Object.fromEntries(SINGLE_NODES.map(service => [service, [service]]));
	for (let i = 1; i <= billingNodes; i++) nodes[`billing-${i}`] = ["billing"];
	nodes["invoicing-1"] = ["invoicing"];
	for (let i = 1; i <= usageNodes; i++) nodes[`usage-${i}`] = ["usage"];
	return { database, nodes, transporter: true, ...rest };
}

/**
 * The baseline server in a process of its own, on the same database server (with READ_* set: the read baseline too);
 * `script`: another bare server, e.g. the usage scenario's (bench/usage-baseline.ts).
 */
export async function startBaseline(
	ctx: BenchContext,
	database: string,
	extraEnv: Record<string, string> = {},
	script = "bench/baseline-server.ts",
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
	const port = await freePort();
	const env = { ...process.env, MONGO_URL: `${ctx.mongoUrl}/${database}`, PORT: String(port), ...extraEnv };
	const child = spawn(process.execPath, ["--import", "tsx", script], {
		cwd: projectRoot,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	ctx.children.add(child);
	child.once("exit", () => ctx.children.delete(child));
	child.stdout!.pipe(ctx.log, { end: false });
	child.stderr!.pipe(ctx.log, { end: false });
	await waitForPort(port, START_TIMEOUT_MS, () => child.exitCode === null);
	return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopProcess(child) };
}
