// Growth: checkout throughput and reads on `npm start`'s topology at growing
// numbers of existing customers (1k, 10k, 50k by default), on one deployment
// grown from size to size. The data is grown by cloning what a few real
// checkouts wrote (clone-data.ts); each size is measured at the same
// concurrency and for the same time, and compared with the smallest.
import { performance } from "node:perf_hooks";
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../shared/db.mixin";
import { encodeCursor, filtersKey } from "../shared/list-page";
import { sleep } from "../shared/poll";
import { cloneTemplates, documentsSince, snapshotIds, type Template } from "./clone-data";
import type { CheckoutLoadResult, ReadLoadResult } from "./load";
import { checkoutLoad } from "./load";
import { type Measured, measureCheckout, measurePaths, measureReads, outsideText, READ_CONNECTIONS } from "./measure";
import type { BenchOptions } from "./options";
import { type Row, type Target, target } from "./report";
import { idsOf, listClones } from "./service-db";
import { createShop, type Shop } from "./shop";
import { medianOf, round } from "./stats";
import { type BenchContext, deploy, embeddedSpec } from "./topology";
import type { WebhookReceiver } from "./webhook-receiver";

export const GROWTH_CONCURRENCY = 16;
const DATABASE = "bench_growth";
/** A handful: each copy of them is this many customers. */
const TEMPLATE_CHECKOUTS = 20;

export interface GrowthStep {
	/** The size asked for. */
	size: number;
	/** Customers in billing's collection when the measurement began: the size, or a little more (earlier sizes' checkouts). */
	customers: number;
	/** Documents cloned to reach the size, over all collections, and how long that took. */
	cloned: number;
	cloneSeconds: number;
	checkout: Measured<CheckoutLoadResult>[];
	/** GET /api/customer/{id}, /api/transaction/{id}, and pages of GET /api/customers (list). */
	reads: Record<"customer" | "transaction" | "list", Measured<ReadLoadResult>[]>;
}

type Log = (line: string) => void;

/** Items per page of the list scenario: the API's default. */
const LIST_LIMIT = 20;

/**
 * GET /api/customers pages spread over the whole list: the first page, and
 * pages starting at random places, as a merchant's cursor leads there.
 */
function listPages(accountId: number, customers: number): string[] {
	const filters = filtersKey({ list: "customers" });
	const pages = [`/api/customers?limit=${LIST_LIMIT}`];
	for (let i = 0; i < 999; i++) {
		const position = LIST_LIMIT + 1 + Math.floor(Math.random() * Math.max(1, customers - LIST_LIMIT));
		pages.push(`/api/customers?limit=${LIST_LIMIT}&cursor=${encodeCursor(accountId, filters, position)}`);
	}
	return pages;
}

/** The documents a few real checkouts wrote, every one answered and its webhooks delivered, to be cloned. */
async function templatesOf(client: MongoClient, shop: Shop, receiver: WebhookReceiver): Promise<Template[]> {
	const before = await snapshotIds(client, DATABASE);
	const window = receiver.window();
	await checkoutLoad(shop, { connections: 4, checkouts: TEMPLATE_CHECKOUTS, onOk: (id, at) => receiver.answered(id, at) });
	await receiver.drain(window, 60_000);
	// The delivery's settlement follows the webhook's answer.
	await sleep(500);
	return documentsSince(client, DATABASE, before);
}

/** Clones copies of the templates until billing holds `size` customers. */
async function growTo(client: MongoClient, mongoUrl: string, accountId: number, templates: Template[], size: number, copiesMade: number) {
	const customers = client.db(databaseNameFor("billing", mongoUrl)).collection("customers");
	const perCopy = templates.find(t => t.db === customers.dbName && t.collection === "customers")?.docs.length ?? 0;
	if (perCopy === 0) throw new Error("growth: the template checkouts wrote no customers");
	const copies = Math.max(0, Math.ceil((size - (await customers.estimatedDocumentCount())) / perCopy));
	const listed = new Set(await idsOf(mongoUrl, "customers", accountId));
	const cloned = await cloneTemplates(client, templates, copiesMade + 1, copies);
	await listClones(mongoUrl, accountId, listed);
	return { copies, cloned, customers: await customers.estimatedDocumentCount() };
}

/** Checkouts, then reads over every customer and transaction of the shop (seeded and real), `repeat` times each. */
async function measureSize(shop: Shop, mongoUrl: string, options: BenchOptions, receiver: WebhookReceiver) {
	const checkout: GrowthStep["checkout"] = [];
	for (let r = 0; r < options.repeat; r++) checkout.push((await measureCheckout(shop, GROWTH_CONCURRENCY, options, receiver)).result);
	const reads: GrowthStep["reads"] = { customer: [], transaction: [], list: [] };
	let customers = 0;
	for (const kind of ["customer", "transaction"] as const) {
		const ids = await idsOf(mongoUrl, kind === "customer" ? "customers" : "transactions", shop.accountId);
		if (kind === "customer") customers = ids.length;
		for (let r = 0; r < options.repeat; r++) reads[kind].push(await measureReads(shop, kind, ids, options));
	}
	for (let r = 0; r < options.repeat; r++) reads.list.push(await measurePaths(shop, listPages(shop.accountId, customers), options));
	return { checkout, reads };
}

export async function runGrowth(ctx: BenchContext, options: BenchOptions, receiver: WebhookReceiver, log: Log): Promise<GrowthStep[]> {
	const deployment = await deploy(ctx, embeddedSpec(DATABASE));
	const client = await MongoClient.connect(deployment.mongoUrl);
	const steps: GrowthStep[] = [];
	try {
		const shop = await createShop(deployment.url!, receiver.url);
		const templates = await templatesOf(client, shop, receiver);
		log(`growth: each copy clones ${templates.map(t => `${t.docs.length} ${t.collection}`).join(", ")}`);
		// So that the first size is not measured on a cold process (JIT, pools) while the later ones are not.
		await measureCheckout(shop, GROWTH_CONCURRENCY, { ...options, warmup: 0, duration: options.warmup + options.duration }, receiver);
		let copiesMade = 0;
		for (const size of options.growthSizes) {
			const started = performance.now();
			const { copies, cloned, customers } = await growTo(client, deployment.mongoUrl, shop.accountId, templates, size, copiesMade);
			copiesMade += copies;
			const cloneSeconds = round((performance.now() - started) / 1000);
			log(`growth ${size}: ${customers} customers (${cloned} documents cloned in ${cloneSeconds} s)`);
			steps.push({ size, customers, cloned, cloneSeconds, ...(await measureSize(shop, deployment.mongoUrl, options, receiver)) });
			log(stepLine(steps.at(-1)!));
		}
	} finally {
		await client.close();
		await deployment.stop();
	}
	return steps;
}

function stepLine(step: GrowthStep): string {
	const reads = (kind: "customer" | "transaction" | "list") => step.reads[kind].map(r => r.requestsPerSecond).join(", ");
	const failed =
		step.checkout.reduce((n, r) => n + Object.values(r.failures).reduce((a, b) => a + b, 0), 0) +
		[...step.reads.customer, ...step.reads.transaction, ...step.reads.list].reduce((n, r) => n + r.failures, 0);
	return `growth ${step.size}: checkouts ${step.checkout.map(r => r.checkoutsPerSecond).join(", ")}/s; customer reads ${reads("customer")} req/s; transaction reads ${reads("transaction")} req/s; list pages ${reads("list")} req/s; ${failed} failed`;
}

/** Each figure wanted at the largest size, as a share of the smallest size's. */
const GROWTH_TARGET = 0.9;

export function growthSummary(steps: GrowthStep[]): { rows: Row[]; targets: Target[] } {
	const rows: Row[] = [];
	const targets: Target[] = [];
	const figures = [
		{
			name: `checkout c=${GROWTH_CONCURRENCY}`,
			unit: "checkouts/s",
			runs: (s: GrowthStep) => s.checkout.map(r => ({ rate: r.checkoutsPerSecond, machine: r.machine, ...r.checkout })),
		},
		...(["customer", "transaction", "list"] as const).map(kind => ({
			name:
				kind === "list" ? `GET /api/customers pages of ${LIST_LIMIT} c=${READ_CONNECTIONS}` : `GET /api/${kind}/{id} c=${READ_CONNECTIONS}`,
			unit: "req/s",
			runs: (s: GrowthStep) => (s.reads[kind] ?? []).map(r => ({ rate: r.requestsPerSecond, machine: r.machine, ...r.latency })),
		})),
	];
	for (const figure of figures) {
		const rate = (step: GrowthStep) => medianOf(figure.runs(step), r => r.rate);
		const [smallest, largest] = [steps[0], steps.at(-1)];
		const figureRows = steps.map(
			(step): Row => ({
				scenario: "growth",
				setting: `${figure.name}, ${step.customers.toLocaleString("en")} customers`,
				throughput: rate(step),
				unit: figure.unit,
				p50: medianOf(figure.runs(step), r => r.p50),
				p95: medianOf(figure.runs(step), r => r.p95),
				p99: medianOf(figure.runs(step), r => r.p99),
				note: [
					step === smallest ? "the smallest size" : `${(rate(step) / rate(smallest)).toFixed(2)} of the smallest size`,
					outsideText(figure.runs(step)),
				]
					.filter(Boolean)
					.join("; "),
			}),
		);
		rows.push(...figureRows);
		const ratio = smallest && largest !== smallest ? rate(largest!) / rate(smallest) : null;
		targets.push(
			target(
				{
					name: `growth: ${figure.name} at the largest size vs the smallest`,
					target: `≥ ${GROWTH_TARGET}`,
					measured:
						ratio === null
							? "–"
							: `${ratio.toFixed(2)} (${rate(largest!)} vs ${rate(smallest)} ${figure.unit}; ${largest!.customers} vs ${smallest.customers} customers)`,
					met: ratio === null ? null : ratio >= GROWTH_TARGET,
				},
				ratio === null ? undefined : figureRows.at(-1),
			),
		);
	}
	return { rows, targets };
}
