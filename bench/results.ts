// What a run records (bench/results/<date>.json) and the table and targets
// made of it: medians over the repeats, ratios within the run.

import type { CommandsPerUnit } from "./db-commands";
import { byServiceText } from "./db-commands";
import { type GrowthStep, growthSummary } from "./growth";
import { type IdleRun, idleSummary } from "./idle";
import type { CheckoutLoadResult } from "./load";
import { type CheckoutCpu, type Measured, outsideText, READ_CONNECTIONS, type ReadRun, type WebhookRun } from "./measure";
import type { BenchOptions } from "./options";
import { databaseCpuText, missingText, type RenewalRunResult } from "./renewals";
import { type Row, type Target, target } from "./report";
import type { ScaleOutRunResult } from "./scale-out";
import { scaleOutSummary } from "./scale-out";
import { median, medianOf, round } from "./stats";

/** Issue 39's targets: checkouts/s of the bare baseline's, and the cluster's of the embedded process's (c=16). */
const BASELINE_TARGET = 0.7;
const CLUSTER_CHECKOUT_TARGET = 0.9;
/** Reads/s of the read baseline's, and the cluster's of the embedded process's; CPU per read, all processes. */
const READ_BASELINE_TARGET = 0.8;
const CLUSTER_READ_TARGET = 0.8;
const READ_CPU_TARGET_MS = 0.15;
const RENEWALS_TARGET = 1000;

/** The concurrency the checkout targets name. */
export const TARGET_CONCURRENCY = 16;

/** A checkout run, with the CPU its serving processes spent (absent in results written before it was measured). */
export type CheckoutRun = Measured<CheckoutLoadResult> & { cpu?: CheckoutCpu | null };

/** The median CPU milliseconds per checkout of the runs that measured it. */
function cpuPerCheckout(runs: CheckoutRun[] | undefined): number | null {
	const measured = (runs ?? []).flatMap(r => (r.cpu ? [r.cpu] : []));
	return measured.length ? medianOf(measured, c => c.perCheckoutMs) : null;
}

export interface Results {
	startedAt: string;
	finishedAt?: string;
	options: BenchOptions;
	machine: { cpus: number; model: string; memoryGb: number; node: string; loadAverageAtStart: number[]; loadAverageAtEnd?: number[] };
	database: { kind: string; reason: string };
	checkout: Record<"embedded" | "cluster", Record<number, CheckoutRun[]>>;
	baseline: Record<number, CheckoutRun[]>;
	webhooks: Record<"embedded" | "cluster", Record<number, WebhookRun[]>>;
	/** Keyed reads of the embedded service, of the read baseline (measured in turns with it) and of the cluster. */
	reads: Record<"customer" | "transaction", ReadRun[]>;
	readBaseline?: Record<"customer" | "transaction", ReadRun[]>;
	clusterReads?: Record<"customer" | "transaction", ReadRun[]>;
	/** Every process at rest, embedded and cluster. */
	idle?: IdleRun[];
	/** Unlimited billing nodes, by their number. */
	renewals: Record<number, RenewalRunResult[]>;
	/** Billing nodes limited to options.billingCpu cores each, by their number. */
	scaleOut: Record<number, ScaleOutRunResult[]>;
	growth: GrowthStep[];
	/** Database commands per checkout, and the renewal run that counted them per renewal (each with its top commands). */
	commands: { checkout: CommandsPerUnit | null; renewal: RenewalRunResult | null };
	rows?: Row[];
	targets?: Target[];
}

export function emptyResults(startedAt: Date, options: BenchOptions, machine: Results["machine"]): Results {
	return {
		startedAt: startedAt.toISOString(),
		options,
		machine,
		database: { kind: "", reason: "" },
		checkout: { embedded: {}, cluster: {} },
		baseline: {},
		webhooks: { embedded: {}, cluster: {} },
		reads: { customer: [], transaction: [] },
		readBaseline: { customer: [], transaction: [] },
		clusterReads: { customer: [], transaction: [] },
		idle: [],
		renewals: {},
		scaleOut: {},
		growth: [],
		commands: { checkout: null, renewal: null },
	};
}

const latency = (runs: { p50: number; p95: number; p99: number }[]) => ({
	p50: medianOf(runs, r => r.p50),
	p95: medianOf(runs, r => r.p95),
	p99: medianOf(runs, r => r.p99),
});

function checkoutSummary(results: Results): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const baselineAt = (c: number) => {
		const runs = results.baseline[c];
		return runs?.length ? medianOf(runs, r => r.checkoutsPerSecond) : null;
	};
	let embedded16: Row | undefined;
	let cluster16: Row | undefined;
	for (const mode of ["embedded", "cluster"] as const) {
		for (const [c, runs] of Object.entries(results.checkout[mode])) {
			const throughput = medianOf(runs, r => r.checkoutsPerSecond);
			const base = baselineAt(Number(c));
			const row: Row = {
				scenario: "checkout",
				setting: `${mode} c=${c}`,
				throughput,
				unit: "checkouts/s",
				...latency(runs.map(r => r.checkout)),
				note: [
					base ? `${(throughput / base).toFixed(2)} of baseline` : "",
					cpuPerCheckout(runs) !== null ? `CPU ${cpuPerCheckout(runs)} ms per checkout (all processes)` : "",
					`submission alone p99 ${medianOf(runs, r => r.submit.p99)} ms`,
					outsideText(runs),
				]
					.filter(Boolean)
					.join("; "),
			};
			rows.push(row);
			if (mode === "embedded" && Number(c) === TARGET_CONCURRENCY) embedded16 = row;
			if (mode === "cluster" && Number(c) === TARGET_CONCURRENCY) cluster16 = row;
		}
	}
	for (const [c, runs] of Object.entries(results.baseline)) {
		rows.push({
			scenario: "baseline",
			setting: `bare server c=${c}`,
			throughput: medianOf(runs, r => r.checkoutsPerSecond),
			unit: "checkouts/s",
			...latency(runs.map(r => r.checkout)),
			note: [
				"same writes, raw driver; no reads, no card decryption",
				cpuPerCheckout(runs) !== null ? `CPU ${cpuPerCheckout(runs)} ms per checkout` : "",
				outsideText(runs),
			]
				.filter(Boolean)
				.join("; "),
		});
	}
	for (const mode of ["embedded", "cluster"] as const) {
		for (const [c, runs] of Object.entries(results.webhooks[mode])) {
			const row: Row = {
				scenario: "webhooks",
				setting: `delay, ${mode} c=${c}`,
				throughput: null,
				unit: "",
				...latency(runs.map(r => r.delay)),
				note: `${runs.reduce((n, r) => n + r.events, 0)} events, ${runs.reduce((n, r) => n + r.missing, 0)} missing`,
			};
			rows.push(row);
		}
	}
	const targets: Target[] = [];
	const runs16 = results.checkout.embedded[TARGET_CONCURRENCY];
	const p99 = runs16?.length ? medianOf(runs16, r => r.checkout.p99) : null;
	targets.push(
		target(
			{
				name: "checkout p99, embedded c=16",
				target: "≤ 150 ms",
				measured: p99 === null ? "–" : `${p99} ms (submission alone ${medianOf(runs16!, r => r.submit.p99)} ms)`,
				met: p99 === null ? null : p99 <= 150,
			},
			embedded16,
		),
	);
	const ours = runs16?.length ? medianOf(runs16, r => r.checkoutsPerSecond) : null;
	const base = baselineAt(TARGET_CONCURRENCY);
	targets.push(
		target(
			{
				name: "checkout throughput vs the bare baseline, c=16",
				target: `≥ ${BASELINE_TARGET}`,
				measured: ours !== null && base ? `${(ours / base).toFixed(2)} (${ours} vs ${base} checkouts/s)` : "–",
				met: ours !== null && base ? ours / base >= BASELINE_TARGET : null,
			},
			embedded16,
		),
	);
	const cpu16 = cpuPerCheckout(runs16);
	targets.push(
		target(
			{
				name: "CPU per checkout, embedded c=16, all processes (node and database server)",
				target: "≤ 10 ms",
				measured: cpu16 === null ? "–" : `${cpu16} ms (baseline ${cpuPerCheckout(results.baseline[TARGET_CONCURRENCY]) ?? "–"} ms)`,
				met: cpu16 === null ? null : cpu16 <= 10,
			},
			embedded16,
		),
	);
	const clusterRuns = results.checkout.cluster[TARGET_CONCURRENCY];
	const clusterRate = clusterRuns?.length ? medianOf(clusterRuns, r => r.checkoutsPerSecond) : null;
	targets.push(
		target(
			{
				name: "checkouts/s, cluster vs embedded, c=16, same cores",
				target: `≥ ${CLUSTER_CHECKOUT_TARGET}×`,
				measured:
					clusterRate === null || ours === null ? "–" : `${(clusterRate / ours).toFixed(2)}× (${clusterRate} vs ${ours} checkouts/s)`,
				met: clusterRate === null || ours === null ? null : clusterRate / ours >= CLUSTER_CHECKOUT_TARGET,
			},
			cluster16,
		),
	);
	return { rows, targets };
}

type ReadKind = "customer" | "transaction";

function readCpuOf(runs: ReadRun[] | undefined): number | null {
	const measured = (runs ?? []).flatMap(r => (r.cpu ? [r.cpu] : []));
	return measured.length ? round(median(measured.map(c => c.perReadMs)), 3) : null;
}

const rateOf = (runs: ReadRun[] | undefined) => (runs?.length ? medianOf(runs, r => r.requestsPerSecond) : null);

function readRow(setting: string, runs: ReadRun[], extra: string[]): Row {
	const cpu = readCpuOf(runs);
	const byProcess = runs.find(r => r.cpu)?.cpu?.byProcess;
	return {
		scenario: "reads",
		setting,
		throughput: medianOf(runs, r => r.requestsPerSecond),
		unit: "req/s",
		...latency(runs.map(r => r.latency)),
		note: [
			...extra,
			cpu !== null
				? `CPU ${cpu} ms per read (${Object.entries(byProcess ?? {})
						.map(([name, ms]) => `${name} ${ms}`)
						.join(", ")}; first run)`
				: "",
			`${runs.reduce((n, r) => n + r.failures, 0)} failed`,
			outsideText(runs),
		]
			.filter(Boolean)
			.join("; "),
	};
}

/** The keyed reads: embedded and its bare baseline (taken in turns), and the cluster. */
function readSummary(results: Results): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const targets: Target[] = [];
	for (const kind of ["customer", "transaction"] as const satisfies ReadKind[]) {
		const ours = results.reads[kind];
		if (!ours.length) continue;
		const base = results.readBaseline?.[kind] ?? [];
		const cluster = results.clusterReads?.[kind] ?? [];
		const [oursRate, baseRate, clusterRate] = [rateOf(ours), rateOf(base), rateOf(cluster)];
		const embeddedRow = readRow(`GET /api/${kind}/{id}, embedded c=${READ_CONNECTIONS}`, ours, [
			baseRate ? `${(oursRate! / baseRate).toFixed(2)} of the read baseline` : "",
		]);
		rows.push(embeddedRow);
		if (base.length)
			rows.push(readRow(`read baseline /api/${kind}/{id} c=${READ_CONNECTIONS}`, base, ["token from memory, one read by _id, the view"]));
		const clusterRow = cluster.length
			? readRow(`GET /api/${kind}/{id}, cluster c=${READ_CONNECTIONS}`, cluster, [`${(clusterRate! / oursRate!).toFixed(2)} of embedded`])
			: undefined;
		if (clusterRow) rows.push(clusterRow);
		const cpu = readCpuOf(ours);
		targets.push(
			target(
				{
					name: `reads, GET /api/${kind}/{id} vs the read baseline, c=16`,
					target: `≥ ${READ_BASELINE_TARGET}`,
					measured: baseRate && oursRate ? `${(oursRate / baseRate).toFixed(2)} (${oursRate} vs ${baseRate} req/s)` : "–",
					met: baseRate && oursRate ? oursRate / baseRate >= READ_BASELINE_TARGET : null,
				},
				embeddedRow,
			),
			{
				name: `CPU per read, GET /api/${kind}/{id}, embedded, all processes`,
				target: `≤ ${READ_CPU_TARGET_MS} ms`,
				measured: cpu === null ? "–" : `${cpu} ms (read baseline ${readCpuOf(base) ?? "–"} ms)`,
				met: cpu === null ? null : cpu <= READ_CPU_TARGET_MS,
			},
			target(
				{
					name: `reads, GET /api/${kind}/{id}, cluster vs embedded, c=16`,
					target: `≥ ${CLUSTER_READ_TARGET}×`,
					measured: clusterRate && oursRate ? `${(clusterRate / oursRate).toFixed(2)}× (${clusterRate} vs ${oursRate} req/s)` : "–",
					met: clusterRate && oursRate ? clusterRate / oursRate >= CLUSTER_READ_TARGET : null,
				},
				clusterRow,
			),
		);
	}
	return { rows, targets };
}

function renewalSummary(results: Results): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const rate = (n: number) => (results.renewals[n]?.length ? medianOf(results.renewals[n], r => r.renewalsPerSecond) : null);
	const byNodes: Record<number, Row> = {};
	for (const [n, runs] of Object.entries(results.renewals)) {
		const one = rate(1);
		const own = rate(Number(n))!;
		rows.push(
			(byNodes[Number(n)] = {
				scenario: "renewals",
				setting: `${n} billing node${n === "1" ? "" : "s"}, unlimited`,
				throughput: own,
				unit: "renewals/s",
				p50: null,
				p95: null,
				p99: null,
				note: [
					`${runs[0].customers} customers, ${medianOf(runs, r => r.skipped)} skipped`,
					one && n !== "1" ? `scaling efficiency ${(own / one / Number(n)).toFixed(2)}` : "",
					databaseCpuText(runs),
					missingText(runs),
				]
					.filter(Boolean)
					.join("; "),
			}),
		);
	}
	const one = rate(1);
	const targets: Target[] = [
		target(
			{
				name: "renewals, 1 unlimited billing node",
				target: `≥ ${RENEWALS_TARGET.toLocaleString("en")}/s`,
				measured: one === null ? "–" : `${one}/s`,
				met: one === null ? null : one >= RENEWALS_TARGET,
			},
			byNodes[1],
		),
	];
	return { rows, targets };
}

const RENEWAL_COMMANDS_TARGET = 4;
const CHECKOUT_COMMANDS_TARGET = 20;

function commandsSummary(results: Results): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const targets: Target[] = [];
	const checkout = results.commands.checkout;
	const checkoutRow: Row | undefined = checkout
		? {
				scenario: "commands",
				setting: `per checkout, embedded c=${TARGET_CONCURRENCY}`,
				throughput: checkout.total,
				unit: "commands",
				p50: null,
				p95: null,
				p99: null,
				note: `${byServiceText(checkout)}; of them the sandbox processor's ${checkout.sandbox} and the vault's ${checkout.vault ?? "–"}; ${idleText(checkout)}`,
			}
		: undefined;
	if (checkoutRow) rows.push(checkoutRow);
	targets.push(
		target(
			{
				name: "database commands per checkout (all, the sandbox processor's and the vault's included)",
				target: `≤ ${CHECKOUT_COMMANDS_TARGET}`,
				measured: checkout
					? `${checkout.total} (the sandbox processor's ${checkout.sandbox}, the vault's ${checkout.vault ?? "–"}; ${Math.round((checkout.total - checkout.sandbox - (checkout.vault ?? 0)) * 100) / 100} without them)`
					: "–",
				met: checkout ? checkout.total <= CHECKOUT_COMMANDS_TARGET : null,
			},
			checkoutRow,
		),
	);
	const renewal = results.commands.renewal?.commands ?? null;
	const ours = renewal ? Math.round((renewal.total - renewal.sandbox) * 100) / 100 : null;
	const row: Row | undefined = renewal
		? {
				scenario: "commands",
				setting: `per renewal, 1 billing node, ${results.commands.renewal!.customers} customers`,
				throughput: ours,
				unit: "commands",
				p50: null,
				p95: null,
				p99: null,
				note: `without the sandbox processor's ${renewal.sandbox} (${renewal.total} with them); ${byServiceText(renewal)}; ${idleText(renewal)}`,
			}
		: undefined;
	if (row) rows.push(row);
	targets.push(
		target(
			{
				name: "database commands per renewal, amortized (not counting the sandbox processor's)",
				target: `≤ ${RENEWAL_COMMANDS_TARGET}`,
				measured: renewal ? `${ours} (${renewal.total} with the sandbox processor's ${renewal.sandbox})` : "–",
				met: ours === null ? null : ours <= RENEWAL_COMMANDS_TARGET,
			},
			row,
		),
	);
	return { rows, targets };
}

const idleText = (c: CommandsPerUnit) => `${c.raw} before taking off ${c.idlePerSecond}/s idle × ${c.seconds} s`;

export function summarizeResults(results: Results): { rows: Row[]; targets: Target[] } {
	const parts = [
		checkoutSummary(results),
		readSummary(results),
		idleSummary(results.idle ?? []),
		growthSummary(results.growth),
		renewalSummary(results),
		scaleOutSummary(results.scaleOut),
		commandsSummary(results),
	];
	return { rows: parts.flatMap(p => p.rows), targets: parts.flatMap(p => p.targets) };
}

/** The commands that most deserve a look, as lines for the terminal (the JSON has them all). */
export function topCommandsText(results: Results, count = 8): string {
	const renewal = results.commands.renewal?.commands;
	const list = (title: string, c: CommandsPerUnit | null | undefined) =>
		c
			? [
					`${title} (${c.total} in all):`,
					...c.top.slice(0, count).map(t => `  ${t.perUnit.toFixed(2).padStart(6)}  ${t.service} ${t.command} ${t.collection}`),
				]
			: [];
	return [...list("Database commands per checkout", results.commands.checkout), ...list("Database commands per renewal", renewal)].join(
		"\n",
	);
}
