// Exactly-once renewals on real processes: billing nodes (`npm run node` with
// SERVICES=billing) over a real NATS server and one shared database server;
// one node SIGKILLed mid-cycle, another SIGTERMed while unsubscribes arrive.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import { type Db, MongoClient } from "mongodb";
import { createBroker } from "../../runtime/broker";
import { databaseNameFor } from "../../shared/db.mixin";
import { billingNodes } from "../factories/billing-nodes";
import { testEnvironment } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CUSTOMERS = Number(process.env.RENEWAL_TEST_CUSTOMERS ?? 2000);
const BILLING_NODES = ["billing-1", "billing-2", "billing-3"];
const LEASE_MS = 3000;

let nats: NatsServer;
let support: ServiceBroker;
const nodes = billingNodes();

/** Subscriptions to a SCHEDULE product with a 1-day trial, through the checkout's own billing steps. */
async function seedCustomers(shop: RenewalShop, count: number, pan = "4242424242424242"): Promise<void> {
	const { accountId, productId, midId } = shop;
	let next = 0;
	const one = async (i: number) => {
		const attemptId = `seed_${accountId}_${i.toString().padStart(6, "0")}`;
		const card = { pan, expiry: "1234", cvc: "123" };
		const verified = await support.call<{ cardToken: string }, object>("payments.saveCard", { midId, attemptId, card });
		const opened = await support.call<{ customerId: number }, object>("billing.openSubscription", {
			accountId,
			attemptId,
			environment: "sandbox",
			product: { id: productId, allowMultipleSubscriptions: true },
			buyer: { email: `renewal-${i}@example.com`, name: "Ada", lastName: "" },
			card: {
				cardToken: verified.cardToken,
				fingerprint: "a".repeat(64),
				bin: pan.slice(0, 6),
				last4: pan.slice(-4),
				brand: "visa",
				expiry: "1234",
			},
			mid: { id: midId, name: "MID" },
			sessionId: "6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f",
			additionalData: null,
		});
		await support.call("billing.firstPayment", {
			customerId: opened.customerId,
			environment: "sandbox",
			attemptId,
			challengeUntil: new Date(Date.now() + 300_000).toISOString(),
			product: {
				billing: "SCHEDULE",
				amountMinor: 499,
				currency: "EUR",
				currencyId: 978,
				trialDays: 1,
				renewal: { every: 1, unit: "month" },
			},
		});
	};
	await Promise.all(
		Array.from({ length: 16 }, async () => {
			while (next < count) await one(next++);
		}),
	);
}

interface RenewalShop {
	accountId: number;
	productId: number;
	midId: number;
}

async function createRenewalShop(): Promise<RenewalShop> {
	const account = await support.call<{ id: number }, object>("accounts.create", { name: "Renewals", environment: "sandbox" });
	const mid = await support.call<{ id: number }, object>("accounts.createMerchantAccount", {
		accountId: account.id,
		name: "MID",
		group: "default",
		cardTypes: ["visa"],
	});
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
	return { accountId: account.id, productId: product.id, midId: mid.id };
}

/** Approved charges in the payments service's own ledger, per card token (one token per customer). */
async function approvedChargesPerCard(payments: Db, midId: number): Promise<Map<string, number>> {
	const groups = await payments
		.collection("payment_operations")
		.aggregate([{ $match: { kind: "charge", "outcome.status": "APPROVED", midId } }, { $group: { _id: "$cardToken", n: { $sum: 1 } } }])
		.toArray();
	return new Map(groups.map(g => [g._id as string, g.n as number]));
}

function exited(child: ChildProcess): Promise<number | null> {
	return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise(resolve => child.once("exit", code => resolve(code)));
}

beforeAll(async () => {
	nats = await startNats();
	testEnvironment({ env: { TRANSPORTER: nats.url, RENEWAL_LEASE_MS: String(LEASE_MS), RENEWAL_CRON: "0 0 1 1 *" } });
	// Everything but billing runs in this process; billing runs in three processes of its own.
	support = createBroker(["accounts", "notifications", "payments", "metrics"], {
		nodeID: "support",
		logger: false,
		requestTimeout: 120_000,
	});
	await support.start();
	for (const name of BILLING_NODES) nodes.start(name);
	await nodes.waitFor(support, BILLING_NODES);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await support?.stop();
	await nats?.stop();
});

test("When one of three billing processes is SIGKILLed mid-cycle, then each of 2,000 due customers is charged exactly once and moved on once", async () => {
	// Arrange
	const shop = await createRenewalShop();
	const seeding = Date.now();
	await seedCustomers(shop, CUSTOMERS);
	if (process.env.DEBUG_RENEWALS) console.log(`seeded ${CUSTOMERS} in ${Date.now() - seeding} ms`);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const charges = () => billing.collection("transactions").countDocuments({ accountId: shop.accountId, type: "SUBSCRIPTION_START" });

	try {
		// Act: the cycle on all three nodes at once; billing-2 is killed once some work is done.
		const at = new Date(Date.now() + 2 * 86_400_000).toISOString();
		const cycles = BILLING_NODES.map(nodeID => support.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 }).catch(err => err));
		// A bounded wait: if the cycles end (or fail) first, the kill simply comes after them.
		const killAt = Math.min(300, Math.floor(CUSTOMERS / 5));
		for (let waited = 0; (await charges()) < killAt && waited < 60_000; waited += 20) await new Promise(r => setTimeout(r, 20));
		nodes.processes.get("billing-2")!.kill("SIGKILL");
		const results = await Promise.all(cycles);
		if (process.env.DEBUG_RENEWALS) console.log("cycles:", results, "charges:", await charges());
		// The killed node's leases expire; the survivors' next cycle catches up what it held.
		await new Promise(r => setTimeout(r, LEASE_MS + 500));
		await Promise.all(["billing-1", "billing-3"].map(nodeID => support.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 })));

		// Assert: the processor's own ledger: one approved charge per card token (one per customer).
		const ledger = await approvedChargesPerCard(client.db(databaseNameFor("payments", process.env.MONGO_URL!)), shop.midId);
		expect(ledger.size).toBe(CUSTOMERS);
		expect([...ledger.values()].filter(n => n !== 1)).toEqual([]);
		// The transactions: one SUBSCRIPTION_START per customer.
		const transactions = await billing
			.collection("transactions")
			.aggregate([
				{ $match: { accountId: shop.accountId, type: "SUBSCRIPTION_START" } },
				{ $group: { _id: "$customerId", n: { $sum: 1 } } },
			])
			.toArray();
		expect(transactions).toHaveLength(CUSTOMERS);
		expect(transactions.filter(g => g.n !== 1)).toEqual([]);
		// The schedule moved on once: one period billed, next renewal a month after the first charge, no lease left.
		const customers = await billing.collection("customers").find({ accountId: shop.accountId }).toArray();
		expect(customers).toHaveLength(CUSTOMERS);
		expect(customers.filter(c => c.periodsBilled !== 1 || c.renewalLease !== null || c.status !== "ACTIVE")).toEqual([]);
		expect(customers.filter(c => c.nextRenewalTimestamp.getTime() - c.billingAnchor.getTime() < 27 * 86_400_000)).toEqual([]);
		// Every charge's TRANSACTION event reached notifications, the killed node's too (the relay's sweep finds them by key).
		const notifications = client.db(databaseNameFor("notifications", process.env.MONGO_URL!));
		const stored = () => notifications.collection("webhook_deliveries").countDocuments({ accountId: shop.accountId, type: "TRANSACTION" });
		for (let waited = 0; (await stored()) < CUSTOMERS && waited < 60_000; waited += 250) await new Promise(r => setTimeout(r, 250));
		expect(await stored()).toBe(CUSTOMERS);
	} finally {
		await client.close();
	}
}, 240_000);

test("When a billing process gets SIGTERM mid-cycle while unsubscribes arrive, then it finishes what it holds and exits 0, the rest is charged once, and no one is charged after their unsubscribe was answered", async () => {
	// Arrange: a fresh node to stop, and billing-3 as the survivor.
	const count = 400;
	nodes.start("billing-4");
	await nodes.waitFor(support, ["billing-3", "billing-4"]);
	const shop = await createRenewalShop();
	await seedCustomers(shop, count);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const customers = billing.collection<{ _id: number; cardToken: string; status: string; periodsBilled: number; renewalLease: unknown }>(
		"customers",
	);
	const charges = () => billing.collection("transactions").countDocuments({ accountId: shop.accountId, type: "SUBSCRIPTION_START" });
	// The last customers in the cycle's order: most are still due when their unsubscribe arrives.
	const leaving = (await customers.find({ accountId: shop.accountId }).sort({ nextRenewalTimestamp: -1 }).limit(40).toArray()).map(
		c => c._id,
	);

	try {
		// Act
		const at = new Date(Date.now() + 2 * 86_400_000).toISOString();
		const cycles = ["billing-3", "billing-4"].map(nodeID => support.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 }));
		for (let waited = 0; (await charges()) < 40 && waited < 60_000; waited += 20) await new Promise(r => setTimeout(r, 20));
		const stopping = nodes.processes.get("billing-4")!;
		stopping.kill("SIGTERM");
		const answeredAt = new Map<number, number>();
		await Promise.all(
			leaving.map(async customerId => {
				const answer = await support.call<{ success: boolean }, object>(
					"billing.unsubscribe",
					{ accountId: shop.accountId, customerId },
					{ nodeID: "billing-3" },
				);
				expect(answer.success).toBe(true);
				answeredAt.set(customerId, Date.now());
			}),
		);
		// The stopped node's cycle answers (it drained rather than died) and the process exits cleanly.
		const reports = await Promise.all(cycles);
		expect(await exited(stopping)).toBe(0);
		await support.call("billing.runRenewals", { at }, { nodeID: "billing-3", timeout: 120_000 });

		// Assert: no lease is left behind.
		const all = await customers.find({ accountId: shop.accountId }).toArray();
		expect(all.filter(c => c.renewalLease !== null)).toEqual([]);
		// Everyone who stayed was charged exactly once, in the ledger and in the transactions.
		const ledger = await approvedChargesPerCard(client.db(databaseNameFor("payments", process.env.MONGO_URL!)), shop.midId);
		const stayed = all.filter(c => !leaving.includes(c._id));
		expect(stayed.filter(c => ledger.get(c.cardToken) !== 1 || c.periodsBilled !== 1 || c.status !== "ACTIVE")).toEqual([]);
		// Whoever left was charged at most once, and never after the answer.
		const left = all.filter(c => leaving.includes(c._id));
		expect(left.filter(c => c.status !== "UNSUBSCRIBED" || (ledger.get(c.cardToken) ?? 0) > 1)).toEqual([]);
		// By the real time the payments ledger recorded each charge (a transaction is dated as of the run's time, ahead).
		const leavingCards = new Map(left.map(c => [c.cardToken, c._id]));
		const leftCharges = (
			await client
				.db(databaseNameFor("payments", process.env.MONGO_URL!))
				.collection("payment_operations")
				.find({ kind: "charge", midId: shop.midId })
				.toArray()
		).filter(op => leavingCards.has(op.cardToken));
		expect(leftCharges.filter(op => op.createdAt.getTime() > answeredAt.get(leavingCards.get(op.cardToken)!)!)).toEqual([]);
		if (process.env.DEBUG_RENEWALS) console.log("drain reports:", reports, "left and charged before leaving:", leftCharges.length);
	} finally {
		await client.close();
	}
}, 180_000);

test("When a declined renewal's retry and card updates with recovery charges, some authenticated by the buyer (3-D Secure), race on two billing processes, then no customer's period is charged twice, and each recovered one exactly once", async () => {
	// Arrange: customers whose cards decline the merchant's charges (insufficient funds), their first charge declined once.
	const count = 120;
	const shop = await createRenewalShop();
	await seedCustomers(shop, count, "4000000000001018");
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const survivors = ["billing-1", "billing-3"];
	const runOn = (days: number) =>
		Promise.all(
			survivors.map(nodeID =>
				support.call("billing.runRenewals", { at: new Date(Date.now() + days * 86_400_000).toISOString() }, { nodeID, timeout: 120_000 }),
			),
		);
	try {
		await runOn(2);
		const customers = await billing.collection("customers").find({ accountId: shop.accountId }).sort({ _id: 1 }).toArray();
		expect(customers.filter(c => c.status !== "ACTIVE" || c.attempts !== 1)).toEqual([]);

		// Act: the retry's cycle on both nodes while half the customers give a card that is approved, through either node.
		// Every other one's card is one the issuer asks to authenticate (the sandbox's challenge card): the buyer completes
		// the challenge, and the frame's continuation reaches both nodes at once (two tabs).
		const updating = customers.filter((_, i) => i % 2 === 0);
		type UpdateAnswer = { outcome?: string; error?: string; challengeUrl?: string };
		const updates = updating.map(async (customer, i): Promise<UpdateAnswer> => {
			const attemptId = `cu_race_${customer._id}`;
			const pan = i % 2 === 0 ? "4000000000003220" : "4242424242424242";
			const { cardToken } = await support.call<{ cardToken: string }, object>("payments.saveCard", {
				midId: shop.midId,
				attemptId,
				card: { pan, expiry: "1234", cvc: "123" },
			});
			const fingerprint = Number(customer._id).toString(16).padStart(64, "b");
			const answer = await support.call<UpdateAnswer, object>(
				"billing.updateCard",
				{
					accountId: shop.accountId,
					customerId: customer._id,
					attemptId,
					card: { cardToken, fingerprint, bin: pan.slice(0, 6), last4: pan.slice(-4), brand: "visa", expiry: "1234" },
					mid: { id: shop.midId, name: "MID" },
					// No card update session: the update is called directly, so there is none to release.
					sessionId: randomUUID(),
					challengeUntil: new Date(Date.now() + 300_000).toISOString(),
				},
				{ nodeID: survivors[i % 2], timeout: 120_000 },
			);
			if (answer.outcome !== "AWAITING_BUYER") return answer;
			const challengeId = new URL(answer.challengeUrl!, "http://x").searchParams.get("challenge");
			await support.call("payments.sandboxChallenge", { challengeId, result: "complete" });
			const continued = await Promise.all(
				survivors.map(nodeID =>
					support.call<UpdateAnswer, object>("billing.continueCardUpdate", { customerId: customer._id, attemptId }, { nodeID }),
				),
			);
			expect(continued.map(c => c.outcome)).toEqual([continued[0].outcome, continued[0].outcome]);
			return { ...continued[0], challengeUrl: answer.challengeUrl };
		});
		const [, answers] = await Promise.all([runOn(3.1), Promise.all(updates)]);
		// The challenge was asked wherever the update got the customer first (a busy one asks nothing).
		expect(answers.filter((a, i) => i % 2 === 0 && a.error !== "BUSY" && !a.challengeUrl)).toEqual([]);

		// Assert: per customer, at most one approved charge in the processor's own ledger and in the transactions;
		// exactly one for each update that answered RECOVERED, which left the customer ACTIVE with attempts 0.
		const approved = await billing
			.collection("transactions")
			.aggregate([{ $match: { accountId: shop.accountId, status: "APPROVED" } }, { $group: { _id: "$customerId", n: { $sum: 1 } } }])
			.toArray();
		expect(approved.filter(g => g.n !== 1)).toEqual([]);
		const ledger = await client
			.db(databaseNameFor("payments", process.env.MONGO_URL!))
			.collection("payment_operations")
			.aggregate([
				{ $match: { kind: "charge", "outcome.status": "APPROVED", midId: shop.midId } },
				{ $group: { _id: "$cardToken", n: { $sum: 1 } } },
			])
			.toArray();
		expect(ledger.filter(g => g.n !== 1)).toEqual([]);
		const recovered = updating.filter((_, i) => answers[i].outcome === "RECOVERED").map(c => c._id);
		expect(recovered.length + updating.filter((_, i) => answers[i].error === "BUSY").length).toBe(updating.length);
		expect(new Set(approved.map(g => g._id))).toEqual(new Set(recovered));
		const after = await billing
			.collection("customers")
			.find({ _id: { $in: recovered } })
			.toArray();
		expect(after.filter(c => c.status !== "ACTIVE" || c.attempts !== 0 || c.renewalLease !== null)).toEqual([]);
		// The others were retried once on the nodes: a second decline each, no lease left.
		const others = await billing
			.collection("customers")
			.find({ accountId: shop.accountId, _id: { $nin: recovered } })
			.toArray();
		expect(others.filter(c => c.attempts !== 2 || c.renewalLease !== null)).toEqual([]);
	} finally {
		await client.close();
	}
}, 240_000);
