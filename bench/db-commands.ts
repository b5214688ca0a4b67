// Database commands per checkout and per renewal, from the services' own
// counter (db.commands, shared/db.mixin.ts) on each node's Prometheus
// endpoint: scraped before a phase and once its work has died down (the
// requests still in flight when the load stopped, their webhooks), less what
// the nodes send while idle (timers: the relay's sweep, the webhook worker's
// polling), measured just before over an interval of its own and scaled to
// the phase's length.
import { DB_COMMANDS_METRIC } from "../shared/db.mixin";
import { sleep } from "../shared/poll";
import type { BenchOptions } from "./options";
import { round } from "./stats";

/** "service\tcommand\tcollection" -> commands sent, summed over nodes. */
export type CommandCounts = Map<string, number>;

export interface CommandInterval {
	counts: CommandCounts;
	seconds: number;
}

export interface CommandsPerUnit {
	/** Checkouts or renewals done in the phase. */
	units: number;
	seconds: number;
	/** Every node's commands per second while idle, all kinds together. */
	idlePerSecond: number;
	/** Per unit, before the idle commands are taken off. */
	raw: number;
	/** Per unit, net of idle. */
	total: number;
	byService: Record<string, number>;
	/** On the sandbox processor's own collections (payments' sandbox_*): a real processor is external. Part of `total`. */
	sandbox: number;
	/** On the card vault's (payments' vault_cards). Part of `total`; absent in results written before it was counted apart. */
	vault?: number;
	/** Every (service, command, collection) sent, most frequent first, per unit: where to look for waste. */
	top: { service: string; command: string; collection: string; perUnit: number }[];
}

const PROMETHEUS_NAME = DB_COMMANDS_METRIC.replace(/[.-]/g, "_");
/** Quiet: at most this many commands in each of QUIET_WINDOWS windows of QUIET_WINDOW_MS in a row (idle is a few a second; one checkout is dozens). */
const QUIET_COMMANDS = 10;
const QUIET_WINDOW_MS = 500;
const QUIET_WINDOWS = 2;
const QUIET_TIMEOUT_MS = 120_000;

/** Adds the commands a node's /metrics page counts into `into`. */
export function parseCommands(text: string, into: CommandCounts): void {
	for (const line of text.split("\n")) {
		if (!line.startsWith(`${PROMETHEUS_NAME}{`)) continue;
		const close = line.lastIndexOf("}");
		const labels = Object.fromEntries([...line.slice(0, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(m => [m[1], m[2]]));
		const key = `${labels.service}\t${labels.command}\t${labels.collection}`;
		into.set(key, (into.get(key) ?? 0) + Number(line.slice(close + 1)));
	}
}

export async function scrapeCommands(ports: number[]): Promise<CommandCounts> {
	const counts: CommandCounts = new Map();
	const texts = await Promise.all(
		ports.map(async port => {
			const res = await fetch(`http://127.0.0.1:${port}/metrics`);
			if (!res.ok) throw new Error(`metrics on port ${port}: ${res.status}`);
			return res.text();
		}),
	);
	for (const text of texts) parseCommands(text, counts);
	return counts;
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

function subtract(after: CommandCounts, before: CommandCounts): CommandCounts {
	return new Map([...after].map(([key, n]) => [key, n - (before.get(key) ?? 0)]));
}

const total = (counts: CommandCounts) => sum(counts.values());

/** The idle interval: as long as a measured run, or a second in quick mode (a smoke test). */
export const idleSecondsFor = (options: Pick<BenchOptions, "quick" | "duration">) => (options.quick ? 1 : options.duration);

/** Resolves once the nodes' commands have stayed at an idle level for a second (or after QUIET_TIMEOUT_MS). */
export async function waitUntilQuiet(ports: number[]): Promise<void> {
	if (!ports.length) return;
	const deadline = Date.now() + QUIET_TIMEOUT_MS;
	let last = total(await scrapeCommands(ports));
	for (let quiet = 0; quiet < QUIET_WINDOWS && Date.now() < deadline; ) {
		await sleep(QUIET_WINDOW_MS);
		const now = total(await scrapeCommands(ports));
		quiet = now - last <= QUIET_COMMANDS ? quiet + 1 : 0;
		last = now;
	}
}

/** What the nodes send in `seconds` of doing nothing asked of them, once what they were doing has died down. */
export async function idleCommands(ports: number[], seconds: number): Promise<CommandInterval> {
	await waitUntilQuiet(ports);
	const before = await scrapeCommands(ports);
	const started = Date.now();
	await sleep(seconds * 1000);
	return { counts: subtract(await scrapeCommands(ports), before), seconds: (Date.now() - started) / 1000 };
}

/** The commands sent while `work` runs and until what it set off has died down. */
export async function commandsDuring<T>(ports: number[], work: () => Promise<T>): Promise<{ interval: CommandInterval; result: T }> {
	const before = await scrapeCommands(ports);
	const started = Date.now();
	const result = await work();
	await waitUntilQuiet(ports);
	return { interval: { counts: subtract(await scrapeCommands(ports), before), seconds: (Date.now() - started) / 1000 }, result };
}

export function commandsPerUnit(phase: CommandInterval, idle: CommandInterval, units: number): CommandsPerUnit {
	const net = [...phase.counts].map(([key, n]) => {
		const idleRate = (idle.counts.get(key) ?? 0) / idle.seconds;
		const [service, command, collection] = key.split("\t");
		return { service, command, collection, n: Math.max(0, n - idleRate * phase.seconds) };
	});
	const per = (n: number) => (units > 0 ? round(n / units, 2) : NaN);
	const byService: Record<string, number> = {};
	for (const c of net) byService[c.service] = (byService[c.service] ?? 0) + c.n;
	return {
		units,
		seconds: round(phase.seconds),
		idlePerSecond: round(sum(idle.counts.values()) / idle.seconds, 2),
		raw: per(sum(phase.counts.values())),
		total: per(sum(net.map(c => c.n))),
		byService: Object.fromEntries(Object.entries(byService).map(([service, n]) => [service, per(n)])),
		sandbox: per(sum(net.filter(c => c.collection.startsWith("sandbox_")).map(c => c.n))),
		vault: per(sum(net.filter(c => c.service === "payments" && c.collection === "vault_cards").map(c => c.n))),
		top: net
			.filter(c => c.n > 0)
			.sort((a, b) => b.n - a.n)
			.map(({ service, command, collection, n }) => ({ service, command, collection, perUnit: per(n) })),
	};
}

/** "billing 9.1, notifications 4.2, …" */
export function byServiceText(per: CommandsPerUnit): string {
	return Object.entries(per.byService)
		.sort((a, b) => b[1] - a[1])
		.map(([service, n]) => `${service} ${n}`)
		.join(", ");
}
