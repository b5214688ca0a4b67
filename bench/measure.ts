// One measurement as every scenario takes it: unmeasured warm-up load, then
// the measured run (and, for checkouts, the wait for their webhooks, so the
// next run does not share the machine with this one's deliveries), with how
// busy the machine was meanwhile and how much of it was not the benchmark.
import { cpuSecondsMeter, type MachineUse, machineMeter } from "./cpu-time";
import { type CheckoutLoadResult, type CheckoutTarget, checkoutLoad, type ReadLoadResult, readLoad } from "./load";
import type { BenchOptions } from "./options";
import type { Shop } from "./shop";
import { median, type Percentiles, percentiles, round } from "./stats";
import type { WebhookReceiver } from "./webhook-receiver";

/** A load's result with how busy the machine was meanwhile. */
export type Measured<T> = T & { machine: MachineUse };

/** The CPU time the serving processes (nodes, database server, NATS) spent on a checkout run, from their own counters. */
export interface CheckoutCpu {
	seconds: number;
	/** CPU milliseconds per checkout answered OK, all those processes together. */
	perCheckoutMs: number;
	/** The same, per process (node id, "database", "nats"). */
	byProcess?: Record<string, number>;
}

/** Concurrency of the read runs, and of the checkouts the targets name. */
export const READ_CONNECTIONS = 16;

export interface WebhookRun {
	events: number;
	missing: number;
	delay: Percentiles;
}

/**
 * `serving`: the processes that serve the checkouts (every node, the database server, NATS); their CPU time during the
 * run, webhooks included (they are waited for), is divided by the checkouts answered OK.
 */
/** CPU time of named processes over a run, divided by the units of work the run did (or by its seconds). */
export function servingCpu(serving: Record<string, number>) {
	const meters = Object.entries(serving).map(([name, pid]) => ({ name, meter: cpuSecondsMeter([pid]) }));
	return {
		stop(units: number): { seconds: number; perUnitMs: number; byProcess: Record<string, number> } | null {
			if (!meters.length) return null;
			const used = meters.map(({ name, meter }) => ({ name, seconds: meter.stop() }));
			const per = (seconds: number, digits: number) => (units > 0 ? round((seconds * 1000) / units, digits) : NaN);
			const seconds = used.reduce((sum, u) => sum + u.seconds, 0);
			// A read costs a few hundredths of a millisecond: it keeps three digits where a checkout keeps one.
			const digits = units > 0 && (seconds * 1000) / units < 1 ? 3 : 1;
			return {
				seconds: round(seconds, 2),
				perUnitMs: per(seconds, digits),
				byProcess: Object.fromEntries(used.map(u => [u.name, per(u.seconds, digits)])),
			};
		},
	};
}

/**
 * `serving`: the processes that serve the checkouts (every node, the database server, NATS); their CPU time during the
 * run, webhooks included (they are waited for), is divided by the checkouts answered OK.
 */
export async function measureCheckout(
	target: CheckoutTarget,
	connections: number,
	options: BenchOptions,
	receiver: WebhookReceiver | null,
	serving: Record<string, number> = {},
): Promise<{ result: Measured<CheckoutLoadResult> & { cpu: CheckoutCpu | null }; webhooks: WebhookRun | null }> {
	if (options.warmup > 0) await checkoutLoad(target, { connections, seconds: options.warmup });
	const window = receiver?.window();
	const machine = machineMeter();
	const cpu = servingCpu(serving);
	const load = await checkoutLoad(target, {
		connections,
		seconds: options.duration,
		onOk: receiver ? (id, at) => receiver.answered(id, at) : undefined,
	});
	const result = { ...load, machine: machine.stop(), cpu: null as CheckoutCpu | null };
	let webhooks: WebhookRun | null = null;
	if (receiver && window) {
		await receiver.drain(window, options.quick ? 5_000 : 120_000);
		const delays = window.delays();
		webhooks = { events: delays.length, missing: window.missing(), delay: percentiles(delays) };
	}
	const used = cpu.stop(load.ok);
	if (used) result.cpu = { seconds: used.seconds, perCheckoutMs: used.perUnitMs, byProcess: used.byProcess };
	return { result, webhooks };
}

/** The CPU time the serving processes spent on a read run, per read answered. */
export interface ReadCpu {
	seconds: number;
	perReadMs: number;
	byProcess: Record<string, number>;
}

export type ReadRun = Measured<ReadLoadResult> & { cpu?: ReadCpu | null };

/** GET /api/<kind>/<id> over `ids`, at READ_CONNECTIONS, with the CPU the `serving` processes spent per read. */
export async function measureReads(
	shop: Pick<Shop, "url" | "apiToken">,
	kind: "customer" | "transaction",
	ids: number[],
	options: BenchOptions,
	serving: Record<string, number> = {},
): Promise<ReadRun> {
	return measurePaths(
		shop,
		ids.map(id => `/api/${kind}/${id}`),
		options,
		serving,
	);
}

/** GET requests spread at random over `paths`, READ_CONNECTIONS at a time, after the warm-up. */
export async function measurePaths(
	shop: Pick<Shop, "url" | "apiToken">,
	paths: string[],
	options: BenchOptions,
	serving: Record<string, number> = {},
): Promise<ReadRun> {
	if (options.warmup > 0) await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.warmup });
	const machine = machineMeter();
	const cpu = servingCpu(serving);
	const result = await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.duration });
	const used = cpu.stop(result.requests - result.failures);
	return {
		...result,
		machine: machine.stop(),
		cpu: used && { seconds: used.seconds, perReadMs: used.perUnitMs, byProcess: used.byProcess },
	};
}

/** "0.8 cores used outside the benchmark meanwhile", when other jobs took a noticeable share of the machine. */
export function outsideText(runs: Measured<object>[]): string {
	const outside = median(runs.map(r => r.machine.outside));
	return outside >= 0.1 ? `${round(outside, 2)} cores used outside the benchmark meanwhile` : "";
}
