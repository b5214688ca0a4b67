// Every process at rest: what the embedded process and each cluster process
// do when nobody asks anything of them (heartbeats, sweeps, polls, pings),
// after a short load has left data behind and died down. Per process: CPU
// milliseconds per second, database commands per second (the services' own
// counter, shared/db.mixin.ts) and NATS messages per second, sent and
// received (Moleculer's transporter counters); the database server's and the
// NATS server's CPU beside them.
import { sleep } from "../shared/poll";
import { type CommandCounts, parseCommands, waitUntilQuiet } from "./db-commands";
import { checkoutLoad } from "./load";
import { servingCpu } from "./measure";
import type { BenchOptions } from "./options";
import type { Row, Target } from "./report";
import { createShop } from "./shop";
import { round } from "./stats";
import { type BenchContext, clusterSpec, type Deployment, deploy, embeddedSpec } from "./topology";
import type { WebhookReceiver } from "./webhook-receiver";

export interface IdleProcess {
	name: string;
	cpuMsPerSecond: number;
	/** Null for the database and NATS servers, which count no commands of their own. */
	commandsPerSecond: number | null;
	natsMessagesPerSecond: number | null;
}

export interface IdleRun {
	mode: "embedded" | "cluster";
	seconds: number;
	processes: IdleProcess[];
}

const PACKETS = /^moleculer_transporter_packets_(sent|received)_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)/gm;

/** A node's commands sent and NATS messages sent and received so far, from one read of its /metrics page. */
async function countersOf(port: number): Promise<{ commands: number; packets: number }> {
	const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(res => res.text());
	const commands: CommandCounts = new Map();
	parseCommands(text, commands);
	return {
		commands: [...commands.values()].reduce((a, b) => a + b, 0),
		packets: [...text.matchAll(PACKETS)].reduce((sum, m) => sum + Number(m[2]), 0),
	};
}

async function atRest(deployment: Deployment, viaNats: boolean, extra: Record<string, number>, seconds: number): Promise<IdleProcess[]> {
	const ports = [...deployment.metricsPorts.values()];
	await waitUntilQuiet(ports);
	const nodes = [...deployment.nodes].map(([name, child]) => ({ name, pid: child.pid!, port: deployment.metricsPorts.get(name)! }));
	const before = await Promise.all(nodes.map(n => countersOf(n.port)));
	const cpu = servingCpu({ ...Object.fromEntries(nodes.map(n => [n.name, n.pid])), ...extra });
	const started = Date.now();
	await sleep(seconds * 1000);
	const elapsed = (Date.now() - started) / 1000;
	// Per second of rest: the unit of work is a second.
	const msPerSecond = cpu.stop(elapsed)?.byProcess ?? {};
	const after = await Promise.all(nodes.map(n => countersOf(n.port)));
	const perSecond = (n: number) => round(n / elapsed, 2);
	return Object.entries(msPerSecond).map(([name, ms]) => {
		const i = nodes.findIndex(n => n.name === name);
		return {
			name,
			cpuMsPerSecond: ms,
			commandsPerSecond: i < 0 ? null : perSecond(after[i].commands - before[i].commands),
			natsMessagesPerSecond: i < 0 || !viaNats ? null : perSecond(after[i].packets - before[i].packets),
		};
	});
}

/** The embedded process, then the cluster (2 billing nodes, as `npm run cluster`), each at rest for `seconds`. */
export async function runIdle(
	ctx: BenchContext,
	options: BenchOptions,
	receiver: WebhookReceiver,
	log: (line: string) => void,
): Promise<IdleRun[]> {
	const seconds = options.quick ? 3 : Math.max(30, options.duration);
	const runs: IdleRun[] = [];
	for (const mode of ["embedded", "cluster"] as const) {
		const spec =
			mode === "embedded"
				? embeddedSpec("bench_idle_embedded", { metrics: true })
				: clusterSpec("bench_idle_cluster", 2, { metrics: true });
		const deployment = await deploy(ctx, spec);
		try {
			// Data for the sweeps and the workers to look at, as a shop in use has.
			const shop = await createShop(deployment.url!, receiver.url);
			await checkoutLoad(shop, { connections: 4, seconds: options.quick ? 1 : 3 });
			await sleep(2000);
			const extra: Record<string, number> = {
				...(ctx.databasePid ? { database: ctx.databasePid } : {}),
				...(mode === "cluster" ? { nats: (await ctx.nats()).child.pid! } : {}),
			};
			const processes = await atRest(deployment, mode === "cluster", extra, seconds);
			runs.push({ mode, seconds, processes });
			log(`idle ${mode}, ${seconds} s: ${processes.map(idleText).join("; ")}`);
		} finally {
			await deployment.stop();
		}
	}
	return runs;
}

const idleText = (p: IdleProcess) =>
	`${p.name} ${p.cpuMsPerSecond} ms CPU/s${p.commandsPerSecond === null ? "" : `, ${p.commandsPerSecond} commands/s`}${p.natsMessagesPerSecond === null ? "" : `, ${p.natsMessagesPerSecond} NATS messages/s`}`;

/** One row per mode, every process in its note; the target (halved) is judged against the figures before, in bench/README.md. */
export function idleSummary(runs: IdleRun[]): { rows: Row[]; targets: Target[] } {
	const rows = runs.map(
		(run): Row => ({
			scenario: "idle",
			setting: `${run.mode}, at rest ${run.seconds} s`,
			throughput: round(
				run.processes.filter(p => p.commandsPerSecond !== null).reduce((sum, p) => sum + p.cpuMsPerSecond, 0),
				2,
			),
			unit: "ms CPU/s (our processes)",
			p50: null,
			p95: null,
			p99: null,
			note: run.processes.map(idleText).join("; "),
		}),
	);
	return { rows, targets: [] };
}
