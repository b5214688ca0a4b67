// The usage scenario (issue 48): usage events ingested through POST /api/usage
// in batches, in `npm start`'s topology (every service in one process) and in
// clusters of 1, 2, … usage processes over NATS, each in turns with the
// bare-driver baseline (bench/usage-baseline.ts: the batch's writes through the
// raw driver, nothing else) on the same database server; and what usage adds
// to a renewal.
//
// Ingestion: one sandbox account with three meters (count, sum of a numeric
// property, unique_count of a string property) and 50 customers made by
// checkouts; every event names one of them at random and a meter in turn, its
// id unique in the run, its timestamp now. A few clients (--usage-clients, 4)
// each send a batch and the next once it is answered (closed loop), for the
// run's duration: events/s is the events accepted over the wall time until the
// last answer, latency is per request, and CPU per event is the serving
// processes' CPU time (every node, the database server, NATS) over the events
// accepted. Each deployment and each baseline gets fresh databases, dropped
// after its phase.
//
// A renewal's cost: in the embedded deployment, two sandbox accounts alike but
// for their product, one metered (three usage prices; 300 events sent in each
// of its customer's periods) and one not, each with one customer; their test
// clocks are moved 32 days at a time (one monthly renewal each), in turns, and
// each call (POST /admin/accounts/{id}/clock) is timed. The difference of the
// medians is what usage costs the renewal, end to end: billing's call to
// usage.closePeriod (the period's aggregates read, the previous period
// sealed, the close written) and the usage lines priced and invoiced.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { MongoClient } from "mongodb";
import { sleep } from "../shared/poll";
import { cpuSecondsMeter, machineMeter } from "./cpu-time";
import { scrapeCommands, waitUntilQuiet } from "./db-commands";
import { checkoutLoad } from "./load";
import { type Measured, outsideText } from "./measure";
import type { BenchOptions } from "./options";
import { type Row, type Target, target } from "./report";
import { adminCall, createShop, type Shop } from "./shop";
import { median, type Percentiles, percentiles, round } from "./stats";
import { type BenchContext, clusterSpec, type DeploySpec, deploy, embeddedSpec, startBaseline } from "./topology";
import { BENCH_METERS } from "./usage-baseline";

/** Issue 48's goals: events/s in batches of 1,000 on this 2-core machine, and of the bare-driver baseline's. */
export const USAGE_EVENTS_GOAL = 10_000;
export const USAGE_BASELINE_GOAL = 0.7;
const GOAL_BATCH = 1000;

/** Customers the events spread over. */
const CUSTOMERS = 50;
/** Distinct values of the unique_count meter's property per customer: most repeat once the run is under way. */
const USERS = 200;
/** A first load on a fresh deployment, unmeasured, for the JIT of the node and the database server (not in quick mode). */
const FIRST_WARMUP_SECONDS = 5;
/** Clock moves per account of the renewal measurement, after one unmeasured pair. */
const RENEWAL_PAIRS = 16;
const RENEWAL_EVENTS = 300;
const DAY_MS = 86_400_000;
/** The embedded mode's name; the cluster's are "cluster, N usage node(s)". */
const EMBEDDED = "embedded";

export interface IngestLoadResult {
	batch: number;
	clients: number;
	seconds: number;
	requests: number;
	/** Events answered accepted. */
	accepted: number;
	duplicates: number;
	/** Events refused, by reason (none expected). */
	refused: Record<string, number>;
	/** Requests not answered 200, by status or error. */
	failures: Record<string, number>;
	eventsPerSecond: number;
	/** Per request (one batch). */
	latency: Percentiles;
}

/** The serving processes' CPU time over a run, per event accepted. */
export interface EventCpu {
	seconds: number;
	/** Microseconds of CPU per event accepted, all serving processes together. */
	perEventUs: number;
	/** The same per process: node id, "database", "nats", "baseline". */
	byProcess: Record<string, number>;
}

export type UsageRun = Measured<IngestLoadResult> & { cpu: EventCpu | null };

/** One (mode, batch size): our runs and the baseline's, taken in turns. */
export interface UsagePhase {
	mode: string;
	/** Usage processes in cluster mode; null: embedded. */
	usageNodes: number | null;
	batch: number;
	ours: UsageRun[];
	baseline: UsageRun[];
}

export interface RenewalCost {
	/** Milliseconds of each POST /admin/accounts/{id}/clock that renewed the one customer. */
	meteredMs: number[];
	unmeteredMs: number[];
	/** The metered customer's renewals' amounts (the base fee 9.99 and its usage), to show usage was billed. */
	meteredAmounts: number[];
	/** Events refused in the metered customer's periods, by reason (none expected). */
	refused: Record<string, number>;
}

/** The usage service's database commands per batch request (embedded, metrics on, the same clients), by kind. */
export interface UsageCommands {
	batch: number;
	requests: number;
	perBatch: number;
	/** (command, collection), most frequent first. */
	top: { command: string; collection: string; perBatch: number }[];
}

export interface UsageResults {
	customers: number;
	clients: number;
	phases: UsagePhase[];
	renewal: RenewalCost | null;
	/** Not in quick runs. */
	commands: UsageCommands[];
}

type Log = (line: string) => void;

/** A shop (shop.ts) with the benchmark's meters and a monthly product priced on them. */
export async function meteredShop(url: string): Promise<Shop> {
	const shop = await createShop(url, null);
	for (const meter of BENCH_METERS) await adminCall(url, "POST", `/accounts/${shop.accountId}/meters`, meter);
	const product = await adminCall<{ id: number }>(url, "POST", `/accounts/${shop.accountId}/products`, {
		name: "Metered",
		amount: 9.99,
		currency: "EUR",
		billing: "CHARGE",
		renewal: { every: 1, unit: "month" },
		merchantAccountGroup: "default",
		usagePrices: [
			{ meter: "calls", model: "per_unit", unitAmount: "0.01" },
			{ meter: "tokens", model: "package", packageSize: 1000, unitAmount: "5" },
			{ meter: "users", model: "per_unit", unitAmount: "10" },
		],
	});
	return { ...shop, productId: product.id };
}

/** `count` customers of the shop's product, by checkouts. */
export async function customersOf(shop: Shop, count: number): Promise<number[]> {
	const ids: number[] = [];
	for (let attempt = 0; ids.length < count && attempt < 5; attempt++) {
		await checkoutLoad(shop, { connections: Math.min(4, count - ids.length), checkouts: count - ids.length, onOk: id => ids.push(id) });
	}
	if (ids.length < count) throw new Error(`usage: only ${ids.length} of ${count} checkouts answered OK`);
	return ids.slice(0, count);
}

interface EventSource {
	customers: number[];
	/** A batch's timestamp; default now. */
	at?: () => Date;
}

/** Events of the benchmark's meters, ids unique in this source's run, each for a customer at random. */
export function eventMaker(source: EventSource) {
	const run = randomBytes(6).toString("hex");
	let sequence = 0;
	return (size: number): object[] => {
		const timestamp = (source.at?.() ?? new Date()).toISOString();
		return Array.from({ length: size }, () => {
			const n = sequence++;
			const customerId = source.customers[Math.floor(Math.random() * source.customers.length)];
			const id = `${run}-${n}`;
			switch (n % 3) {
				case 0:
					return { id, customerId, meter: "calls", timestamp };
				case 1:
					return { id, customerId, meter: "tokens", timestamp, properties: { tokens: 1 + (n % 997) } };
				default:
					return { id, customerId, meter: "users", timestamp, properties: { user: `user-${Math.floor(Math.random() * USERS)}` } };
			}
		});
	};
}

interface UsageTarget {
	url: string;
	apiToken: string;
}

/** Sends one batch; the answer's counts. */
export async function sendBatch(
	target: UsageTarget,
	events: object[],
): Promise<{ status: number; answer: IngestAnswer | null; text: string }> {
	const res = await fetch(`${target.url}/api/usage`, {
		method: "POST",
		headers: { authorization: `Bearer ${target.apiToken}`, "content-type": "application/json" },
		body: JSON.stringify({ events }),
	});
	const text = await res.text();
	let answer: IngestAnswer | null = null;
	if (res.status === 200)
		try {
			answer = JSON.parse(text) as IngestAnswer;
		} catch {
			answer = null;
		}
	return { status: res.status, answer, text };
}

interface IngestAnswer {
	accepted: number;
	duplicates: number;
	refused: number;
	results: { status: string; reason?: string }[];
}

const tally = (into: Record<string, number>, key: string, n = 1) => {
	into[key] = (into[key] ?? 0) + n;
};

/** `clients` loops, each sending a batch of `batch` events and the next once it is answered, for `seconds`. */
export async function ingestLoad(
	target: UsageTarget,
	source: EventSource,
	options: { batch: number; clients: number; seconds: number },
): Promise<IngestLoadResult> {
	const make = eventMaker(source);
	const latencies: number[] = [];
	const refused: Record<string, number> = {};
	const failures: Record<string, number> = {};
	let accepted = 0;
	let duplicates = 0;
	const started = performance.now();
	const end = started + options.seconds * 1000;
	await Promise.all(
		Array.from({ length: options.clients }, async () => {
			while (performance.now() < end) {
				const events = make(options.batch);
				const sentAt = performance.now();
				try {
					const { status, answer } = await sendBatch(target, events);
					if (!answer) {
						tally(failures, `status ${status}`);
						continue;
					}
					latencies.push(performance.now() - sentAt);
					accepted += answer.accepted;
					duplicates += answer.duplicates;
					if (answer.refused) for (const r of answer.results) if (r.status === "refused") tally(refused, r.reason ?? "?");
				} catch (err) {
					tally(failures, (err as Error).message);
				}
			}
		}),
	);
	const seconds = (performance.now() - started) / 1000;
	return {
		batch: options.batch,
		clients: options.clients,
		seconds: round(seconds, 2),
		requests: latencies.length,
		accepted,
		duplicates,
		refused,
		failures,
		eventsPerSecond: round(accepted / seconds),
		latency: percentiles(latencies),
	};
}

/** CPU time of named processes over a run, in microseconds per event. */
function eventCpu(serving: Record<string, number>) {
	const meters = Object.entries(serving).map(([name, pid]) => ({ name, meter: cpuSecondsMeter([pid]) }));
	return {
		stop(events: number): EventCpu | null {
			if (!meters.length || events <= 0) return null;
			const used = meters.map(({ name, meter }) => ({ name, seconds: meter.stop() }));
			const seconds = used.reduce((sum, u) => sum + u.seconds, 0);
			const us = (s: number) => round((s * 1e6) / events);
			return { seconds: round(seconds, 2), perEventUs: us(seconds), byProcess: Object.fromEntries(used.map(u => [u.name, us(u.seconds)])) };
		},
	};
}

/** Warm-up load (unmeasured), then the measured run with the serving processes' CPU and the machine's use. */
export async function measureIngest(
	target: UsageTarget,
	source: EventSource,
	batch: number,
	options: BenchOptions,
	serving: Record<string, number>,
): Promise<UsageRun> {
	const load = { batch, clients: options.usageClients };
	if (options.warmup > 0) await ingestLoad(target, source, { ...load, seconds: options.warmup });
	const machine = machineMeter();
	const cpu = eventCpu(serving);
	const result = await ingestLoad(target, source, { ...load, seconds: options.duration });
	return { ...result, machine: machine.stop(), cpu: cpu.stop(result.accepted) };
}

const cpuText = (cpu: EventCpu | null) =>
	cpu
		? `CPU ${cpu.perEventUs} µs per event (${Object.entries(cpu.byProcess)
				.filter(([, us]) => us >= 1)
				.map(([name, us]) => `${name} ${us}`)
				.join(", ")})`
		: "";

const oddsText = (run: IngestLoadResult) =>
	[
		run.duplicates ? `${run.duplicates} duplicates` : "",
		Object.keys(run.refused).length ? `refused ${JSON.stringify(run.refused)}` : "",
		Object.keys(run.failures).length ? `failures ${JSON.stringify(run.failures)}` : "",
	]
		.filter(Boolean)
		.join("; ");

const runText = (run: UsageRun) =>
	[
		`${run.eventsPerSecond} events/s`,
		`p50 ${run.latency.p50} / p99 ${run.latency.p99} ms per batch`,
		cpuText(run.cpu),
		oddsText(run),
		run.machine.outside >= 0.1 ? `${run.machine.outside} cores outside the benchmark` : "",
	]
		.filter(Boolean)
		.join("; ");

/** Drops the databases a phase made (their names start with `prefix`), so the next phase starts on a small heap. */
async function dropDatabases(mongoUrl: string, prefix: string): Promise<void> {
	const client = await MongoClient.connect(mongoUrl);
	try {
		const { databases } = await client.db("admin").admin().listDatabases({ nameOnly: true });
		for (const { name } of databases) if (name.startsWith(prefix)) await client.db(name).dropDatabase();
	} finally {
		await client.close();
	}
}

/** One deployment (embedded or a cluster) and a fresh baseline: every batch size, in turns; then, embedded, the renewal's cost. */
async function runPhase(
	ctx: BenchContext,
	options: BenchOptions,
	results: UsageResults,
	mode: string,
	usageNodes: number | null,
	spec: DeploySpec,
	log: Log,
): Promise<void> {
	log(`usage: ${mode}`);
	const baselineDb = `${spec.database}_bare`;
	const deployment = await deploy(ctx, spec);
	let baseline: Awaited<ReturnType<typeof startBaseline>> | null = null;
	try {
		const shop = await meteredShop(deployment.url!);
		baseline = await startBaseline(ctx, baselineDb, { USAGE_ACCOUNT_ID: String(shop.accountId) }, "bench/usage-baseline.ts");
		const source: EventSource = { customers: await customersOf(shop, CUSTOMERS) };
		const database: Record<string, number> = ctx.databasePid ? { database: ctx.databasePid } : {};
		const serving: Record<string, number> = {
			...Object.fromEntries([...deployment.nodes].map(([nodeId, child]) => [nodeId, child.pid!])),
			...database,
			...(usageNodes !== null ? { nats: (await ctx.nats()).child.pid! } : {}),
		};
		const ours = { url: deployment.url!, apiToken: shop.apiToken };
		const bare = { url: baseline.url, apiToken: shop.apiToken };
		const bareServing = { baseline: baseline.pid, ...database };
		const largest = Math.max(...options.usageBatches);
		if (!options.quick)
			for (const t of [ours, bare])
				await ingestLoad(t, source, { batch: largest, clients: options.usageClients, seconds: FIRST_WARMUP_SECONDS });
		const phases = options.usageBatches.map(batch => {
			const phase: UsagePhase = { mode, usageNodes, batch, ours: [], baseline: [] };
			results.phases.push(phase);
			return phase;
		});
		for (let r = 1; r <= options.repeat; r++) {
			for (const phase of phases) {
				const run = await measureIngest(ours, source, phase.batch, options, serving);
				phase.ours.push(run);
				log(`usage ${mode}, batches of ${phase.batch}, run ${r}: ${runText(run)}`);
				const bareRun = await measureIngest(bare, source, phase.batch, options, bareServing);
				phase.baseline.push(bareRun);
				log(
					`usage baseline (${mode}), batches of ${phase.batch}, run ${r}: ${runText(bareRun)}; ours ${(run.eventsPerSecond / bareRun.eventsPerSecond).toFixed(2)} of it`,
				);
			}
		}
		if (usageNodes === null) results.renewal = await renewalCost(deployment.url!, options, log);
	} finally {
		await deployment.stop();
		await baseline?.stop();
		await dropDatabases(ctx.mongoUrl, spec.database).catch(err =>
			log(`usage: dropping ${spec.database}* failed: ${(err as Error).message}`),
		);
	}
}

async function customerTransactions(shop: Shop, customerId: number): Promise<{ type: string; amount: number }[]> {
	const res = await fetch(`${shop.url}/api/customer/${customerId}/transactions`, { headers: { authorization: `Bearer ${shop.apiToken}` } });
	if (!res.ok) throw new Error(`GET /api/customer/${customerId}/transactions: ${res.status}`);
	return ((await res.json()) as { data: { type: string; amount: number }[] }).data;
}

/**
 * Two accounts alike but for usage: one customer each, of a metered product (events sent in each period) and of an
 * unmetered one; both clocks moved 32 days at a time, in turns (the order swapped each time), each call timed.
 */
async function renewalCost(url: string, options: BenchOptions, log: Log): Promise<RenewalCost> {
	const metered = await meteredShop(url);
	const unmetered = await createShop(url, null);
	const [meteredCustomer] = await customersOf(metered, 1);
	await customersOf(unmetered, 1);
	const pairs = options.quick ? 1 : RENEWAL_PAIRS;
	const cost: RenewalCost = { meteredMs: [], unmeteredMs: [], meteredAmounts: [], refused: {} };
	let clock = Date.now();
	for (let i = 0; i <= pairs; i++) {
		// The metered customer's usage of this period, at its account's now.
		const now = Math.max(Date.now(), clock);
		const events = eventMaker({ customers: [meteredCustomer], at: () => new Date(now) })(RENEWAL_EVENTS);
		const { answer, status, text } = await sendBatch(metered, events);
		if (!answer) throw new Error(`usage: POST /api/usage for the renewal's customer: ${status} ${text.slice(0, 300)}`);
		for (const r of answer.results) if (r.status !== "accepted") tally(cost.refused, r.reason ?? r.status);
		const advanceTo = new Date(clock + 32 * DAY_MS).toISOString();
		const turns: [Shop, number[]][] = [
			[metered, cost.meteredMs],
			[unmetered, cost.unmeteredMs],
		];
		for (const [shop, samples] of i % 2 ? turns.reverse() : turns) {
			const started = performance.now();
			const report = await adminCall<{ charged: number }>(url, "POST", `/accounts/${shop.accountId}/clock`, { advanceTo });
			const ms = performance.now() - started;
			if (report.charged !== 1) throw new Error(`usage: the clock of account ${shop.accountId} charged ${report.charged}, not 1`);
			// The first pair warms up (the first close of a period seals no period before it).
			if (i > 0) samples.push(round(ms));
			// Let the renewal's relays and invoice settle before the next call.
			await sleep(options.quick ? 200 : 500);
		}
		clock += 32 * DAY_MS;
	}
	cost.meteredAmounts = (await customerTransactions(metered, meteredCustomer)).filter(t => t.type === "RENEWAL").map(t => t.amount);
	log(
		`usage: a renewal on the test clock, metered ${median(cost.meteredMs)} ms vs unmetered ${median(cost.unmeteredMs)} ms (medians of ${cost.meteredMs.length}); the metered renewals' amounts ${cost.meteredAmounts.join(", ")}${Object.keys(cost.refused).length ? `; refused events ${JSON.stringify(cost.refused)}` : ""}`,
	);
	return cost;
}

/**
 * The usage service's database commands per batch: `npm start`'s topology with metrics on (which costs a node about
 * 10 % of its throughput, so not in the measured runs), the same clients for a few seconds per batch size, counted
 * from its db.commands counter until its work has died down. The bare baseline sends 4 by construction per batch of
 * 1,000 (the driver splits an insertMany of 1,000 documents in two on this server) and 3 per batch of 100.
 */
async function usageCommands(ctx: BenchContext, options: BenchOptions, log: Log): Promise<UsageCommands[]> {
	const spec = embeddedSpec("bench_usage_commands", { metrics: true });
	const deployment = await deploy(ctx, spec);
	const counted: UsageCommands[] = [];
	try {
		const shop = await meteredShop(deployment.url!);
		const source: EventSource = { customers: await customersOf(shop, CUSTOMERS) };
		const ports = [...deployment.metricsPorts.values()];
		const target = { url: deployment.url!, apiToken: shop.apiToken };
		for (const batch of options.usageBatches) {
			const load = { batch, clients: options.usageClients, seconds: Math.min(options.duration, 5) };
			await ingestLoad(target, source, { ...load, seconds: 2 });
			await waitUntilQuiet(ports);
			const before = await scrapeCommands(ports);
			const run = await ingestLoad(target, source, load);
			await waitUntilQuiet(ports);
			const after = await scrapeCommands(ports);
			const per = (n: number) => round(n / run.requests, 2);
			const top = [...after]
				.map(([key, n]) => ({ key, n: n - (before.get(key) ?? 0) }))
				.filter(({ key, n }) => key.startsWith("usage\t") && n > 0)
				.sort((a, b) => b.n - a.n)
				.map(({ key, n }) => {
					const [, command, collection] = key.split("\t");
					return { command, collection, perBatch: per(n) };
				});
			const entry = {
				batch,
				requests: run.requests,
				perBatch: round(
					top.reduce((sum, t) => sum + t.perBatch, 0),
					1,
				),
				top,
			};
			counted.push(entry);
			log(`usage: ${entry.perBatch} database commands per batch of ${batch} (${commandsText(entry)})`);
		}
	} finally {
		await deployment.stop();
		await dropDatabases(ctx.mongoUrl, spec.database).catch(err =>
			log(`usage: dropping ${spec.database}* failed: ${(err as Error).message}`),
		);
	}
	return counted;
}

const commandsText = (c: UsageCommands, count = 5) =>
	c.top
		.slice(0, count)
		.map(t => `${t.command} ${t.collection} ${t.perBatch}`)
		.join(", ");

/** Embedded (with the renewal's cost), then a cluster per number of usage nodes; each phase on fresh databases. */
export async function runUsage(ctx: BenchContext, options: BenchOptions, log: Log): Promise<UsageResults> {
	const results: UsageResults = { customers: CUSTOMERS, clients: options.usageClients, phases: [], renewal: null, commands: [] };
	await runPhase(ctx, options, results, EMBEDDED, null, embeddedSpec("bench_usage_embedded"), log);
	if (!options.quick) results.commands = await usageCommands(ctx, options, log);
	for (const n of options.usageNodes) {
		// One billing node: ingestion asks billing only of customers usage has not heard of, and of the account's clock.
		await runPhase(
			ctx,
			options,
			results,
			`cluster, ${n} usage node${n === 1 ? "" : "s"}`,
			n,
			clusterSpec(`bench_usage_cluster${n}`, 1, { usageNodes: n }),
			log,
		);
	}
	return results;
}

const rate = (runs: UsageRun[]) => (runs.length ? round(median(runs.map(r => r.eventsPerSecond))) : NaN);
const cpuOf = (runs: UsageRun[]) => {
	const measured = runs.flatMap(r => (r.cpu ? [r.cpu] : []));
	if (!measured.length) return null;
	const names = Object.keys(measured[0].byProcess);
	return {
		perEventUs: round(median(measured.map(c => c.perEventUs))),
		byProcess: Object.fromEntries(names.map(name => [name, round(median(measured.map(c => c.byProcess[name] ?? NaN)))])),
	};
};

/** "CPU 96 µs per event: embedded 61, database 33, the rest 2" (medians). */
function cpuSummary(runs: UsageRun[]): string {
	const cpu = cpuOf(runs);
	if (!cpu) return "";
	const entries = Object.entries(cpu.byProcess).sort((a, b) => b[1] - a[1]);
	const shown = entries.filter(([name, us]) => us >= 0.05 * cpu.perEventUs || name === "database");
	const rest = round(entries.filter(e => !shown.includes(e)).reduce((sum, [, us]) => sum + us, 0));
	return `CPU ${cpu.perEventUs} µs per event: ${shown.map(([name, us]) => `${name} ${us}`).join(", ")}${rest > 0 ? `, the rest ${rest}` : ""}`;
}

const latencyOf = (runs: UsageRun[]) => ({
	p50: round(median(runs.map(r => r.latency.p50))),
	p95: round(median(runs.map(r => r.latency.p95))),
	p99: round(median(runs.map(r => r.latency.p99))),
});

/** The table's rows and the goals (issue 48), from the medians over the repeats. */
export function usageSummary(usage: UsageResults | undefined): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const targets: Target[] = [];
	if (!usage) return { rows, targets };
	for (const phase of usage.phases) {
		if (!phase.ours.length) continue;
		const ours = rate(phase.ours);
		const base = rate(phase.baseline);
		// Each run of ours against the baseline's run right after it (the same moment of a shared machine), then the median.
		const ratio = median(phase.ours.map((run, i) => run.eventsPerSecond / (phase.baseline[i]?.eventsPerSecond ?? NaN)));
		const odds = phase.ours.map(oddsText).filter(Boolean);
		const row: Row = {
			scenario: "usage",
			setting: `${phase.mode}, batches of ${phase.batch}, ${usage.clients} clients`,
			throughput: ours,
			unit: "events/s",
			...latencyOf(phase.ours),
			note: [
				Number.isFinite(ratio) ? `${ratio.toFixed(2)} of the bare-driver baseline, turn by turn (goal ≥ ${USAGE_BASELINE_GOAL})` : "",
				cpuSummary(phase.ours),
				odds.length ? odds.join(" / ") : "",
				outsideText(phase.ours),
			]
				.filter(Boolean)
				.join("; "),
		};
		rows.push(row);
		rows.push({
			scenario: "usage baseline",
			setting: `bare driver (${phase.mode} phase), batches of ${phase.batch}`,
			throughput: base,
			unit: "events/s",
			...latencyOf(phase.baseline),
			note: ["insertMany events, insertMany distinct values, one bulkWrite of the aggregates", cpuSummary(phase.baseline)]
				.filter(Boolean)
				.join("; "),
		});
		targets.push({
			name: `usage ingestion vs the bare-driver baseline, ${phase.mode}, batches of ${phase.batch}`,
			target: `≥ ${USAGE_BASELINE_GOAL}`,
			measured: Number.isFinite(ratio)
				? `${ratio.toFixed(2)}, the median of the turns' ratios (medians ${ours} vs ${base} events/s; CPU per event ${cpuOf(phase.ours)?.perEventUs ?? "–"} vs ${cpuOf(phase.baseline)?.perEventUs ?? "–"} µs)`
				: "–",
			met: Number.isFinite(ratio) ? ratio >= USAGE_BASELINE_GOAL : null,
		});
		if (phase.batch === GOAL_BATCH)
			targets.push(
				target(
					{
						name: `usage ingestion, ${phase.mode}, batches of ${GOAL_BATCH.toLocaleString("en")}`,
						target: `≥ ${USAGE_EVENTS_GOAL.toLocaleString("en")} events/s`,
						measured: `${ours} events/s`,
						met: ours >= USAGE_EVENTS_GOAL,
					},
					row,
				),
			);
	}
	for (const c of usage.commands ?? [])
		rows.push({
			scenario: "usage",
			setting: `database commands per batch of ${c.batch}, embedded`,
			throughput: c.perBatch,
			unit: "commands",
			p50: null,
			p95: null,
			p99: null,
			note: `the usage service's, over ${c.requests} batches: ${commandsText(c)}; the bare baseline's ${c.batch >= 1000 ? 4 : 3}`,
		});
	const renewal = usage.renewal;
	if (renewal?.meteredMs.length) {
		const metered = round(median(renewal.meteredMs));
		const unmetered = round(median(renewal.unmeteredMs));
		// Each metered call less the unmetered one of its pair: the same moment of the machine.
		const paired = round(median(renewal.meteredMs.map((ms, i) => ms - renewal.unmeteredMs[i])));
		rows.push({
			scenario: "usage",
			setting: "a renewal on the test clock, metered (3 usage prices) vs unmetered",
			throughput: null,
			unit: "",
			p50: metered,
			p95: null,
			p99: null,
			note: `POST /admin/accounts/{id}/clock renewing one customer; unmetered p50 ${unmetered} ms: usage adds ${round(metered - unmetered)} ms (median of the pairs' differences ${paired} ms; ${renewal.meteredMs.length} pairs, in turns); the metered renewals charged ${[...new Set(renewal.meteredAmounts)].join(", ")}`,
		});
	}
	return { rows, targets };
}
