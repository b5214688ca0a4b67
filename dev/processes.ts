// Child processes the project starts by itself: Moleculer nodes (one process
// each, as `npm run node` runs them) and the NATS server. `npm run cluster`, the
// benchmark (bench/) and the tests start their topologies with these.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type { ServiceName } from "../shared/config";
import { projectRoot } from "../shared/paths";
import { pollUntil } from "../shared/poll";
import { natsServerBin } from "./nats-server";
import { freePort, waitForPort } from "./net";

const STOP_TIMEOUT_MS = 15_000;

/** The cluster topology: one process for each of these, plus one or more billing processes. */
export const SINGLE_NODES: ServiceName[] = [
	"gateway",
	"accounts",
	"sessions",
	"checkout",
	"payments",
	"refunds",
	"notifications",
	"dashboard",
	"metrics",
	"portal",
];

/** Writes a child's output line by line, each line prefixed with `[name]`. */
export function prefixed(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
	let rest = "";
	stream.on("data", (chunk: Buffer) => {
		const lines = (rest + chunk.toString()).split("\n");
		rest = lines.pop() ?? "";
		for (const line of lines) out.write(`[${name}] ${line}\n`);
	});
}

/** SIGTERM (a node drains its in-flight requests), then SIGKILL if it has not exited in time. */
export function stopProcess(child: ChildProcess, timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
	return new Promise(resolve => {
		const force = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
		child.once("exit", () => {
			clearTimeout(force);
			resolve();
		});
		child.kill("SIGTERM");
	});
}

export interface NodeProcessOptions {
	/** Its whole environment: SERVICES, NODE_ID, TRANSPORTER, MONGO_URL, … */
	env: NodeJS.ProcessEnv;
	/** Extra Node flags, e.g. `--cpu-prof`. */
	nodeArgs?: string[];
	/** Its output, prefixed with `[name]`; without it the output is dropped. */
	log?: { name: string; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };
}

/** One Moleculer node in a process of its own: `bin/node.ts` with tsx as a loader (not its CLI, which would add a child process). */
export function spawnNode(options: NodeProcessOptions): ChildProcess {
	const args = [...(options.nodeArgs ?? []), "--import", "tsx", "bin/node.ts"];
	const child = spawn(process.execPath, args, { cwd: projectRoot, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
	if (options.log) {
		prefixed(options.log.name, child.stdout!, options.log.stdout);
		prefixed(options.log.name, child.stderr!, options.log.stderr);
	} else {
		child.stdout!.resume();
		child.stderr!.resume();
	}
	return child;
}

export interface NatsProcess {
	url: string;
	child: ChildProcess;
	stop(): Promise<void>;
}

export interface NatsServerOptions {
	port?: number;
	/** JetStream's storage folder; none: no JetStream. */
	jetStreamDir?: string;
	stderr?: NodeJS.WritableStream;
	/** A member of a cluster: its name, its own route port and the route URLs of the others. */
	cluster?: { name: string; serverName: string; port: number; routes: string[] };
	/** The HTTP monitoring port (`/routez`, `/connz`). */
	monitorPort?: number;
}

/** The project's NATS server (dev/nats-server.ts) on a free port (or `port`), with JetStream when given a storage folder. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsProcess> {
	const bin = natsServerBin();
	const port = options.port ?? (await freePort());
	const args = ["-a", "127.0.0.1", "-p", String(port), ...(options.jetStreamDir ? ["-js", "-sd", options.jetStreamDir] : [])];
	if (options.monitorPort) args.push("-m", String(options.monitorPort));
	const { cluster } = options;
	if (cluster)
		args.push(
			"--server_name",
			cluster.serverName,
			"--cluster_name",
			cluster.name,
			"--cluster",
			`nats://127.0.0.1:${cluster.port}`,
			"--routes",
			cluster.routes.join(","),
		);
	const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
	const failed = new Promise<never>((_, reject) =>
		child.once("error", err =>
			reject(new Error(`Cannot start ${bin} (${(err as NodeJS.ErrnoException).code}); re-run npm install, or set NATS_SERVER_BIN`)),
		),
	);
	failed.catch(() => undefined); // a later failure shows as the process's exit, not as an unhandled rejection
	if (options.stderr) prefixed(cluster?.serverName ?? "nats", child.stderr!, options.stderr);
	else child.stderr!.resume();
	await Promise.race([waitForPort(port, 10_000, () => child.exitCode === null), failed]);
	return { url: `nats://127.0.0.1:${port}`, child, stop: () => stopProcess(child) };
}

/** NATS servers routed to each other: what TRANSPORTER lists when one server is not enough (docs/operations.md). */
export interface NatsCluster {
	/** Each server's client URL. */
	urls: string[];
	/** All of them, comma-separated: the TRANSPORTER every node gets. */
	url: string;
	/** Kills server `i` (SIGKILL: no goodbye to its clients or routes). */
	kill(i: number): Promise<void>;
	/** Freezes server `i` (SIGSTOP): what is sent to it waits in its sockets until it is killed or goes on. */
	freeze(i: number): void;
	/** Starts server `i` again on its ports; resolves once it is routed to every other running server. */
	start(i: number): Promise<void>;
	stop(): Promise<void>;
}

/** Routes to the other running members, from the server's monitoring endpoint. */
async function routeCount(monitorPort: number): Promise<number> {
	const res = await fetch(`http://127.0.0.1:${monitorPort}/routez`).catch(() => null);
	if (!res?.ok) return -1;
	const { routes } = (await res.json()) as { routes?: { remote_name?: string }[] };
	return new Set((routes ?? []).map(r => r.remote_name)).size;
}

/** `size` NATS servers in one cluster, each with its client, route and monitoring port; resolves once all are routed to each other. */
export async function startNatsCluster(
	size: number,
	options: { jetStreamDir?: string; stderr?: NodeJS.WritableStream; ports?: number[] } = {},
): Promise<NatsCluster> {
	const name = `payments-${process.pid}`;
	const members = await Promise.all(
		Array.from({ length: size }, async (_, i) => ({
			client: options.ports?.[i] ?? (await freePort()),
			route: await freePort(),
			monitor: await freePort(),
			serverName: `nats-${i + 1}`,
		})),
	);
	const running: (NatsProcess | undefined)[] = new Array(size).fill(undefined);
	const routed = async (i: number) => {
		const others = running.filter((p, j) => p && j !== i).length;
		const ok = await pollUntil(async () => ((await routeCount(members[i].monitor)) >= others ? true : undefined), {
			intervalMs: 50,
			timeoutMs: 15_000,
		});
		if (!ok) throw new Error(`${members[i].serverName} did not route to the ${others} other NATS servers within 15 s`);
	};
	const start = async (i: number) => {
		const m = members[i];
		running[i] = await startNatsServer({
			port: m.client,
			monitorPort: m.monitor,
			stderr: options.stderr,
			jetStreamDir: options.jetStreamDir ? path.join(options.jetStreamDir, m.serverName) : undefined,
			cluster: {
				name,
				serverName: m.serverName,
				port: m.route,
				routes: members.filter((_, j) => j !== i).map(o => `nats://127.0.0.1:${o.route}`),
			},
		});
	};
	for (let i = 0; i < size; i++) await start(i);
	for (let i = 0; i < size; i++) await routed(i);
	const urls = members.map(m => `nats://127.0.0.1:${m.client}`);
	return {
		urls,
		url: urls.join(","),
		kill: async i => {
			const child = running[i]?.child;
			running[i] = undefined;
			if (!child || child.exitCode !== null || child.signalCode !== null) return;
			await new Promise(resolve => {
				child.once("exit", resolve);
				child.kill("SIGKILL");
			});
		},
		freeze: i => {
			running[i]?.child.kill("SIGSTOP");
		},
		start: async i => {
			await start(i);
			await routed(i);
		},
		stop: async () => {
			await Promise.all(running.map(p => p?.stop()));
		},
	};
}
