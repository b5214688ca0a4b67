// The renewal runs of a benchmark: unlimited billing nodes (renewals),
// CPU-limited ones (scaleout) and one node counting its database commands
// (commands). A full run gives each its own fresh topology, warmed up first;
// quick mode runs them all on one deployment (starting processes is most of
// its time).
import { idleSecondsFor } from "./db-commands";
import type { BenchOptions, Scenario } from "./options";
import { type RenewalRunResult, renewalSpec } from "./renewals";
import type { Results } from "./results";
import { limitedRenewalRun } from "./scale-out";
import { type BenchContext, type Deployment, deploy } from "./topology";
import type { WebhookReceiver } from "./webhook-receiver";

export interface RenewalPlan {
	/** Where the result goes: results.renewals, results.scaleOut, or only results.commands. */
	kind: "renewals" | "scaleOut" | "commands";
	nodes: number;
	/** Cores each billing node may use; 0: unlimited. */
	cpu: number;
	customers: number;
	/** Metrics on and the commands counted: they cost a node ~10 % of its throughput, so only in this run. */
	countCommands: boolean;
}

/** Renewals of the run that counts database commands: enough for the batch reads to amortize. */
const COMMANDS_RENEWALS = 2000;
/**
 * A full run's renewal topologies are fresh: before the measured cycle, each
 * billing node renews this many customers, so that a node limited to a
 * fraction of a core is not measured while still compiling (JIT) its code.
 */
const WARM_UP_RENEWALS_PER_NODE = 200;

/** The runs asked for. Quick mode's unlimited one-node run counts the commands, instead of a run of its own. */
export function renewalPlan(options: BenchOptions): RenewalPlan[] {
	const has = (s: Scenario) => options.scenarios.includes(s);
	const countedByRenewals = options.quick && has("commands") && has("renewals") && options.billingNodes.includes(1);
	const plan: RenewalPlan[] = [
		...(has("renewals") ? options.billingNodes : []).map(nodes => ({
			kind: "renewals" as const,
			nodes,
			cpu: 0,
			customers: options.customers,
			countCommands: countedByRenewals && nodes === 1,
		})),
		...(has("scaleout") ? options.scaleNodes : []).map(nodes => ({
			kind: "scaleOut" as const,
			nodes,
			cpu: options.billingCpu,
			customers: options.scaleCustomers,
			countCommands: false,
		})),
	];
	if (has("commands") && !countedByRenewals) {
		plan.push({ kind: "commands", nodes: 1, cpu: 0, customers: Math.min(options.customers, COMMANDS_RENEWALS), countCommands: true });
	}
	return plan;
}

type Log = (line: string) => void;

function runLine(run: RenewalPlan, result: RenewalRunResult): string {
	const limit = run.cpu ? ` limited to ${run.cpu} core each` : ", unlimited";
	const nodes = (group: Record<string, { cores: number }>) => Object.entries(group).map(([node, c]) => `${node} ${c.cores}`);
	const cpu = [
		`database ${result.cpu.database?.cores ?? "?"}`,
		...nodes(result.cpu.billing),
		...nodes(result.cpu.others),
		`machine ${result.cpu.machine.cores} (${result.cpu.machine.outside} outside the benchmark)`,
	];
	const commands = result.commands ? `; ${result.commands.total} commands per renewal (sandbox ${result.commands.sandbox})` : "";
	return `renewals ${run.nodes} node(s)${limit}: ${result.renewalsPerSecond}/s (${result.charged} charged in ${result.seconds} s, ${result.skipped} skipped, ${result.transactions} transactions, ${result.webhooksMissing} webhooks missing); cores: ${cpu.join(", ")}${commands}`;
}

/** Runs the plan: each run on a fresh, warmed-up topology, or all on `shared` (quick mode, the cluster scenario's kept deployment). */
export async function runRenewalPlan(
	ctx: BenchContext,
	options: BenchOptions,
	results: Results,
	receiver: WebhookReceiver,
	kept: Deployment | null,
	log: Log,
): Promise<void> {
	const plan = renewalPlan(options);
	if (!plan.length) return;
	const metrics = plan.some(run => run.countCommands);
	const maxNodes = Math.max(...plan.map(run => run.nodes));
	const shared = kept ?? (options.quick ? await deploy(ctx, renewalSpec("bench_renewals", maxNodes, { metrics })) : null);
	try {
		for (const [i, run] of plan.entries()) {
			log(`renewals: ${run.customers} due customers, ${run.nodes} billing node(s)${run.cpu ? ` limited to ${run.cpu} core each` : ""}`);
			const deployment =
				shared ?? (await deploy(ctx, renewalSpec(`bench_${run.kind}_${run.nodes}`, run.nodes, { metrics: run.countCommands })));
			try {
				const firstId = 1_000_000_000 + i * 10_000_000;
				const common = { billingNodes: run.nodes, receiver, cpu: run.cpu };
				if (!shared) {
					const customers = WARM_UP_RENEWALS_PER_NODE * run.nodes;
					const warmUp = await limitedRenewalRun(ctx, deployment, { ...common, customers, firstId: firstId + 5_000_000, idleSeconds: 0 });
					log(`renewals warm-up: ${warmUp.charged} charged, ${warmUp.renewalsPerSecond}/s`);
				}
				const idleSeconds = run.countCommands ? idleSecondsFor(options) : 0;
				const result = await limitedRenewalRun(ctx, deployment, { ...common, customers: run.customers, firstId, idleSeconds });
				if (run.kind !== "commands") (results[run.kind][run.nodes] ??= []).push(result);
				if (run.countCommands) results.commands.renewal = result;
				log(runLine(run, result));
			} finally {
				if (!shared) await deployment.stop();
			}
		}
	} finally {
		await shared?.stop();
	}
}
