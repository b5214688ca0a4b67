// The usage service on real processes (issue 48): two usage nodes (`npm run node` with SERVICES=usage) over a real
// NATS server, the rest of the service in this process. The client sends batches of 1,000 events through the gateway
// and retries each batch, with its same ids, until it is answered 200, as docs/usage.md tells merchants to. This
// process SIGKILLs the usage node a batch was sent to, a moment after sending it, until a kill lands in the middle of
// a batch: its events stored, its aggregates not all updated (the batch still listed in usage_batches, with events
// of its own). The surviving node's sweep finishes that batch, the client's retry finds its events duplicates, and the
// customer's usage must be exactly the distinct events sent: nothing lost, nothing counted twice.
import type { Context, Middleware } from "moleculer";
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer, createPlan } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

let nats: NatsServer;
let app: TestApp;
let mongo: MongoClient;
const nodes = serviceNodes("usage");
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const LEASE_MS = 2000;
/** When a kill comes, as shares of a batch's usual time: the middle of a batch is where its writes are. */
const SHARES = [0.5, 0.7, 0.6, 0.8, 0.4, 0.9, 0.55, 0.75, 0.65, 0.45];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The next usage.ingest call leaving this process is the armed one: its node dies `afterMs` after it is sent. */
const armed: { afterMs: number | null; killed: string | null } = { afterMs: null, killed: null };

const killUsageNode: Middleware = {
	name: "KillUsageNode",
	remoteAction(next, action) {
		if (action.name !== "usage.ingest") return next;
		const handler = next as unknown as (ctx: Context) => Promise<unknown>;
		return (ctx: Context) => {
			const answer = handler(ctx);
			if (armed.afterMs !== null) {
				const node = ctx.nodeID!;
				const delay = armed.afterMs;
				armed.afterMs = null;
				setTimeout(() => {
					armed.killed = node;
					nodes.processes.get(node)?.kill("SIGKILL");
				}, delay);
			}
			return answer;
		};
	},
};

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, RENEWAL_CRON: "0 0 1 1 *", USAGE_BATCH_LEASE_MS: String(LEASE_MS) },
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "notifications"],
		broker: { nodeID: "support", requestTimeout: 10_000, middlewares: [killUsageNode] },
	});
	mongo = await MongoClient.connect(process.env.MONGO_URL!);
	for (const name of ["usage-1", "usage-2"]) nodes.start(name);
	await nodes.waitFor(app.broker, ["usage-1", "usage-2"]);
}, 90_000);

// The app drains what it still waits on from the killed nodes before it stops.
afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await mongo?.close();
	await nats?.stop();
}, 90_000);

const usageDb = () => mongo.db(databaseNameFor("usage", process.env.MONGO_URL!));

/** A batch a killed node left: listed, with some of its events stored. */
async function leftMidway(): Promise<boolean> {
	for (const batch of await usageDb().collection<{ _id: string }>("usage_batches").find({}).toArray())
		if ((await usageDb().collection("usage_events").countDocuments({ batch: batch._id })) > 0) return true;
	return false;
}

/** Sends the batch until it is answered 200 (a dead node's request fails or times out, and is sent again). */
async function sendUntilAnswered(shop: Shop, events: object[]): Promise<{ accepted: number; duplicates: number }> {
	for (;;) {
		const res = await app
			.http()
			.post("/api/usage")
			.set(bearer(shop))
			.send({ events })
			.catch(() => null);
		if (res?.status === 200) return res.body;
		await sleep(200);
	}
}

/** Until the registry has dropped the killed node: no request goes to it after. */
async function forgotten(nodeId: string): Promise<void> {
	for (const deadline = Date.now() + 60_000; app.broker.registry.nodes.get(nodeId)?.available; await sleep(200))
		if (Date.now() > deadline) throw new Error(`${nodeId} is still in the registry`);
}

test("When a usage node is SIGKILLed in the middle of a batch and the client retries it, then every distinct event is counted exactly once", async () => {
	// Arrange
	const shop = await createShop(app);
	await admin(app).post(`/accounts/${shop.accountId}/meters`, { code: "calls", name: "Calls", aggregation: "count" }).expect(201);
	await admin(app)
		.post(`/accounts/${shop.accountId}/meters`, { code: "users", name: "Users", aggregation: "unique_count", property: "user" })
		.expect(201);
	const productId = await createPlan(app, shop, {
		name: "Metered",
		amount: 5,
		usagePrices: [
			{ meter: "calls", model: "per_unit", unitAmount: "0.1" },
			{ meter: "users", model: "per_unit", unitAmount: "100" },
		],
	});
	const customers: number[] = [];
	for (let i = 0; i < 2; i++) {
		const { body } = await submitCheckout(app, shop, { productId, card: CARDS.visa });
		customers.push(body.customerId);
	}
	const batch = (n: number) =>
		Array.from({ length: 1000 }, (_, i) => {
			const customerId = customers[i % 2];
			const timestamp = new Date().toISOString();
			return i % 4 === 0
				? { id: `b${n}-${i}`, customerId, meter: "users", timestamp, properties: { user: `u${(n * 7 + i) % 61}` } }
				: { id: `b${n}-${i}`, customerId, meter: "calls", timestamp };
		});

	// Act: batches one after another; every other one, until a kill lands mid-batch, the node it was sent to dies a
	// share of a batch's time after it was sent (the time the first batches took), and a fresh node replaces it.
	const sent: object[][] = [];
	const took: number[] = [];
	let midway = false;
	let kills = 0;
	for (let n = 0; n < 30 && !(midway && n >= 8); n++) {
		const events = batch(n);
		sent.push(events);
		const killing = !midway && n >= 3 && n % 2 === 1;
		if (killing) Object.assign(armed, { afterMs: Math.round(median(took) * SHARES[kills++ % SHARES.length]), killed: null });
		const start = Date.now();
		const sending = sendUntilAnswered(shop, events);
		if (killing) {
			for (let waited = 0; !armed.killed && waited < 30_000; waited += 10) await sleep(10);
			expect(armed.killed).not.toBeNull();
			midway = await leftMidway();
			await forgotten(armed.killed!);
			const fresh = `usage-${kills + 2}`;
			nodes.start(fresh);
			await nodes.waitFor(app.broker, [fresh]);
		}
		await sending;
		if (!killing) took.push(Date.now() - start);
	}
	// The sweeps finish what a killed node left, once its lease is over.
	for (const deadline = Date.now() + 30_000; (await usageDb().collection("usage_batches").countDocuments()) > 0; await sleep(200))
		if (Date.now() > deadline) throw new Error("a batch is still listed");

	// Assert: a kill landed mid-batch, and each customer's usage is the distinct events sent to it.
	expect(midway).toBe(true);
	const all = sent.flat() as { id: string; customerId: number; meter: string; properties?: { user: string } }[];
	for (const customerId of customers) {
		const mine = all.filter(e => e.customerId === customerId);
		const usage = (await app.http().get(`/api/customer/${customerId}/usage`).set(bearer(shop)).expect(200)).body;
		const quantity = (meter: string) => usage.meters.find((m: { meter: string }) => m.meter === meter).quantity;
		expect(quantity("calls")).toBe(mine.filter(e => e.meter === "calls").length);
		expect(quantity("users")).toBe(new Set(mine.filter(e => e.meter === "users").map(e => e.properties!.user)).size);
	}
}, 300_000);
