// Scale-out: renewals charged by 1, 2, 3, 4 billing processes, each limited
// to a fraction of a core (cgroup.ts), as if each ran on a small machine of
// its own. On two shared cores, unlimited nodes only compete with each other
// and with the database; limited ones show whether the work spreads across
// nodes, and the database's CPU shows when it becomes the limit.
import { type CpuLimit, limitCpu } from "./cgroup";
import { databaseCpuText, missingText, type RenewalRunOptions, type RenewalRunResult, renewalRun } from "./renewals";
import { type Row, type Target, target } from "./report";
import { medianOf } from "./stats";
import type { BenchContext, Deployment } from "./topology";

export interface ScaleOutRunResult extends RenewalRunResult {
	/** Cores each billing node could use (0: unlimited). */
	cpuLimit: number;
	/** Per billing node: 100 ms periods in which it used its whole quota and was held back. */
	throttledPeriods: Record<string, number>;
	/** Per billing node: the processes put in its cgroup (the node process, and any it had forked). */
	processes: Record<string, number[]>;
}

/** A renewal run whose billing nodes each sit in a cgroup of their own with a quota of `cpu` cores (0: unlimited). */
export async function limitedRenewalRun(
	ctx: BenchContext,
	deployment: Deployment,
	options: RenewalRunOptions & { cpu: number },
): Promise<ScaleOutRunResult> {
	const limits = new Map<string, CpuLimit>();
	const processes: Record<string, number[]> = {};
	try {
		for (let i = 1; options.cpu > 0 && i <= options.billingNodes; i++) {
			const nodeId = `billing-${i}`;
			const limit = limitCpu(`${deployment.namespace}-${nodeId}`, options.cpu);
			limits.set(nodeId, limit);
			processes[nodeId] = limit.add(deployment.nodes.get(nodeId)!.pid!);
		}
		const result = await renewalRun(ctx, deployment, options);
		const throttledPeriods = Object.fromEntries([...limits].map(([nodeId, limit]) => [nodeId, limit.throttledPeriods()]));
		return { ...result, cpuLimit: options.cpu, throttledPeriods, processes };
	} finally {
		// Back to unlimited: in quick mode the same nodes serve the next run.
		for (const limit of limits.values()) limit.release();
	}
}

const limitText = (run: ScaleOutRunResult | undefined) => (!run ? "" : run.cpuLimit ? `, ${run.cpuLimit} core each` : ", unlimited");

/** Renewals/s wanted of n limited nodes, as a multiple of one's. */
const SCALE_TARGETS: Record<number, number> = { 2: 1.8, 4: 3.2 };

/** "billing nodes 0.29–0.30 cores each, throttled in 412 periods" */
function billingCpuText(runs: ScaleOutRunResult[]): string {
	const cores = runs.flatMap(r => Object.values(r.cpu.billing).map(c => c.cores));
	const throttled = runs.reduce((n, r) => n + Object.values(r.throttledPeriods).reduce((a, b) => a + b, 0), 0);
	const limit = runs[0].cpuLimit ? ` of ${runs[0].cpuLimit}` : "";
	return `billing nodes ${Math.min(...cores)}–${Math.max(...cores)}${limit} cores each${runs[0].cpuLimit ? `, throttled in ${throttled} periods` : ""}`;
}

/** The other processes may be at most this busy (cores) for a ratio to measure billing rather than the machine. */
const OTHERS_BUSY_LIMIT = 0.7;
/** Nor may the machine as a whole be this busy. */
const MACHINE_BUSY_LIMIT = 0.95;

/** The busiest other process of a run (the database server included), in cores. */
function busiestOther(run: ScaleOutRunResult): { name: string; cores: number } {
	const others = Object.entries(run.cpu.others).map(([name, c]) => ({ name, cores: c.cores }));
	if (run.cpu.database) others.push({ name: "database", cores: run.cpu.database.cores });
	return others.sort((a, b) => b.cores - a.cores)[0] ?? { name: "none", cores: 0 };
}

/** "others: database 0.41, notifications 0.22, accounts 0.01 cores" (the first run) */
function othersCpuText(runs: ScaleOutRunResult[]): string {
	const run = runs[0];
	const others = Object.entries(run.cpu.others).map(([name, c]) => [name, c.cores] as const);
	if (run.cpu.database) others.push(["database", run.cpu.database.cores]);
	return `others ${others
		.sort((a, b) => b[1] - a[1])
		.map(([name, cores]) => `${name} ${cores}`)
		.join(", ")} cores`;
}

/** Why a run's ratio would measure the machine rather than billing, or null when it measures billing. */
function notBillingBound(run: ScaleOutRunResult): string | null {
	const busiest = busiestOther(run);
	if (busiest.cores > OTHERS_BUSY_LIMIT) return `${busiest.name} ${busiest.cores} cores busy`;
	if (run.cpu.machine.share >= MACHINE_BUSY_LIMIT) return `machine ${Math.round(run.cpu.machine.share * 100)} % busy`;
	return null;
}

export function scaleOutSummary(scaleOut: Record<number, ScaleOutRunResult[]>): { rows: Row[]; targets: Target[] } {
	const rate = (n: number) => (scaleOut[n]?.length ? medianOf(scaleOut[n], r => r.renewalsPerSecond) : null);
	const one = rate(1);
	const rows = new Map<number, Row>();
	for (const [n, runs] of Object.entries(scaleOut)) {
		const own = rate(Number(n))!;
		rows.set(Number(n), {
			scenario: "scale-out",
			setting: `${n} billing node${n === "1" ? "" : "s"}${limitText(runs[0])}`,
			throughput: own,
			unit: "renewals/s",
			p50: null,
			p95: null,
			p99: null,
			note: [
				one && n !== "1" ? `${(own / one).toFixed(2)}× 1 node` : "",
				`${runs[0].customers} customers, ${medianOf(runs, r => r.skipped)} skipped`,
				databaseCpuText(runs),
				billingCpuText(runs),
				othersCpuText(runs),
				missingText(runs),
			]
				.filter(Boolean)
				.join("; "),
		});
	}
	const targets = Object.entries(SCALE_TARGETS).map(([n, wanted]) => {
		const own = rate(Number(n));
		const ratio = one && own !== null ? own / one : null;
		// A ratio taken where something other than billing is the limit is shown, not judged.
		const limited = ratio === null ? null : (scaleOut[Number(n)].map(notBillingBound).find(Boolean) ?? null);
		return target(
			{
				name: `scale-out: renewals, ${n} billing nodes vs 1${limitText(scaleOut[1]?.[0])}`,
				target: `≥ ${wanted}×, others ≤ ${OTHERS_BUSY_LIMIT} core`,
				measured:
					ratio === null ? "–" : `${ratio.toFixed(2)}× (${own} vs ${one} renewals/s)${limited ? `; not billing-bound: ${limited}` : ""}`,
				met: ratio === null || limited ? null : ratio >= wanted,
			},
			rows.get(Number(n)),
		);
	});
	return { rows: [...rows.values()], targets };
}
