// `npm run bench`: measures checkout, reads, renewals and webhook delay, and
// the baseline (a bare server with the same database writes) in the same run
// on the same database server; then checkouts and reads as the data grows,
// the database commands per checkout and per renewal, and renewals on 1–4
// CPU-limited billing nodes. Prints a table and writes
// bench/results/<date>.json and <date>.svg. See bench/README.md.
//
// The order of a run: the embedded service (`npm start`'s topology) and the
// baseline server run side by side and are measured in turns, concurrency by
// concurrency, so slow phases of a noisy machine hit both; reads follow on the
// data the checkouts left; then the commands per checkout; then cluster mode;
// then the renewal topologies (unlimited, then CPU-limited); growth last, as
// it leaves the most data on the database server.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkCpuLimits, releaseCpuLimits } from "./cgroup";
import { checkoutCommands } from "./checkout-commands";
import { runGrowth } from "./growth";
import { runIdle } from "./idle";
import { checkoutLoad } from "./load";
import { type CheckoutCpu, measureCheckout, measureReads, READ_CONNECTIONS, type ReadRun } from "./measure";
import { type BenchOptions, parseOptions, type Scenario } from "./options";
import { summarize } from "./profile-summary";
import { renewalPlan, runRenewalPlan } from "./renewal-runs";
import { chart, resultsTable, targetsTable } from "./report";
import { emptyResults, type Results, summarizeResults, TARGET_CONCURRENCY, topCommandsText } from "./results";
import { idsOf } from "./service-db";
import { createShop, type Shop } from "./shop";
import { type Percentiles, round } from "./stats";
import { type BenchContext, clusterSpec, createContext, type Deployment, deploy, embeddedSpec, startBaseline } from "./topology";
import { runUsage, type UsageResults, usageSummary } from "./usage";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver";

/** Billing processes in cluster mode, as `npm run cluster` starts by default. */
const CLUSTER_BILLING_NODES = 2;

const began = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
const ms = (p: Percentiles) => `p50 ${p.p50} / p95 ${p.p95} / p99 ${p.p99} ms`;
const readText = (r: ReadRun) =>
	`${r.requestsPerSecond} req/s, ${ms(r.latency)}, ${r.failures} failed${
		r.cpu
			? `; CPU ${r.cpu.perReadMs} ms per read (${Object.entries(r.cpu.byProcess)
					.map(([name, ms]) => `${name} ${ms}`)
					.join(", ")})`
			: ""
	}`;
const failuresText = (f: Record<string, number>) => (Object.keys(f).length ? `; failures ${JSON.stringify(f)}` : "");

/** The processes that serve a deployment's checkouts, by name: its nodes and the database server. */
function servingPids(ctx: BenchContext, deployment: Deployment): Record<string, number> {
	return {
		...Object.fromEntries([...deployment.nodes].map(([nodeId, child]) => [nodeId, child.pid!])),
		...(ctx.databasePid ? { database: ctx.databasePid } : {}),
	};
}

/**
 * A fresh deployment's first load, unmeasured and longer than a run's warm-up: the database server's JIT and ours
 * take about this long to settle (without it the first measured run came out at about 0.6 of the next two).
 */
const FIRST_WARMUP_SECONDS = 10;

async function firstWarmup(target: Shop, options: BenchOptions): Promise<void> {
	if (!options.quick) await checkoutLoad(target, { connections: TARGET_CONCURRENCY, seconds: FIRST_WARMUP_SECONDS });
}

const cpuText = (cpu: CheckoutCpu | null) =>
	cpu
		? `CPU ${cpu.perCheckoutMs} ms per checkout (${Object.entries(cpu.byProcess ?? {})
				.map(([name, ms]) => `${name} ${ms}`)
				.join(", ")}); `
		: "";

/** Checkout at each concurrency, taking turns with the baseline server; then reads over the customers and transactions left. */
async function embeddedScenarios(ctx: BenchContext, options: BenchOptions, results: Results, receiver: WebhookReceiver): Promise<void> {
	const has = (s: Scenario) => options.scenarios.includes(s);
	const checkoutConcurrency = has("checkout") ? options.concurrency : has("webhooks") ? [TARGET_CONCURRENCY] : [];
	if (!checkoutConcurrency.length && !has("reads") && !has("baseline")) return;
	const baseline = has("baseline") ? await startBaseline(ctx, "bench_baseline") : null;
	log("embedded mode (npm start's topology: every service in one process)");
	const embedded = await deploy(ctx, embeddedSpec("bench_embedded"));
	let readBaseline: Awaited<ReturnType<typeof startBaseline>> | null = null;
	try {
		const shop = await createShop(embedded.url!, receiver.url);
		const serving = servingPids(ctx, embedded);
		await firstWarmup(shop, options);
		if (baseline) await firstWarmup({ ...shop, url: baseline.url }, options);
		const baselineTarget = (s: Shop) => ({ ...s, url: baseline!.url });
		const baselineConcurrency = checkoutConcurrency.length ? checkoutConcurrency : options.concurrency;
		for (let r = 1; r <= options.repeat; r++) {
			for (const c of new Set([...checkoutConcurrency, ...(baseline ? baselineConcurrency : [])])) {
				if (checkoutConcurrency.includes(c)) {
					const { result, webhooks } = await measureCheckout(shop, c, options, receiver, serving);
					(results.checkout.embedded[c] ??= []).push(result);
					(results.webhooks.embedded[c] ??= []).push(webhooks!);
					log(
						`checkout embedded c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}; ${cpuText(result.cpu)}webhooks ${ms(webhooks!.delay)}, ${webhooks!.missing} missing${failuresText(result.failures)}`,
					);
				}
				if (baseline) {
					const { result } = await measureCheckout(baselineTarget(shop), c, options, null, {
						baseline: baseline.pid,
						...(ctx.databasePid ? { database: ctx.databasePid } : {}),
					});
					(results.baseline[c] ??= []).push(result);
					log(
						`baseline c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}; ${cpuText(result.cpu)}${failuresText(result.failures)}`,
					);
				}
			}
		}
		if (has("reads")) {
			// Reads need customers and transactions: the checkouts above made them, or a short load does.
			if (!checkoutConcurrency.length) await checkoutLoad(shop, { connections: TARGET_CONCURRENCY, seconds: options.quick ? 2 : 5 });
			readBaseline = await startBaseline(ctx, "bench_read_baseline", {
				READ_BILLING_DB: `${embedded.mongoUrl.replace(/^.*\//, "")}_billing`,
				READ_TOKEN: shop.apiToken,
				READ_ACCOUNT_ID: String(shop.accountId),
			});
			const database: Record<string, number> = ctx.databasePid ? { database: ctx.databasePid } : {};
			for (const kind of ["customer", "transaction"] as const) {
				const ids = await idsOf(embedded.mongoUrl, kind === "customer" ? "customers" : "transactions", shop.accountId);
				// In turns with the read baseline, over the same ids, so a slow phase of a noisy machine hits both.
				for (let r = 1; r <= options.repeat; r++) {
					const result = await measureReads(shop, kind, ids, options, serving);
					results.reads[kind].push(result);
					log(`reads ${kind} c=${READ_CONNECTIONS} run ${r}: ${readText(result)}, ${ids.length} ids`);
					const bare = await measureReads({ ...shop, url: readBaseline.url }, kind, ids, options, {
						baseline: readBaseline.pid,
						...database,
					});
					results.readBaseline![kind].push(bare);
					log(`read baseline ${kind} c=${READ_CONNECTIONS} run ${r}: ${readText(bare)}`);
				}
			}
		}
	} finally {
		await embedded.stop();
		await baseline?.stop();
		await readBaseline?.stop();
	}
}

/** Checkout in cluster mode; answers the cluster when the renewal runs are to reuse it (quick mode: starting processes is most of its time). */
async function clusterScenario(
	ctx: BenchContext,
	options: BenchOptions,
	results: Results,
	keepForRenewals: number,
	metrics: boolean,
): Promise<Deployment | null> {
	log("cluster mode (npm run cluster's topology: a process per service over NATS)");
	const billingNodes = keepForRenewals || CLUSTER_BILLING_NODES;
	const cluster = await deploy(ctx, clusterSpec("bench_cluster", billingNodes, { metrics: keepForRenewals > 0 && metrics }));
	// A receiver of its own: customer ids start over in the cluster's databases.
	const clusterReceiver = await startWebhookReceiver();
	try {
		const shop = await createShop(cluster.url!, clusterReceiver.url);
		const serving = { ...servingPids(ctx, cluster), nats: (await ctx.nats()).child.pid! };
		await firstWarmup(shop, options);
		for (let r = 1; r <= options.repeat; r++) {
			for (const c of options.concurrency) {
				const { result, webhooks } = await measureCheckout(shop, c, options, clusterReceiver, serving);
				(results.checkout.cluster[c] ??= []).push(result);
				(results.webhooks.cluster[c] ??= []).push(webhooks!);
				log(
					`checkout cluster c=${c} run ${r}: ${result.checkoutsPerSecond}/s, ${ms(result.checkout)}; ${cpuText(result.cpu)}webhooks ${ms(webhooks!.delay)}${failuresText(result.failures)}`,
				);
			}
		}
		if (options.scenarios.includes("reads")) {
			for (const kind of ["customer", "transaction"] as const) {
				const ids = await idsOf(cluster.mongoUrl, kind === "customer" ? "customers" : "transactions", shop.accountId);
				for (let r = 1; r <= options.repeat; r++) {
					const result = await measureReads(shop, kind, ids, options, serving);
					results.clusterReads![kind].push(result);
					log(`reads cluster ${kind} c=${READ_CONNECTIONS} run ${r}: ${readText(result)}, ${ids.length} ids`);
				}
			}
		}
	} catch (err) {
		await cluster.stop();
		throw err;
	} finally {
		await clusterReceiver.stop();
	}
	if (keepForRenewals) return cluster;
	await cluster.stop();
	return null;
}

/** A run's record: the scenarios' (results.ts) and the usage scenario's (usage.ts). */
type RunResults = Results & { usage?: UsageResults };

async function runScenarios(ctx: BenchContext, options: BenchOptions, results: RunResults): Promise<void> {
	const has = (s: Scenario) => options.scenarios.includes(s);
	const receiver = await startWebhookReceiver();
	let kept: Deployment | null = null;
	try {
		await embeddedScenarios(ctx, options, results, receiver);
		if (has("commands")) {
			log(`database commands per checkout (embedded, c=${TARGET_CONCURRENCY})`);
			const { commands, checkout } = await checkoutCommands(ctx, options, receiver);
			results.commands.checkout = commands;
			log(
				`commands: ${commands.total} per checkout (raw ${commands.raw}, idle ${commands.idlePerSecond}/s) over ${commands.units} checkouts${failuresText(checkout.failures)}`,
			);
		}
		if (has("idle")) {
			log("idle: every process at rest, embedded and cluster");
			results.idle = await runIdle(ctx, options, receiver, log);
		}
		if (has("usage")) {
			log("usage: POST /api/usage in batches, embedded and in cluster mode, in turns with the bare-driver baseline");
			results.usage = await runUsage(ctx, options, log);
		}
		const plan = renewalPlan(options);
		if (has("cluster")) {
			const keepFor = options.quick && plan.length ? Math.max(...plan.map(p => p.nodes)) : 0;
			kept = await clusterScenario(
				ctx,
				options,
				results,
				keepFor,
				plan.some(p => p.countCommands),
			);
		}
		await runRenewalPlan(ctx, options, results, receiver, kept, log);
		kept = null;
		if (has("growth")) {
			log(`growth: ${options.growthSizes.join(", ")} customers`);
			results.growth = await runGrowth(ctx, options, receiver, log);
		}
	} finally {
		await kept?.stop();
		await receiver.stop();
	}
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
	const results: RunResults = emptyResults(startedAt, options, {
		cpus: cpus.length,
		model: cpus[0]?.model ?? "?",
		memoryGb: round(os.totalmem() / 2 ** 30),
		node: process.version,
		loadAverageAtStart: os.loadavg().map(l => round(l, 2)),
	});
	// Before anything starts: a run that cannot limit the billing nodes' CPU stops here, saying why.
	if (options.scenarios.includes("scaleout") && options.billingCpu > 0) checkCpuLimits();
	log(
		`${options.quick ? "quick run (a smoke test, not a measurement)" : "full run"}: ${options.scenarios.join(", ")}; service logs in ${path.relative(process.cwd(), logFile)}`,
	);
	log(`machine: ${cpus.length} × ${results.machine.model}, load average ${results.machine.loadAverageAtStart.join(" ")}`);

	const ctx = await createContext({ logFile, profileDir, persistent: options.persistent });
	results.database = ctx.database;
	log(`database server: ${ctx.database.kind} (${ctx.database.reason})`);
	const interrupted = () => {
		log("interrupted: stopping what was started");
		for (const child of ctx.children) child.kill("SIGKILL");
		void ctx.stop().finally(() => {
			releaseCpuLimits();
			process.exit(130);
		});
	};
	process.once("SIGINT", interrupted);
	process.once("SIGTERM", interrupted);
	try {
		await runScenarios(ctx, options, results);
	} finally {
		await ctx.stop();
		releaseCpuLimits();
	}

	results.finishedAt = new Date().toISOString();
	results.machine.loadAverageAtEnd = os.loadavg().map(l => round(l, 2));
	const summary = summarizeResults(results);
	const usage = usageSummary(results.usage);
	const rows = [...summary.rows, ...usage.rows];
	const targets = [...summary.targets, ...usage.targets];
	results.rows = rows;
	results.targets = targets;
	const title = `npm run bench${options.quick ? " --quick" : ""}, ${stamp}, ${cpus.length} CPUs, ${ctx.database.kind}${options.persistent ? " on disk (H2)" : ""}; medians of ${options.repeat} run(s) of ${options.duration} s`;
	const jsonFile = path.join(options.outDir, `${stamp}.json`);
	const svgFile = path.join(options.outDir, `${stamp}.svg`);
	writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
	writeFileSync(svgFile, chart(rows, title));

	console.log(`\n${title}\n`);
	console.log(resultsTable(rows));
	console.log(`\nTargets (issue 39; the database commands': issue 15; usage ingestion: issue 48's goals):\n\n${targetsTable(targets)}\n`);
	const top = topCommandsText(results);
	if (top) console.log(`${top}\n`);
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
