// `npm run bench`: measures checkout, reads, renewals and webhook delay, and
// the baseline (a bare server with the same database writes) in the same run
// on the same database server; prints a table and writes
// bench/results/<date>.json and <date>.svg. See bench/README.md.
//
// The order of a run: the embedded service (`npm start`'s topology) and the
// baseline server run side by side and are measured in turns, concurrency by
// concurrency, so slow phases of a noisy machine hit both; reads follow on the
// data the checkouts left; then cluster mode; then the renewal topologies.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../shared/db.mixin";
import { type CheckoutLoadResult, type CheckoutTarget, checkoutLoad, type ReadLoadResult, readLoad } from "./load";
import { type BenchOptions, parseOptions, type Scenario } from "./options";
import { summarize } from "./profile-summary";
import { type RenewalRunResult, renewalRun, renewalSpec } from "./renewals";
import { chart, type Row, resultsTable, type Target, targetsTable } from "./report";
import { createShop, type Shop } from "./shop";
import { median, type Percentiles, percentiles, round } from "./stats";
import { type BenchContext, clusterSpec, createContext, type Deployment, deploy, embeddedSpec, startBaseline } from "./topology";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver";

/** Concurrency of the read runs and of the webhook measurement when checkout runs are not asked for. */
const READ_CONNECTIONS = 16;
const TARGET_CONCURRENCY = 16;
/** Billing processes in cluster mode, as `npm run cluster` starts by default. */
const CLUSTER_BILLING_NODES = 2;

interface WebhookRun {
	events: number;
	missing: number;
	delay: Percentiles;
}

interface Results {
	startedAt: string;
	finishedAt?: string;
	options: BenchOptions;
	machine: { cpus: number; model: string; memoryGb: number; node: string; loadAverageAtStart: number[]; loadAverageAtEnd?: number[] };
	database: { kind: string; reason: string };
	checkout: Record<"embedded" | "cluster", Record<number, CheckoutLoadResult[]>>;
	baseline: Record<number, CheckoutLoadResult[]>;
	webhooks: Record<"embedded" | "cluster", Record<number, WebhookRun[]>>;
	reads: Record<"customer" | "transaction", ReadLoadResult[]>;
	renewals: Record<number, RenewalRunResult[]>;
	rows?: Row[];
	targets?: Target[];
}

const began = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
const ms = (p: Percentiles) => `p50 ${p.p50} / p95 ${p.p95} / p99 ${p.p99} ms`;
const failuresText = (f: Record<string, number>) => (Object.keys(f).length ? `; failures ${JSON.stringify(f)}` : "");

/** Warm-up (not measured), then the measured run; the webhooks of the measured run's checkouts are awaited before the next run. */
async function measureCheckout(target: CheckoutTarget, connections: number, options: BenchOptions, receiver: WebhookReceiver | null) {
	if (options.warmup > 0) await checkoutLoad(target, { connections, seconds: options.warmup });
	const window = receiver?.window();
	const result = await checkoutLoad(target, {
		connections,
		seconds: options.duration,
		onOk: receiver ? (id, at) => receiver.answered(id, at) : undefined,
	});
	let webhooks: WebhookRun | null = null;
	if (receiver && window) {
		await receiver.drain(window, options.quick ? 5_000 : 120_000);
		const delays = window.delays();
		webhooks = { events: delays.length, missing: window.missing(), delay: percentiles(delays) };
	}
	return { result, webhooks };
}

async function idsOf(mongoUrl: string, collection: "customers" | "transactions", accountId: number): Promise<number[]> {
	const client = await MongoClient.connect(mongoUrl);
	try {
		const docs = await client
			.db(databaseNameFor("billing", mongoUrl))
			.collection(collection)
			.find({ accountId }, { projection: { _id: 1 } })
			.limit(5000)
			.toArray();
		return docs.map(d => d._id as unknown as number);
	} finally {
		await client.close();
	}
}

async function runScenarios(ctx: BenchContext, options: BenchOptions, results: Results): Promise<void> {
	const has = (s: Scenario) => options.scenarios.includes(s);
	const receiver = await startWebhookReceiver();
	const baseline = has("baseline") ? await startBaseline(ctx, "bench_baseline") : null;
	try {
		const baselineTarget = (shop: Shop): CheckoutTarget => ({ ...shop, url: baseline!.url });
		const checkoutConcurrency = has("checkout") ? options.concurrency : has("webhooks") ? [TARGET_CONCURRENCY] : [];

		if (checkoutConcurrency.length || has("reads") || has("baseline")) {
			log("embedded mode (npm start's topology: every service in one process)");
			const embedded = await deploy(ctx, embeddedSpec("bench_embedded"));
			try {
				const shop = await createShop(embedded.url!, receiver.url);
				const baselineConcurrency = checkoutConcurrency.length ? checkoutConcurrency : options.concurrency;
				for (let r = 1; r <= options.repeat; r++) {
					for (const c of new Set([...checkoutConcurrency, ...(baseline ? baselineConcurrency : [])])) {
						if (checkoutConcurrency.includes(c)) {
							const { result, webhooks } = await measureCheckout(shop, c, options, receiver);
							(results.checkout.embedded[c] ??= []).push(result);
							(results.webhooks.embedded[c] ??= []).push(webhooks!);
							log(
								`checkout embedded c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}; webhooks ${ms(webhooks!.delay)}, ${webhooks!.missing} missing${failuresText(result.failures)}`,
							);
						}
						if (baseline) {
							const { result } = await measureCheckout(baselineTarget(shop), c, options, null);
							(results.baseline[c] ??= []).push(result);
							log(`baseline c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}${failuresText(result.failures)}`);
						}
					}
				}
				if (has("reads")) {
					// Reads need customers and transactions: the checkouts above made them, or a short load does.
					if (!checkoutConcurrency.length) await checkoutLoad(shop, { connections: TARGET_CONCURRENCY, seconds: options.quick ? 2 : 5 });
					for (const kind of ["customer", "transaction"] as const) {
						const ids = await idsOf(embedded.mongoUrl, kind === "customer" ? "customers" : "transactions", shop.accountId);
						const paths = ids.map(id => `/api/${kind}/${id}`);
						for (let r = 1; r <= options.repeat; r++) {
							if (options.warmup > 0)
								await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.warmup });
							const result = await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.duration });
							results.reads[kind].push(result);
							log(
								`reads ${kind} c=${READ_CONNECTIONS} run ${r}: ${result.requestsPerSecond} req/s, ${ms(result.latency)}, ${result.failures} failed, ${ids.length} ids`,
							);
						}
					}
				}
			} finally {
				await embedded.stop();
			}
		}

		// Quick mode keeps the cluster running for the renewal runs (starting processes is most of its time).
		let keptCluster: Deployment | null = null;
		if (has("cluster")) {
			log("cluster mode (npm run cluster's topology: a process per service over NATS)");
			const billingNodes = options.quick && has("renewals") ? Math.max(...options.billingNodes) : CLUSTER_BILLING_NODES;
			const cluster = await deploy(ctx, clusterSpec("bench_cluster", billingNodes));
			// A receiver of its own: customer ids start over in the cluster's databases.
			const clusterReceiver = await startWebhookReceiver();
			try {
				const shop = await createShop(cluster.url!, clusterReceiver.url);
				for (let r = 1; r <= options.repeat; r++) {
					for (const c of options.concurrency) {
						const { result, webhooks } = await measureCheckout(shop, c, options, clusterReceiver);
						(results.checkout.cluster[c] ??= []).push(result);
						(results.webhooks.cluster[c] ??= []).push(webhooks!);
						log(
							`checkout cluster c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}; webhooks ${ms(webhooks!.delay)}${failuresText(result.failures)}`,
						);
					}
				}
				if (options.quick && has("renewals")) keptCluster = cluster;
			} finally {
				await clusterReceiver.stop();
				if (!keptCluster) await cluster.stop();
			}
		}
		await baseline?.stop();

		if (has("renewals")) {
			// Quick mode shares one deployment among the runs (starting processes is most of its time); a full run starts each afresh.
			const shared =
				keptCluster ?? (options.quick ? await deploy(ctx, renewalSpec("bench_renewals", Math.max(...options.billingNodes))) : null);
			try {
				for (const [i, n] of options.billingNodes.entries()) {
					log(`renewals: ${options.customers} due customers, ${n} billing node(s)`);
					const deployment = shared ?? (await deploy(ctx, renewalSpec(`bench_renewals_${n}`, n)));
					try {
						const result = await renewalRun(ctx, deployment, {
							billingNodes: n,
							customers: options.customers,
							webhookUrl: receiver.url,
							firstId: 1_000_000_000 + i * 10_000_000,
						});
						(results.renewals[n] ??= []).push(result);
						log(
							`renewals ${n} node(s): ${result.renewalsPerSecond}/s (${result.charged} charged in ${result.seconds} s, ${result.skipped} skipped, ${result.transactions} transactions)`,
						);
					} finally {
						if (!shared) await deployment.stop();
					}
				}
			} finally {
				await shared?.stop();
			}
		}
	} finally {
		await baseline?.stop();
		await receiver.stop();
	}
}

/** Medians over the repeats, per field. */
function medianOf<T>(runs: T[], pick: (run: T) => number): number {
	return round(median(runs.map(pick)));
}

function summarizeResults(results: Results): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const baselineAt = (c: number) => {
		const runs = results.baseline[c];
		return runs?.length ? medianOf(runs, r => r.checkoutsPerSecond) : null;
	};
	for (const mode of ["embedded", "cluster"] as const) {
		for (const [c, runs] of Object.entries(results.checkout[mode])) {
			const throughput = medianOf(runs, r => r.checkoutsPerSecond);
			const base = baselineAt(Number(c));
			rows.push({
				scenario: "checkout",
				setting: `${mode} c=${c}`,
				throughput,
				unit: "checkouts/s",
				p50: medianOf(runs, r => r.checkout.p50),
				p95: medianOf(runs, r => r.checkout.p95),
				p99: medianOf(runs, r => r.checkout.p99),
				note: `${base ? `${(throughput / base).toFixed(2)} of baseline; ` : ""}submission alone p99 ${medianOf(runs, r => r.submit.p99)} ms`,
			});
		}
	}
	for (const [c, runs] of Object.entries(results.baseline)) {
		rows.push({
			scenario: "baseline",
			setting: `bare server c=${c}`,
			throughput: medianOf(runs, r => r.checkoutsPerSecond),
			unit: "checkouts/s",
			p50: medianOf(runs, r => r.checkout.p50),
			p95: medianOf(runs, r => r.checkout.p95),
			p99: medianOf(runs, r => r.checkout.p99),
			note: "same writes, raw driver",
		});
	}
	for (const mode of ["embedded", "cluster"] as const) {
		for (const [c, runs] of Object.entries(results.webhooks[mode])) {
			rows.push({
				scenario: "webhooks",
				setting: `delay, ${mode} c=${c}`,
				throughput: null,
				unit: "",
				p50: medianOf(runs, r => r.delay.p50),
				p95: medianOf(runs, r => r.delay.p95),
				p99: medianOf(runs, r => r.delay.p99),
				note: `${runs.reduce((n, r) => n + r.events, 0)} events, ${runs.reduce((n, r) => n + r.missing, 0)} missing`,
			});
		}
	}
	for (const kind of ["customer", "transaction"] as const) {
		const runs = results.reads[kind];
		if (!runs.length) continue;
		rows.push({
			scenario: "reads",
			setting: `GET /api/${kind}/{id} c=${READ_CONNECTIONS}`,
			throughput: medianOf(runs, r => r.requestsPerSecond),
			unit: "req/s",
			p50: medianOf(runs, r => r.latency.p50),
			p95: medianOf(runs, r => r.latency.p95),
			p99: medianOf(runs, r => r.latency.p99),
			note: `${runs.reduce((n, r) => n + r.failures, 0)} failed`,
		});
	}
	const renewalRate = (n: number) => (results.renewals[n]?.length ? medianOf(results.renewals[n], r => r.renewalsPerSecond) : null);
	for (const [n, runs] of Object.entries(results.renewals)) {
		const one = renewalRate(1);
		const rate = renewalRate(Number(n))!;
		rows.push({
			scenario: "renewals",
			setting: `${n} billing node${n === "1" ? "" : "s"}`,
			throughput: rate,
			unit: "renewals/s",
			p50: null,
			p95: null,
			p99: null,
			note: `${runs[0].customers} customers, ${medianOf(runs, r => r.skipped)} skipped${one && n !== "1" ? `; scaling efficiency ${(rate / one / Number(n)).toFixed(2)}` : ""}`,
		});
	}

	const targets: Target[] = [];
	const embedded16 = results.checkout.embedded[TARGET_CONCURRENCY];
	const p99 = embedded16?.length ? medianOf(embedded16, r => r.checkout.p99) : null;
	targets.push({
		name: "checkout p99, embedded c=16",
		target: "≤ 50 ms",
		measured: p99 === null ? "–" : `${p99} ms (submission alone ${medianOf(embedded16!, r => r.submit.p99)} ms)`,
		met: p99 === null ? null : p99 <= 50,
	});
	const ours = embedded16?.length ? medianOf(embedded16, r => r.checkoutsPerSecond) : null;
	const base = baselineAt(TARGET_CONCURRENCY);
	targets.push({
		name: "checkout throughput vs baseline, c=16",
		target: "≥ 50 %",
		measured: ours !== null && base ? `${((ours / base) * 100).toFixed(0)} % (${ours} vs ${base} checkouts/s)` : "–",
		met: ours !== null && base ? ours / base >= 0.5 : null,
	});
	for (const kind of ["customer", "transaction"] as const) {
		const runs = results.reads[kind];
		const rps = runs.length ? medianOf(runs, r => r.requestsPerSecond) : null;
		const readP99 = runs.length ? medianOf(runs, r => r.latency.p99) : null;
		targets.push({
			name: `reads, GET /api/${kind}/{id}`,
			target: "≥ 2,000 req/s, p99 ≤ 20 ms",
			measured: rps === null ? "–" : `${rps} req/s, p99 ${readP99} ms`,
			met: rps === null ? null : rps >= 2000 && readP99! <= 20,
		});
	}
	const two = renewalRate(2);
	const three = renewalRate(3);
	targets.push({
		name: "renewals with 2 billing nodes",
		target: "≥ 1,000/s",
		measured: two === null ? "–" : `${two}/s`,
		met: two === null ? null : two >= 1000,
	});
	targets.push({
		name: "renewals, 3 nodes vs 2",
		target: "faster",
		measured: two === null || three === null ? "–" : `${three}/s vs ${two}/s`,
		met: two === null || three === null ? null : three > two,
	});
	const hooks = results.webhooks.embedded[TARGET_CONCURRENCY];
	const hookP99 = hooks?.length ? medianOf(hooks, r => r.delay.p99) : null;
	targets.push({
		name: "webhook delay p99, embedded c=16",
		target: "≤ 500 ms",
		measured: hookP99 === null ? "–" : `${hookP99} ms`,
		met: hookP99 === null ? null : hookP99 <= 500,
	});
	return { rows, targets };
}

function summarizeProfiles(profileDir: string): string {
	if (!existsSync(profileDir)) return "";
	const lines: string[] = [];
	for (const dir of readdirSync(profileDir).sort()) {
		const folder = path.join(profileDir, dir);
		if (!statSync(folder).isDirectory()) continue;
		// The main thread's profile is the big one; the other is tsx's loader thread.
		const files = readdirSync(folder)
			.filter(f => f.endsWith(".cpuprofile"))
			.map(f => path.join(folder, f));
		const main = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
		if (main) lines.push(`== ${dir}\n${summarize(main, 25)}\n`);
	}
	return lines.join("\n");
}

async function main(): Promise<void> {
	const options = parseOptions(process.argv.slice(2));
	const startedAt = new Date();
	const stamp = startedAt.toISOString().replace(/:/g, "-").replace(/\..*$/, "");
	mkdirSync(options.outDir, { recursive: true });
	const profileDir = options.profile ? path.resolve(options.outDir, "profiles", stamp) : undefined;
	const logFile = path.resolve(options.outDir, `${stamp}.log`);
	const cpus = os.cpus();
	const results: Results = {
		startedAt: startedAt.toISOString(),
		options,
		machine: {
			cpus: cpus.length,
			model: cpus[0]?.model ?? "?",
			memoryGb: round(os.totalmem() / 2 ** 30),
			node: process.version,
			loadAverageAtStart: os.loadavg().map(l => round(l, 2)),
		},
		database: { kind: "", reason: "" },
		checkout: { embedded: {}, cluster: {} },
		baseline: {},
		webhooks: { embedded: {}, cluster: {} },
		reads: { customer: [], transaction: [] },
		renewals: {},
	};
	log(
		`${options.quick ? "quick run (a smoke test, not a measurement)" : "full run"}: ${options.scenarios.join(", ")}; service logs in ${path.relative(process.cwd(), logFile)}`,
	);
	log(`machine: ${cpus.length} × ${results.machine.model}, load average ${results.machine.loadAverageAtStart.join(" ")}`);

	const ctx = await createContext({ logFile, profileDir });
	results.database = ctx.database;
	log(`database server: ${ctx.database.kind} (${ctx.database.reason})`);
	const interrupted = () => {
		log("interrupted: stopping what was started");
		for (const child of ctx.children) child.kill("SIGKILL");
		void ctx.stop().finally(() => process.exit(130));
	};
	process.once("SIGINT", interrupted);
	process.once("SIGTERM", interrupted);
	try {
		await runScenarios(ctx, options, results);
	} finally {
		await ctx.stop();
	}

	results.finishedAt = new Date().toISOString();
	results.machine.loadAverageAtEnd = os.loadavg().map(l => round(l, 2));
	const { rows, targets } = summarizeResults(results);
	results.rows = rows;
	results.targets = targets;
	const title = `npm run bench${options.quick ? " --quick" : ""}, ${stamp}, ${cpus.length} CPUs, ${ctx.database.kind}; medians of ${options.repeat} run(s) of ${options.duration} s`;
	const jsonFile = path.join(options.outDir, `${stamp}.json`);
	const svgFile = path.join(options.outDir, `${stamp}.svg`);
	writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
	writeFileSync(svgFile, chart(rows, title));

	console.log(`\n${title}\n`);
	console.log(resultsTable(rows));
	console.log(`\nTargets (issue 6):\n\n${targetsTable(targets)}\n`);
	console.log(`Written: ${jsonFile}, ${svgFile}`);
	if (profileDir) {
		const summary = summarizeProfiles(profileDir);
		writeFileSync(path.join(profileDir, "summary.txt"), summary);
		console.log(`CPU profiles and their summary: ${path.relative(process.cwd(), profileDir)}/summary.txt`);
	}
}

main().catch(err => {
	console.error(err instanceof Error ? (err.stack ?? err.message) : err);
	process.exit(1);
});
