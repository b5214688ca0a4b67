// Renewals: N due customers charged by 1, 2 or 3 billing processes at once,
// as the hourly cycle charges them. A full run gives each run a fresh
// topology and fresh databases (accounts, notifications and the billing
// processes over NATS), so every run starts from the same N customers in
// collections of the same size. The customers are written
// straight into billing's collections (the state a checkout leaves a month
// earlier), because seeding 20,000 through checkouts would take minutes and
// is not what is measured.
import { randomBytes, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { ServiceBroker } from "moleculer";
import { MongoClient } from "mongodb";
import { createBroker } from "../runtime/broker";
import { seal } from "../services/billing/processors/card-vault";
import type { ServiceName } from "../shared/config";
import { databaseNameFor } from "../shared/db.mixin";
import { round } from "./stats";
import type { BenchContext, Deployment, DeploySpec } from "./topology";

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
}

interface CycleReport {
	charged: number;
	declined: number;
	suspended: number;
	skipped: number;
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

/** Active monthly subscriptions whose next renewal was due a minute ago, with their cards in the sandbox vault. */
async function seedDueCustomers(
	mongoUrl: string,
	vaultKey: Buffer,
	shop: { accountId: number; productId: number; midId: number },
	count: number,
	firstId: number,
): Promise<void> {
	const client = await MongoClient.connect(mongoUrl);
	try {
		const billing = client.db(databaseNameFor("billing", mongoUrl));
		const now = Date.now();
		const anchor = new Date(now - 31 * 86_400_000);
		for (let start = 0; start < count; start += SEED_CHUNK) {
			const customers = [];
			const vault = [];
			for (let i = start; i < Math.min(count, start + SEED_CHUNK); i++) {
				const cardToken = `card_${randomBytes(16).toString("hex")}`;
				vault.push({
					_id: cardToken,
					...seal(vaultKey, "4242424242424242"),
					bin: "424242",
					last4: "4242",
					expiry: "1234",
					createdAt: anchor,
				});
				customers.push({
					_id: firstId + i,
					accountId: shop.accountId,
					environment: "sandbox",
					email: `renewal-${i}@example.com`,
					name: "Ada",
					lastName: "Lovelace",
					status: "ACTIVE",
					productId: shop.productId,
					subscriptionTimestamp: anchor,
					nextRenewalTimestamp: new Date(now - 60_000),
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
			}
			await billing.collection("sandbox_vault").insertMany(vault as never[], { ordered: false });
			await billing.collection("customers").insertMany(customers as never[], { ordered: false });
		}
	} finally {
		await client.close();
	}
}

async function countRenewals(mongoUrl: string, accountId: number): Promise<number> {
	const client = await MongoClient.connect(mongoUrl);
	try {
		return await client
			.db(databaseNameFor("billing", mongoUrl))
			.collection("transactions")
			.countDocuments({ accountId, type: "RENEWAL", status: "APPROVED" });
	} finally {
		await client.close();
	}
}

/** accounts, notifications and `billingNodes` billing processes over NATS, in fresh databases. */
export function renewalSpec(database: string, billingNodes: number): DeploySpec {
	const nodes: Record<string, ServiceName[]> = { accounts: ["accounts"], notifications: ["notifications"] };
	for (let i = 1; i <= billingNodes; i++) nodes[`billing-${i}`] = ["billing"];
	return { database, nodes, transporter: true };
}

/**
 * One run on a running deployment: `billingNodes` of its billing processes
 * run the cycle at the same moment, as the hourly cron starts it on each.
 * The run's customers belong to an account of their own and get ids from
 * `firstId` on, so several runs can share a deployment (the quick mode does).
 */
export async function renewalRun(
	ctx: BenchContext,
	deployment: Deployment,
	options: { billingNodes: number; customers: number; webhookUrl: string; firstId: number },
): Promise<RenewalRunResult> {
	const billingNodes = Array.from({ length: options.billingNodes }, (_, i) => `billing-${i + 1}`);
	// An operator's node, as `npm run repl` joins: it sets up the shop and starts the cycles.
	const operator = createBroker([], {
		nodeID: `bench-operator-${process.pid}-${options.firstId}`,
		namespace: deployment.namespace,
		transporter: { type: "NATS", options: { url: (await ctx.nats()).url } },
		logger: false,
	});
	try {
		await operator.start();
		await operator.waitForServices(["accounts", "notifications", "billing"], 120_000);
		await waitForBillingNodes(operator, billingNodes);
		const account = await operator.call<{ id: number }, object>("accounts.create", {
			name: "Renewals",
			environment: "sandbox",
			webhookUrl: options.webhookUrl,
		});
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
		const shop = { accountId: account.id, productId: product.id, midId: mid.id };
		await seedDueCustomers(deployment.mongoUrl, Buffer.from(ctx.serviceEnv.VAULT_KEY!, "base64"), shop, options.customers, options.firstId);

		const at = new Date().toISOString();
		const started = performance.now();
		const reports = await Promise.all(
			billingNodes.map(nodeID => operator.call<CycleReport, object>("billing.runRenewals", { at }, { nodeID, timeout: 30 * 60_000 })),
		);
		const seconds = (performance.now() - started) / 1000;
		const sum = (key: keyof CycleReport) => reports.reduce((total, r) => total + r[key], 0);
		return {
			billingNodes: options.billingNodes,
			customers: options.customers,
			seconds: round(seconds, 2),
			renewalsPerSecond: round(sum("charged") / seconds),
			charged: sum("charged"),
			declined: sum("declined") + sum("suspended"),
			skipped: sum("skipped"),
			transactions: await countRenewals(deployment.mongoUrl, account.id),
		};
	} finally {
		await operator.stop();
	}
}
