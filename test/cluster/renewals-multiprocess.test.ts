// Exactly-once renewals on real processes: three billing nodes (`npm run node`
// with SERVICES=billing) over a real NATS server and one shared database
// server, 2,000 due customers, one node SIGKILLed mid-cycle.
import { type ChildProcess, spawn } from "node:child_process";
import type { ServiceBroker } from "moleculer";
import { MongoClient } from "mongodb";
import { createBroker } from "../../bin/broker";
import { databaseNameFor } from "../../shared/db.mixin";
import { projectRoot } from "../../shared/paths";
import { testEnvironment } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CUSTOMERS = Number(process.env.RENEWAL_TEST_CUSTOMERS ?? 2000);
const BILLING_NODES = ["billing-1", "billing-2", "billing-3"];
const LEASE_MS = 3000;

let nats: NatsServer;
let support: ServiceBroker;
const nodes = new Map<string, ChildProcess>();

function startBillingNode(nodeId: string): ChildProcess {
	const env = { ...process.env, SERVICES: "billing", NODE_ID: nodeId, LOG_LEVEL: "warn" };
	// One real process per node (tsx as a loader, not its CLI, which would run the node in a child), so SIGKILL kills the node.
	const child = spawn(process.execPath, ["--import", "tsx", "bin/node.ts"], { cwd: projectRoot, env, stdio: ["ignore", "ignore", "inherit"] });
	nodes.set(nodeId, child);
	return child;
}

async function waitForBillingNodes(names: string[]): Promise<void> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		const available = support.registry.getServiceList({ onlyAvailable: true, withActions: false }) as { name: string; nodeID: string }[];
		const billing = new Set(available.filter(s => s.name === "billing").map(s => s.nodeID));
		if (names.every(n => billing.has(n))) return;
		if (Date.now() > deadline) throw new Error(`billing nodes did not join: ${[...billing].join(", ")}`);
		await new Promise(r => setTimeout(r, 200));
	}
}

/** Subscriptions to a SCHEDULE product with a 1-day trial, through the checkout's own billing steps. */
async function seedCustomers(accountId: number, productId: number, midId: number): Promise<void> {
	let next = 0;
	const one = async (i: number) => {
		const attemptId = `seed_${i.toString().padStart(6, "0")}`;
		const card = { pan: "4242424242424242", expiry: "1234", cvc: "123" };
		const verified = await support.call<{ cardToken: string }, object>("billing.verifyCard", { environment: "sandbox", midId, attemptId, card });
		const opened = await support.call<{ customerId: number }, object>("billing.openSubscription", {
			accountId,
			environment: "sandbox",
			product: { id: productId, allowMultipleSubscriptions: true },
			buyer: { email: `renewal-${i}@example.com`, name: "Ada", lastName: "" },
			card: { cardToken: verified.cardToken, fingerprint: "a".repeat(64), bin: "424242", last4: "4242", brand: "visa", expiry: "1234" },
			mid: { id: midId, name: "MID" },
			sessionId: "6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f",
			additionalData: null,
		});
		await support.call("billing.firstPayment", {
			customerId: opened.customerId,
			environment: "sandbox",
			attemptId,
			cvc: "123",
			product: { billing: "SCHEDULE", amountMinor: 499, currency: "EUR", currencyId: 978, trialDays: 1, renewal: { every: 1, unit: "month" } },
		});
	};
	await Promise.all(Array.from({ length: 16 }, async () => {
		while (next < CUSTOMERS) await one(next++);
	}));
}

beforeAll(async () => {
	nats = await startNats();
	testEnvironment({ env: { TRANSPORTER: nats.url, RENEWAL_LEASE_MS: String(LEASE_MS), RENEWAL_CRON: "0 0 1 1 *" } });
	// Everything but billing runs in this process; billing runs in three processes of its own.
	support = createBroker(["accounts", "notifications"], { nodeID: "support", logger: false, requestTimeout: 120_000 });
	await support.start();
	for (const name of BILLING_NODES) startBillingNode(name);
	await waitForBillingNodes(BILLING_NODES);
}, 90_000);

afterAll(async () => {
	for (const child of nodes.values()) if (child.exitCode === null) child.kill("SIGKILL");
	await support?.stop();
	await nats?.stop();
});

test("When one of three billing processes is SIGKILLed mid-cycle, then each of 2,000 due customers is charged exactly once and moved on once", async () => {
	// Arrange
	const account = await support.call<{ id: number }, object>("accounts.create", { name: "Renewals", environment: "sandbox" });
	const mid = await support.call<{ id: number }, object>("accounts.createMerchantAccount", { accountId: account.id, name: "MID", group: "default", cardTypes: ["visa"] });
	const product = await support.call<{ id: number }, object>("accounts.createProduct", {
		accountId: account.id,
		name: "Trial",
		amount: 4.99,
		currency: "EUR",
		billing: "SCHEDULE",
		trialDays: 1,
		renewal: { every: 1, unit: "month" },
		merchantAccountGroup: "default",
	});
	const seeding = Date.now();
	await seedCustomers(account.id, product.id, mid.id);
	if (process.env.DEBUG_RENEWALS) console.log(`seeded ${CUSTOMERS} in ${Date.now() - seeding} ms`);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const charges = () => billing.collection("transactions").countDocuments({ accountId: account.id, type: "SUBSCRIPTION_START" });

	try {
		// Act: the cycle on all three nodes at once; billing-2 is killed once some work is done.
		const at = new Date(Date.now() + 2 * 86_400_000).toISOString();
		const cycles = BILLING_NODES.map(nodeID => support.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 }).catch(err => err));
		// A bounded wait: if the cycles end (or fail) first, the kill simply comes after them.
		const killAt = Math.min(300, Math.floor(CUSTOMERS / 5));
		for (let waited = 0; (await charges()) < killAt && waited < 60_000; waited += 20) await new Promise(r => setTimeout(r, 20));
		nodes.get("billing-2")!.kill("SIGKILL");
		const results = await Promise.all(cycles);
		if (process.env.DEBUG_RENEWALS) console.log("cycles:", results, "charges:", await charges());
		// The killed node's leases expire; the survivors' next cycle catches up what it held.
		await new Promise(r => setTimeout(r, LEASE_MS + 500));
		await Promise.all(["billing-1", "billing-3"].map(nodeID => support.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 })));

		// Assert: the processor's own ledger: one approved charge per card token (one per customer).
		const ledger = await billing
			.collection("sandbox_operations")
			.aggregate([{ $match: { kind: "charge", "outcome.status": "APPROVED", midId: mid.id } }, { $group: { _id: "$cardToken", n: { $sum: 1 } } }])
			.toArray();
		expect(ledger).toHaveLength(CUSTOMERS);
		expect(ledger.filter(g => g.n !== 1)).toEqual([]);
		// The transactions: one SUBSCRIPTION_START per customer.
		const transactions = await billing
			.collection("transactions")
			.aggregate([{ $match: { accountId: account.id, type: "SUBSCRIPTION_START" } }, { $group: { _id: "$customerId", n: { $sum: 1 } } }])
			.toArray();
		expect(transactions).toHaveLength(CUSTOMERS);
		expect(transactions.filter(g => g.n !== 1)).toEqual([]);
		// The schedule moved on once: one period billed, next renewal a month after the first charge, no lease left.
		const customers = await billing.collection("customers").find({ accountId: account.id }).toArray();
		expect(customers).toHaveLength(CUSTOMERS);
		expect(customers.filter(c => c.periodsBilled !== 1 || c.renewalLease !== null || c.status !== "ACTIVE")).toEqual([]);
		expect(customers.filter(c => c.nextRenewalTimestamp.getTime() - c.billingAnchor.getTime() < 27 * 86_400_000)).toEqual([]);
	} finally {
		await client.close();
	}
}, 240_000);
