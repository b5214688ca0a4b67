// One measurement as every scenario takes it: unmeasured warm-up load, then
// the measured run (and, for checkouts, the wait for their webhooks, so the
// next run does not share the machine with this one's deliveries), with how
// busy the machine was meanwhile and how much of it was not the benchmark.
import { type MachineUse, machineMeter } from "./cpu-time";
import { type CheckoutLoadResult, type CheckoutTarget, checkoutLoad, type ReadLoadResult, readLoad } from "./load";
import type { BenchOptions } from "./options";
import type { Shop } from "./shop";
import { median, type Percentiles, percentiles, round } from "./stats";
import type { WebhookReceiver } from "./webhook-receiver";

/** A load's result with how busy the machine was meanwhile. */
export type Measured<T> = T & { machine: MachineUse };

/** Concurrency of the read runs, and of the checkouts the targets name. */
export const READ_CONNECTIONS = 16;

export interface WebhookRun {
	events: number;
	missing: number;
	delay: Percentiles;
}

export async function measureCheckout(
	target: CheckoutTarget,
	connections: number,
	options: BenchOptions,
	receiver: WebhookReceiver | null,
): Promise<{ result: Measured<CheckoutLoadResult>; webhooks: WebhookRun | null }> {
	if (options.warmup > 0) await checkoutLoad(target, { connections, seconds: options.warmup });
	const window = receiver?.window();
	const machine = machineMeter();
	const load = await checkoutLoad(target, {
		connections,
		seconds: options.duration,
		onOk: receiver ? (id, at) => receiver.answered(id, at) : undefined,
	});
	const result = { ...load, machine: machine.stop() };
	let webhooks: WebhookRun | null = null;
	if (receiver && window) {
		await receiver.drain(window, options.quick ? 5_000 : 120_000);
		const delays = window.delays();
		webhooks = { events: delays.length, missing: window.missing(), delay: percentiles(delays) };
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
