// Renewals: N due customers charged by 1, 2 or 3 billing processes at once,
// as the hourly cycle charges them. A full run gives each run a fresh
// topology and fresh databases (accounts, notifications and the billing
// processes over NATS), so every run starts from the same N customers in
// collections of the same size. The customers are written
// straight into billing's collections (the state a checkout leaves a month
// earlier) and listed in its renewal schedule, because seeding 20,000
// through checkouts would take minutes and is not what is measured.
// Each run also reports the database commands per renewal (when the nodes
// serve metrics) and the CPU the database server and each billing node used.
import { randomBytes, randomUUID } from "node:crypto";
import os from "node:os";
import { performance } from "node:perf_hooks";
import type { ServiceBroker } from "moleculer";
import mongoose from "mongoose";
import { createBroker } from "../runtime/broker";
import { createBillingModels } from "../services/billing/models";
import type { CycleReport } from "../services/billing/renewals/renewal-batch";
import { RENEWAL_SCHEDULE } from "../services/billing/renewals/renewal-schedule";
import { masterKeys, sealEnvelope } from "../services/payments/vault/sealing";
import type { ServiceName } from "../shared/config";
import { slotDocuments } from "../shared/schedule";
import { type CpuUse, cpuMeter, machineMeter } from "./cpu-time";
import { type CommandsPerUnit, commandsDuring, commandsPerUnit, idleCommands } from "./db-commands";
import { withServiceDbs } from "./service-db";
import { median, round } from "./stats";
import type { BenchContext, Deployment, DeploySpec } from "./topology";
import type { WebhookReceiver } from "./webhook-receiver";

export interface RenewalRunResult {
	billingNodes: number;
	customers: number;
	seconds: number;
	renewalsPerSecond: number;
	charged: number;
	declined: number;
	/** Customers a node found due but another node had claimed first. */
	skipped: number;
	/** RENEWAL transactions written, as a check that every customer was charged once. */
	transactions: number;
	/** Renewal webhooks that had not arrived when the run stopped waiting. */
	webhooksMissing: number;
	/** Per renewal, from the cycle's start until its webhooks arrived; null when the nodes serve no metrics. */
	commands: CommandsPerUnit | null;
	/**
	 * During the cycle: the database server (null with MONGO_URL; share: of
	 * the machine's cores), each billing node, the deployment's other nodes,
	 * and the whole machine, with the cores used by processes the benchmark
	 * did not start (`outside`: another job on a shared machine skews every figure).
	 */
	cpu: {
		database: (CpuUse & { share: number }) | null;
		billing: Record<string, CpuUse>;
		others: Record<string, CpuUse>;
		machine: { cores: number; share: number; outside: number };
	};
}

const SEED_CHUNK = 1000;

async function waitForBillingNodes(broker: ServiceBroker, names: string[]): Promise<void> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const available = broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
		const billing = new Set(available.filter(s => s.name === "billing").map(s => s.nodeID));
		if (names.every(n => billing.has(n))) return;
		if (Date.now() > deadline) throw new Error(`billing nodes did not join: ${[...billing].join(", ")}`);
		await new Promise(resolve => setTimeout(resolve, 200));
	}
}

/** One upsert per schedule document: the customers' ids added to the slot and shard each is due in. */
function scheduleListings(customers: { _id: number; nextRenewalTimestamp: Date }[]) {
	const byKey = slotDocuments(
		customers.map(c => ({ id: c._id, at: c.nextRenewalTimestamp })),
		RENEWAL_SCHEDULE,
	);
	return [...byKey].map(([key, ids]) => ({
		updateOne: { filter: { _id: key }, update: { $addToSet: { ids: { $each: ids } } }, upsert: true },
	}));
}

/** Active monthly subscriptions whose next renewal was due a minute ago, with their cards in the payments vault. */
async function seedDueCustomers(
	mongoUrl: string,
	vaultKey: Buffer,
	shop: { accountId: number; productId: number; midId: number },
	count: number,
	firstId: number,
): Promise<void> {
	// Billing's own model fills in the fields the seed does not name, as a checkout's write would.
	const models = mongoose.createConnection();
	const { customers: Customer } = createBillingModels(models);
	await withServiceDbs(mongoUrl, async db => {
		const billing = db("billing");
		const payments = db("payments");
		const keys = masterKeys(vaultKey);
		const now = Date.now();
		const anchor = new Date(now - 31 * 86_400_000);
		// Due a minute ago, but in the current hour slot: the schedule's cursor may be there already (billing starts it at
		// the current slot on a fresh database, and a cycle of an earlier run on the same deployment moves it there).
		const due = new Date(Math.max(now - 60_000, Math.floor(now / RENEWAL_SCHEDULE.slotMs) * RENEWAL_SCHEDULE.slotMs));
		for (let start = 0; start < count; start += SEED_CHUNK) {
			const customers: { _id: number; nextRenewalTimestamp: Date }[] = [];
			const vault = [];
			for (let i = start; i < Math.min(count, start + SEED_CHUNK); i++) {
				const cardToken = `card_${randomBytes(16).toString("hex")}`;
				vault.push({
					_id: cardToken,
					pan: sealEnvelope(keys, "4242424242424242"),
					bin: "424242",
					last4: "4242",
					expiry: "1234",
					createdAt: anchor,
				});
				const customer = new Customer({
					_id: firstId + i,
					accountId: shop.accountId,
					environment: "sandbox",
					email: `renewal-${i}@example.com`,
					name: "Ada",
					lastName: "Lovelace",
					status: "ACTIVE",
					productId: shop.productId,
					subscriptionTimestamp: anchor,
					nextRenewalTimestamp: due,
					lastTimeBilled: anchor,
					unsubscriptionTimestamp: null,
					renewalActive: true,
					attempts: 0,
					cardBin: "424242",
					cardLast4: "4242",
					cardType: "visa",
					cardExpiredTime: "1234",
					cardToken,
					cardFingerprint: randomBytes(32).toString("hex"),
					midId: shop.midId,
					midName: "MID",
					sessionId: randomUUID(),
					additionalData: null,
					authorizationId: null,
					outbox: [],
					billingAnchor: anchor,
					periodsBilled: 1,
					renewalLease: null,
					createdAt: anchor,
				});
				customers.push(customer.toObject() as { _id: number; nextRenewalTimestamp: Date });
			}
			await payments.collection("vault_cards").insertMany(vault as never[], { ordered: false });
			await billing.collection("customers").insertMany(customers as never[], { ordered: false });
			await billing.collection("renewal_schedule").bulkWrite(scheduleListings(customers) as never[], { ordered: false });
		}
	});
	await models.close();
}

function countRenewals(mongoUrl: string, accountId: number): Promise<number> {
	return withServiceDbs(mongoUrl, db =>
		db("billing").collection("transactions").countDocuments({ accountId, type: "RENEWAL", status: "APPROVED" }),
	);
}

/** accounts, notifications, payments, metrics, invoicing and `billingNodes` billing processes over NATS, in fresh databases. */
export function renewalSpec(database: string, billingNodes: number, options: { metrics?: boolean } = {}): DeploySpec {
	const nodes: Record<string, ServiceName[]> = {
		accounts: ["accounts"],
		notifications: ["notifications"],
		payments: ["payments"],
		metrics: ["metrics"],
		// On its own node: a renewal's invoice is issued there, off the billing node being measured.
		invoicing: ["invoicing"],
	};
	for (let i = 1; i <= billingNodes; i++) nodes[`billing-${i}`] = ["billing"];
	return { database, nodes, transporter: true, ...options };
}

export interface RenewalRunOptions {
	billingNodes: number;
	customers: number;
	receiver: WebhookReceiver;
	firstId: number;
	/** Seconds of idle before the cycle, to take the nodes' idle commands off the renewals' (0: commands not counted). */
	idleSeconds: number;
}

/** A sandbox account with a MID and a monthly product, set up as an operator would. */
async function setUpShop(operator: ServiceBroker, webhookUrl: string): Promise<{ accountId: number; productId: number; midId: number }> {
	const account = await operator.call<{ id: number }, object>("accounts.create", { name: "Renewals", environment: "sandbox", webhookUrl });
	const mid = await operator.call<{ id: number }, object>("accounts.createMerchantAccount", {
		accountId: account.id,
		name: "MID",
		group: "default",
		cardTypes: ["visa"],
	});
	const product = await operator.call<{ id: number }, object>("accounts.createProduct", {
		accountId: account.id,
		name: "Monthly",
		amount: 9.99,
		currency: "EUR",
		billing: "CHARGE",
		renewal: { every: 1, unit: "month" },
		merchantAccountGroup: "default",
	});
	return { accountId: account.id, productId: product.id, midId: mid.id };
}

/** The cycle on every node at once, timed from its start to the last node's end, with the CPU each process used meanwhile. */
async function runCycles(ctx: BenchContext, deployment: Deployment, operator: ServiceBroker, billingNodes: string[]) {
	const at = new Date().toISOString();
	const database = ctx.databasePid === null ? null : cpuMeter(ctx.databasePid);
	const nodes = [...deployment.nodes].map(([nodeID, child]) => [nodeID, cpuMeter(child.pid!)] as const);
	const machine = machineMeter();
	const started = performance.now();
	const reports = await Promise.all(
		billingNodes.map(nodeID => operator.call<CycleReport, object>("billing.runRenewals", { at }, { nodeID, timeout: 30 * 60_000 })),
	);
	const seconds = (performance.now() - started) / 1000;
	const databaseCpu = database?.stop();
	const used = nodes.map(([nodeID, meter]) => [nodeID, meter.stop()] as const);
	const cpu = {
		database: databaseCpu ? { ...databaseCpu, share: round(databaseCpu.cores / os.cpus().length, 2) } : null,
		billing: Object.fromEntries(used.filter(([nodeID]) => billingNodes.includes(nodeID))),
		others: Object.fromEntries(used.filter(([nodeID]) => !billingNodes.includes(nodeID))),
		machine: machine.stop(),
	};
	const sum = (key: keyof CycleReport) => reports.reduce((total, r) => total + r[key], 0);
	return { seconds, charged: sum("charged"), declined: sum("declined") + sum("suspended"), skipped: sum("skipped"), cpu };
}

/**
 * One run on a running deployment: `billingNodes` of its billing processes
 * run the cycle at the same moment, as the hourly cron starts it on each.
 * The run's customers belong to an account of their own and get ids from
 * `firstId` on, so several runs can share a deployment (the quick mode does).
 * The run ends when the renewals' webhooks have arrived, so that the next
 * run does not share the database with this one's deliveries.
 */
export async function renewalRun(ctx: BenchContext, deployment: Deployment, options: RenewalRunOptions): Promise<RenewalRunResult> {
	const billingNodes = Array.from({ length: options.billingNodes }, (_, i) => `billing-${i + 1}`);
	// Commands are counted only when asked for (idleSeconds) and served (metrics on).
	const ports = options.idleSeconds > 0 ? [...deployment.metricsPorts.values()] : [];
	// An operator's node, as `npm run repl` joins: it sets up the shop and starts the cycles.
	const operator = createBroker([], {
		nodeID: `bench-operator-${process.pid}-${options.firstId}`,
		namespace: deployment.namespace,
		transporter: { type: "NATS", options: { url: (await ctx.nats()).url } },
		logger: false,
	});
	try {
		await operator.start();
		await operator.waitForServices(["accounts", "notifications", "payments", "billing"], 120_000);
		await waitForBillingNodes(operator, billingNodes);
		const shop = await setUpShop(operator, options.receiver.url);
		await seedDueCustomers(deployment.mongoUrl, Buffer.from(ctx.serviceEnv.VAULT_KEY!, "base64"), shop, options.customers, options.firstId);
		const ids = Array.from({ length: options.customers }, (_, i) => options.firstId + i);

		const idle = ports.length ? await idleCommands(ports, options.idleSeconds) : null;
		const { interval, result: cycle } = await commandsDuring(ports, async () => {
			const cycle = await runCycles(ctx, deployment, operator, billingNodes);
			const webhooksMissing = await options.receiver.awaitEvents(ids, 1, 120_000 + options.customers * 10);
			return { ...cycle, webhooksMissing };
		});
		return {
			billingNodes: options.billingNodes,
			customers: options.customers,
			seconds: round(cycle.seconds, 2),
			renewalsPerSecond: round(cycle.charged / cycle.seconds),
			charged: cycle.charged,
			declined: cycle.declined,
			skipped: cycle.skipped,
			transactions: await countRenewals(deployment.mongoUrl, shop.accountId),
			webhooksMissing: cycle.webhooksMissing,
			commands: idle ? commandsPerUnit(interval, idle, cycle.charged) : null,
			cpu: cycle.cpu,
		};
	} finally {
		await operator.stop();
	}
}

/** "database 1.12 cores (56 % of the machine), machine 90 % busy" */
export function databaseCpuText(runs: RenewalRunResult[]): string {
	const cpu = runs.flatMap(r => (r.cpu.database ? [r.cpu.database] : []));
	const outside = median(runs.map(r => r.cpu.machine.outside));
	const machine = `machine ${Math.round(median(runs.map(r => r.cpu.machine.share)) * 100)} % busy${outside >= 0.1 ? ` (${round(outside, 2)} cores by processes outside the benchmark)` : ""}`;
	if (!cpu.length) return `database CPU not measured (MONGO_URL), ${machine}`;
	return `database ${round(median(cpu.map(c => c.cores)), 2)} cores (${Math.round(median(cpu.map(c => c.share)) * 100)} % of the machine), ${machine}`;
}

/** Customers not charged, or webhooks not arrived: a run that did not do all its work. */
export function missingText(runs: RenewalRunResult[]): string {
	const uncharged = runs.reduce((n, r) => n + r.customers - r.transactions, 0);
	const hooks = runs.reduce((n, r) => n + r.webhooksMissing, 0);
	return [uncharged ? `${uncharged} NOT CHARGED` : "", hooks ? `${hooks} webhooks missing` : ""].filter(Boolean).join(", ");
}
