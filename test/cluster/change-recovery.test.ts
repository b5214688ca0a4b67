// A change whose billing node dies around its charge (services/billing/changes/change-recovery.ts): two billing
// nodes as real processes over a real NATS server, the rest of the service in this process. The payments service here
// SIGKILLs the billing node that asks for a change's charge, once: after the sandbox processor approved it (the
// node never learns it) or before the processor is asked. The merchant does not retry. The other node's recovery
// sweep must settle the change by the processor's answer to its key: applied once, or nothing changed.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { SettleTimedOutRequests } from "../../shared/settle-timed-out-requests";
import { aroundAction } from "../factories/around-action";
import { billingNodes } from "../factories/billing-nodes";
import { createShop, type Shop, submitCheckout } from "../factories/checkout";
import { bearer } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

/** The billing nodes running: a killed one is replaced by a new one under a new id. */
const running = ["billing-1", "billing-2"];
let started = running.length;

let nats: NatsServer;
let app: TestApp;
let shop: Shop;
let client: MongoClient;
const nodes = billingNodes();
/** When the next change's charge kills the node that asked for it: after the processor's answer, or before. */
let killNext: "after" | "before" | null = null;
let killed: string | null = null;

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The payments service's side of the kill: the caller is SIGKILLed, the processor's answer goes nowhere. */
const killCaller = aroundAction<{ idempotencyKey: string }>("KillChangeCaller", "payments.charge", async (ctx, charge) => {
	const when = ctx.params.idempotencyKey.startsWith("change:") ? killNext : null;
	if (!when) return charge(ctx);
	killNext = null;
	const kill = () => {
		killed = ctx.nodeID!;
		nodes.processes.get(killed)!.kill("SIGKILL");
	};
	if (when === "before") {
		kill();
		throw new Error("the billing node died before the processor was asked");
	}
	const outcome = await charge(ctx);
	kill();
	return outcome;
});

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: {
			TRANSPORTER: nats.url,
			RENEWAL_LEASE_MS: "3000",
			RENEWAL_CRON: "0 0 1 1 *",
			REQUEST_TIMEOUT_MS: "2000",
			REFUND_RECOVERY_GRACE_MS: "3000",
			REFUND_RECOVERY_INTERVAL_MS: "250",
		},
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "notifications", "metrics"],
		broker: { nodeID: "support", middlewares: [SettleTimedOutRequests, killCaller] },
	});
	for (const name of running) nodes.start(name);
	await nodes.waitFor(app.broker, running);
	shop = await createShop(app);
	client = await MongoClient.connect(process.env.MONGO_URL!);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await client?.close();
	await app?.stop();
	await nats?.stop();
});

const api = {
	get: (path: string) => app.http().get(`/api${path}`).set(bearer(shop)),
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
};
const billingDb = () => client.db(databaseNameFor("billing", process.env.MONGO_URL!));

/** A customer, its binding quote for 2 seats, and its change sent once while the node that takes it dies. */
async function changeWhileNodeDies(when: "after" | "before") {
	// The node killed by an earlier test is replaced once the registry has dropped it (after the heartbeat timeout,
	// a call could still go to it), so either node may take the change.
	if (killed) {
		const gone = killed;
		while (app.broker.registry.nodes.get(gone)?.available) await sleep(200);
		const replacement = `billing-${++started}`;
		running.splice(running.indexOf(gone), 1, replacement);
		nodes.start(replacement);
		await nodes.waitFor(app.broker, running);
	}
	const checkout = await submitCheckout(app, shop, { productId: shop.products.charge });
	expect(checkout.body.code).toBe("OK");
	const id = checkout.body.customerId as number;
	const quote = (await api.post(`/customer/${id}/change-quote`, { quantity: 2, mode: "now_prorated" }).expect(200)).body;
	killed = null;
	killNext = when;
	const lost = await api.post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated", quoteId: quote.quoteId });
	expect(lost.status).toBeGreaterThanOrEqual(500);
	expect(killed).not.toBeNull();
	return { id, quote };
}

/** Waits until the sweep has settled the customer's change in flight. */
async function settled(id: number) {
	const customers = billingDb().collection<{ _id: number; changeInFlight?: unknown }>("customers");
	for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
		const doc = await customers.findOne({ _id: id });
		if (doc && !doc.changeInFlight) return doc;
	}
	throw new Error(`customer ${id}: its change was not settled within 60 s`);
}

const changes = async (id: number) =>
	(await api.get(`/customer/${id}/transactions`).expect(200)).body.data.filter((t: { type: string }) => t.type === "SUBSCRIPTION_CHANGE");

test("When the billing node dies after the processor approved a change's charge and the merchant never retries, then the sweep applies the change once, as quoted", async () => {
	const { id, quote } = await changeWhileNodeDies("after");

	const doc = await settled(id);

	const customer = (await api.get(`/customer/${id}`).expect(200)).body;
	expect(customer).toMatchObject({ quantity: 2, status: "ACTIVE" });
	expect(doc).toMatchObject({ lastQuoteId: quote.quoteId });
	const charged = await changes(id);
	expect(charged).toHaveLength(1);
	expect(charged[0]).toMatchObject({ status: "APPROVED", amount: quote.charge });
	// The processor's own ledger: the change's key charged once.
	const operations = client.db(databaseNameFor("payments", process.env.MONGO_URL!)).collection("payment_operations");
	expect(await operations.countDocuments({ _id: `change:${quote.quoteId}` as never, "outcome.status": "APPROVED" })).toBe(1);
	// The merchant hears of it, and the quote is spent.
	const events = (await api.get(`/events?type=SUBSCRIPTION_CHANGED`).expect(200)).body.data as { customerId: number }[];
	expect(events.filter(e => e.customerId === id)).toHaveLength(1);
	const again = await api.post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated", quoteId: quote.quoteId });
	expect(again.status).toBe(409);
}, 120_000);

test("When the billing node dies before the processor is asked, then the sweep changes nothing, charges nothing and the customer can change again", async () => {
	const { id, quote } = await changeWhileNodeDies("before");

	await settled(id);

	expect((await api.get(`/customer/${id}`).expect(200)).body).toMatchObject({ quantity: 1 });
	expect(await changes(id)).toHaveLength(0);
	const fresh = await api.post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated" });
	expect(fresh.status).toBe(200);
	expect(fresh.body.change.quoteId).not.toBe(quote.quoteId);
	expect(await changes(id)).toHaveLength(1);
}, 120_000);
