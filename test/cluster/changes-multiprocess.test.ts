// Subscription changes racing renewals on real processes: two billing nodes
// (`npm run node` with SERVICES=billing) over a real NATS server, the rest of
// the service (gateway, checkout, payments...) in this process; one billing
// node SIGKILLed while renewals are charged and `now_prorated` upgrades are
// asked through the HTTP API. Each customer's renewal and change must be
// charged exactly once, and the change's charge must be what its quote said.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { addPeriod } from "../../shared/time";
import { billingNodes, startWithBillingNodes } from "../factories/billing-nodes";
import { createShop, type Shop, submitCheckout } from "../factories/checkout";
import { bearer } from "../factories/merchant";
import type { TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CUSTOMERS = 40;
const LEASE_MS = 3000;
const BILLING_NODES = ["billing-1", "billing-2"];
const MONTHLY = { every: 1, unit: "month" } as const;

let nats: NatsServer;
let app: TestApp;
const nodes = billingNodes();

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const minor = (decimal: string | number) => Math.round(Number(decimal) * 100);

interface ChangeOutcome {
	customerId: number;
	/** The quote the applied change was made by, as the answer named it; null when the answer was lost. */
	quoteId: string | null;
	/** What the answer said was charged, in minor units; null when the answer was lost. */
	charged: number | null;
	/** Every status the change's requests answered, in order. */
	statuses: number[];
}

/**
 * A careful merchant's upgrade to 2 seats: a binding quote, then the change by that quote, retried with the same quote
 * while it answers busy, an error or nothing; a new quote when it is stale (or the period is not renewed yet).
 * Bounded by a deadline well past the recovery sweep's grace period, which settles a change a killed node left behind.
 */
async function upgrade(shop: Shop, customerId: number, deadline: number): Promise<ChangeOutcome> {
	const statuses: number[] = [];
	const post = async (path: string, body: object) => {
		try {
			const res = await app.http().post(path).set(bearer(shop)).timeout(30_000).send(body);
			statuses.push(res.status);
			return res;
		} catch {
			statuses.push(0);
			return null;
		}
	};
	let quoteId: string | null = null;
	while (Date.now() < deadline) {
		if (!quoteId) {
			const quote = await post(`/api/customer/${customerId}/change-quote`, { quantity: 2, mode: "now_prorated" });
			// 409: the period is over and its renewal not made yet (or a renewal is in progress); 5xx: the node is gone.
			if (quote?.status === 200) quoteId = quote.body.quoteId;
			else if (quote?.status === 409 && /already on this product/.test(quote.body.message ?? quote.text))
				return { customerId, quoteId: null, charged: null, statuses };
			else await sleep(150);
			continue;
		}
		const change = await post(`/api/customer/${customerId}/change`, { quantity: 2, mode: "now_prorated", quoteId });
		if (change?.status === 200)
			return { customerId, quoteId: change.body.change.quoteId, charged: minor(change.body.change.charge), statuses };
		const message = String(change?.body?.message ?? change?.text ?? "");
		// An answer lost with the killed node: the same quote again either makes it or says it was used.
		if (change?.status === 409 && /already used/.test(message)) return { customerId, quoteId: null, charged: null, statuses };
		if (change?.status === 409 && /changed or renewed since the quote|has expired/.test(message)) quoteId = null;
		await sleep(150);
	}
	throw new Error(`customer ${customerId}: no change by the deadline (${statuses.join(",")})`);
}

beforeAll(async () => {
	nats = await startNats();
	app = await startWithBillingNodes(nodes, {
		natsUrl: nats.url,
		nodeIds: BILLING_NODES,
		// A change whose node died after its charge was sent is settled by the recovery sweep after its grace period.
		env: {
			RENEWAL_LEASE_MS: String(LEASE_MS),
			RENEWAL_CRON: "0 0 1 1 *",
			REFUND_RECOVERY_GRACE_MS: "12000",
			REFUND_RECOVERY_INTERVAL_MS: "500",
		},
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "notifications", "metrics"],
		requestTimeout: 120_000,
	});
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await nats?.stop();
});

test("When changes race renewals on two billing nodes and one node is SIGKILLed mid-run, then each customer is charged and credited exactly once", async () => {
	// Arrange: customers made by checkout (a monthly CHARGE product, 9.99 charged at once), then moved back a month in
	// the database so their renewal falls due in a few seconds: the proration counts the real time now.
	const shop = await createShop(app);
	const productId = shop.products.charge;
	const customerIds: number[] = [];
	let next = 0;
	await Promise.all(
		Array.from({ length: 4 }, async () => {
			while (next < CUSTOMERS) {
				next++;
				const ok = await submitCheckout(app, shop, { productId });
				expect(ok.status).toBe(200);
				customerIds.push(ok.body.customerId);
			}
		}),
	);
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const payments = client.db(databaseNameFor("payments", process.env.MONGO_URL!));
	const transactions = billing.collection("transactions");
	const due = new Date(Date.now() + 3000);
	const anchor = addPeriod(due, { every: -1, unit: "month" });
	const renewsAt = addPeriod(anchor, MONTHLY);
	await billing
		.collection("customers")
		.updateMany(
			{ _id: { $in: customerIds } as never },
			{ $set: { billingAnchor: anchor, subscriptionTimestamp: anchor, lastTimeBilled: anchor, nextRenewalTimestamp: renewsAt } },
		);
	// Listed in the renewal schedule's hour slot of the new time, as the schedule keeps them (`<slot>#<id mod 8>`).
	const slot = Math.floor(renewsAt.getTime() / 3_600_000) * 3_600_000;
	for (const id of customerIds) {
		await billing
			.collection<{ _id: string; ids: number[] }>("renewal_schedule")
			.updateOne({ _id: `${slot}#${id % 8}` }, { $addToSet: { ids: id } }, { upsert: true });
	}
	await sleep(Math.max(0, renewsAt.getTime() - Date.now()) + 200);
	const count = (type: string) => transactions.countDocuments({ accountId: shop.accountId, type });

	try {
		// Act: the renewal cycle on both nodes, and every customer's upgrade through the API, at once; billing-2 is
		// SIGKILLed as soon as the first changes are made. A customer's change can only follow its renewal (until then its
		// period is over: 409, retried), so the two race for each customer's lease as the renewals go on.
		const started = Date.now();
		const cycles = BILLING_NODES.map(nodeID =>
			app.broker.call("billing.runRenewals", {}, { nodeID, timeout: 120_000 }).catch((err: Error) => err),
		);
		const deadline = Date.now() + 180_000;
		const changes = Promise.all(customerIds.map(id => upgrade(shop, id, deadline)));
		for (let waited = 0; (await count("SUBSCRIPTION_CHANGE")) < 3 && waited < 60_000; waited += 20) await sleep(20);
		const atKill = { renewals: await count("RENEWAL"), changes: await count("SUBSCRIPTION_CHANGE") };
		nodes.processes.get("billing-2")!.kill("SIGKILL");
		await Promise.all(cycles);
		// The killed node's renewal leases expire; the survivor's next cycle renews what it held.
		await sleep(LEASE_MS + 500);
		await app.broker.call("billing.runRenewals", {}, { nodeID: "billing-1", timeout: 120_000 });
		const outcomes = await changes;
		if (process.env.DEBUG_CHANGES) console.log({ atKill, ms: Date.now() - started, outcomes: outcomes.map(o => o.statuses.join(",")) });

		// Assert: one RENEWAL and one SUBSCRIPTION_CHANGE per customer, all approved.
		const rows = await transactions.find({ accountId: shop.accountId }).toArray();
		const of = (customerId: number, type: string) => rows.filter(t => t.customerId === customerId && t.type === type);
		const wrong = customerIds.filter(
			id =>
				of(id, "SUBSCRIPTION_START").length !== 1 ||
				of(id, "RENEWAL").length !== 1 ||
				of(id, "SUBSCRIPTION_CHANGE").length !== 1 ||
				rows.some(t => t.customerId === id && t.status !== "APPROVED"),
		);
		expect(wrong).toEqual([]);
		// Each customer: 2 seats, renewed once, no lease left, the change's quote used.
		const customers = await billing
			.collection("customers")
			.find({ _id: { $in: customerIds } as never })
			.toArray();
		// No lease held: the killed node's, taken for a change it applied, ended after RENEWAL_LEASE_MS (expired is free).
		const held = (c: (typeof customers)[number]) => c.renewalLease !== null && new Date(c.renewalLease.until).getTime() > Date.now();
		expect(customers.filter(c => c.quantity !== 2 || c.periodsBilled !== 2 || held(c) || c.status !== "ACTIVE")).toEqual([]);
		// The processor's own ledger: per card (one per customer) exactly the first charge, the renewal and the change,
		// each key once, at the amounts the transactions recorded.
		const operations = await payments
			.collection<{ _id: string; cardToken: string; amount: number }>("payment_operations")
			.find({ kind: "charge", "outcome.status": "APPROVED", midId: { $in: shop.mids } })
			.toArray();
		const byCard = new Map<string, number>();
		for (const op of operations) byCard.set(op.cardToken, (byCard.get(op.cardToken) ?? 0) + 1);
		expect(customers.filter(c => byCard.get(c.cardToken) !== 3)).toEqual([]);
		expect(byCard.size).toBe(CUSTOMERS);
		const operationOf = new Map(operations.map(op => [op._id, op]));
		expect(rows.filter(t => operationOf.get(t.idempotencyKey)?.amount !== t.amount)).toEqual([]);
		// Money adds up: the renewal is the old plan's full price; the change charged what its quote (and its answer,
		// when one came back) said, by that quote's key. The quote applied is the customer's lastQuoteId: its usedAt may
		// be unset when the node died between the customer's update and the quote's (a retry is refused by lastQuoteId).
		const quotes = await billing
			.collection<{ _id: string; usedAt: Date | null; result: { charged: number } }>("change_quotes")
			.find({ customerId: { $in: customerIds } })
			.toArray();
		expect(quotes.filter(q => q.usedAt && !customers.some(c => c.lastQuoteId === q._id))).toEqual([]);
		const moneyWrong = customers.flatMap(c => {
			const change = of(c._id as unknown as number, "SUBSCRIPTION_CHANGE")[0];
			const renewal = of(c._id as unknown as number, "RENEWAL")[0];
			const quote = quotes.find(q => q._id === c.lastQuoteId);
			const answer = outcomes.find(o => o.customerId === (c._id as unknown as number))!;
			const ok =
				renewal.amount === 999 &&
				quote !== undefined &&
				change.idempotencyKey === `change:${quote._id}` &&
				change.amount === quote.result.charged &&
				change.amount > 0 &&
				(answer.charged === null || (answer.charged === change.amount && answer.quoteId === quote._id));
			return ok ? [] : [{ customer: c._id, renewal: renewal.amount, change: change.amount, quote: quote?.result.charged, answer }];
		});
		expect(moneyWrong).toEqual([]);
		// The kill fell in the middle of the run: changes were still to be made.
		expect(atKill.changes).toBeLessThan(CUSTOMERS);
	} finally {
		await client.close();
	}
}, 300_000);
