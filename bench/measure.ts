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
	const meters = Object.entries(serving).map(([name, pid]) => ({ name, meter: cpuSecondsMeter([pid]) }));
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
	if (meters.length) {
		const used = meters.map(({ name, meter }) => ({ name, seconds: meter.stop() }));
		const perCheckout = (seconds: number) => (load.ok > 0 ? round((seconds * 1000) / load.ok, 1) : NaN);
		const seconds = round(
			used.reduce((sum, u) => sum + u.seconds, 0),
			2,
		);
		result.cpu = {
			seconds,
			perCheckoutMs: perCheckout(seconds),
			byProcess: Object.fromEntries(used.map(u => [u.name, perCheckout(u.seconds)])),
		};
	}
	return { result, webhooks };
}

/** GET /api/<kind>/<id> over `ids`, at READ_CONNECTIONS. */
export async function measureReads(
	shop: Shop,
	kind: "customer" | "transaction",
	ids: number[],
	options: BenchOptions,
): Promise<Measured<ReadLoadResult>> {
	return measurePaths(
		shop,
		ids.map(id => `/api/${kind}/${id}`),
		options,
	);
}

/** GET requests spread at random over `paths`, READ_CONNECTIONS at a time, after the warm-up. */
export async function measurePaths(shop: Shop, paths: string[], options: BenchOptions): Promise<Measured<ReadLoadResult>> {
	if (options.warmup > 0) await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.warmup });
	const machine = machineMeter();
	const result = await readLoad(shop.url, shop.apiToken, paths, { connections: READ_CONNECTIONS, seconds: options.duration });
	return { ...result, machine: machine.stop() };
}

/** "0.8 cores used outside the benchmark meanwhile", when other jobs took a noticeable share of the machine. */
export function outsideText(runs: Measured<object>[]): string {
	const outside = median(runs.map(r => r.machine.outside));
	return outside >= 0.1 ? `${round(outside, 2)} cores used outside the benchmark meanwhile` : "";
}
