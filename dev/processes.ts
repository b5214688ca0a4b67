// Child processes the project starts by itself: Moleculer nodes (one process
// each, as `npm run node` runs them) and the NATS server. `npm run cluster`, the
// benchmark (bench/) and the tests start their topologies with these.
import { type ChildProcess, spawn } from "node:child_process";
import type { ServiceName } from "../shared/config";
import { projectRoot } from "../shared/paths";
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

/** The project's NATS server (dev/nats-server.ts) on a free port (or `port`), with JetStream when given a storage folder. */
export async function startNatsServer(
	options: { port?: number; jetStreamDir?: string; stderr?: NodeJS.WritableStream } = {},
): Promise<NatsProcess> {
	const bin = natsServerBin();
	const port = options.port ?? (await freePort());
	const args = ["-a", "127.0.0.1", "-p", String(port), ...(options.jetStreamDir ? ["-js", "-sd", options.jetStreamDir] : [])];
	const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
	const failed = new Promise<never>((_, reject) =>
		child.once("error", err =>
			reject(new Error(`Cannot start ${bin} (${(err as NodeJS.ErrnoException).code}); re-run npm install, or set NATS_SERVER_BIN`)),
		),
	);
	failed.catch(() => undefined); // a later failure shows as the process's exit, not as an unhandled rejection
	if (options.stderr) prefixed("nats", child.stderr!, options.stderr);
	else child.stderr!.resume();
	await Promise.race([waitForPort(port, 10_000, () => child.exitCode === null), failed]);
	return { url: `nats://127.0.0.1:${port}`, child, stop: () => stopProcess(child) };
}
