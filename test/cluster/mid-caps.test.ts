// A MID's monthly cap with two checkout nodes and two billing nodes, each
// checkout node and the second billing node a process of its own (`npm run
// node` with SERVICES=checkout or billing) over a real NATS server, the rest
// of the service in this process. Each charge on a capped MID is reserved on
// the MID's counter for the month before it is made
// (services/billing/mid-stats/cap-reservations.ts, docs/disputes.md#routing-weights-and-caps):
// the cap is exact whatever the number of nodes, for checkouts and for
// renewals; a declined checkout gives its reservation back; and a
// reservation whose checkout node died is given back once it is older than
// MID_CAP_REVIEW_MS and the MID is full.
import type { Context, Middleware } from "moleculer";
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { SettleTimedOutRequests } from "../../shared/settle-timed-out-requests";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

/** The checkout nodes running: a killed one is replaced under a new id. */
const running = ["checkout-1", "checkout-2"];
/** Room for this many sales of 9.99 on the capped MID. */
const ROOM = 10;
const BURST = 120;
/** How old a reservation must be before a full MID reviews it (MID_CAP_REVIEW_MS), here. */
const REVIEW_MS = 3000;

let nats: NatsServer;
let app: TestApp;
let client: MongoClient;
const nodes = serviceNodes("checkout");
const billingNodes = serviceNodes("billing");
/** The next card verification of this card number SIGKILLs the checkout node that asked for it. */
let killOnVerify: string | null = null;
let killed: string | null = null;

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The payments service's side: the checkout node dies after it reserved the cap and before its customer is opened. */
const killCaller: Middleware = {
	name: "KillCheckoutOnVerify",
	localAction(next, action) {
		if (action.name !== "payments.saveCard") return next;
		const saveCard = next as unknown as (ctx: Context) => Promise<unknown>;
		return async (ctx: Context<{ card: { pan: string } }>) => {
			if (!killOnVerify || ctx.params.card.pan !== killOnVerify) return saveCard(ctx);
			killOnVerify = null;
			killed = ctx.nodeID!;
			nodes.processes.get(killed)!.kill("SIGKILL");
			throw new Error("the checkout node died before its card was verified");
		};
	},
};

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, REQUEST_TIMEOUT_MS: "3000", MID_CAP_REVIEW_MS: String(REVIEW_MS) },
		services: ["gateway", "accounts", "sessions", "payments", "billing"],
		broker: { nodeID: "support", middlewares: [SettleTimedOutRequests, killCaller] },
	});
	for (const nodeId of running) nodes.start(nodeId);
	billingNodes.start("billing-2");
	await nodes.waitFor(app.broker, running);
	await billingNodes.waitFor(app.broker, ["billing-2"]);
	client = await MongoClient.connect(process.env.MONGO_URL!);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	billingNodes.killAll();
	await client?.close();
	await app?.stop();
	await nats?.stop();
});

/** A shop whose first MID weighs 9 of 10 (most checkouts want it) and has room for `room` sales of 9.99. */
async function cappedShop(room: number): Promise<Shop> {
	const shop = await createShop(app);
	await admin(app)
		.patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.mids[0]}`, {
			weight: 9,
			monthlyCap: { amount: room * 9.99, currency: "EUR" },
		})
		.expect(200);
	return shop;
}

/** Checkouts `concurrency` at a time, each expected to be paid; answers the MID of each. */
async function checkouts(shop: Shop, count: number, concurrency: number): Promise<number[]> {
	const mids: number[] = [];
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < count) {
				next++;
				const res = await submitCheckout(app, shop, { productId: shop.products.charge, email: uniqueEmail() });
				if (res.body.code !== "OK") throw new Error(`checkout: ${res.text}`);
				const [tx] = (await app.http().get(`/api/customer/${res.body.customerId}/transactions`).set(bearer(shop))).body.data;
				mids.push(tx.midId);
			}
		}),
	);
	return mids;
}

const billingDb = () => client.db(databaseNameFor("billing", process.env.MONGO_URL!));

/** The capped MID's counter this month, as billing keeps it. */
async function counter(midId: number): Promise<{ taken: Record<string, number>; reservations: Record<string, unknown> } | null> {
	const docs = billingDb().collection<{ _id: string }>("mid_caps");
	return docs.findOne({ _id: { $regex: `^${midId}:` } }) as never;
}

describe("Monthly caps with two checkout nodes and two billing nodes", () => {
	test("When renewal cycles on two billing nodes at once meet a capped MID, then it renews exactly what its cap has room for", async () => {
		// Arrange: 24 customers on the second MID (the first takes no new checkouts), then the second MID closed, so
		// every renewal must move to the capped one, which has room for 6.
		const [customers, room] = [24, 6];
		const shop = await createShop(app);
		const [capped, other] = shop.mids;
		const setMid = (id: number, body: object) => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${id}`, body).expect(200);
		await setMid(capped, { weight: 0 });
		expect(new Set(await checkouts(shop, customers, 4))).toEqual(new Set([other]));
		await setMid(capped, { weight: 1, monthlyCap: { amount: room * 9.99, currency: "EUR" } });
		await setMid(other, { active: false });

		// Act: a cycle a month ahead on each billing node at once; each renews its own share of the customers first.
		const at = new Date(Date.now() + 32 * 86_400_000).toISOString();
		const reports = await Promise.all(
			["support", "billing-2"].map(nodeID => app.broker.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 })),
		);

		// Assert: exactly `room` renewals on the capped MID; the others declined for want of a MID, no processor asked.
		const renewals = await billingDb().collection("transactions").find({ accountId: shop.accountId, type: "RENEWAL" }).toArray();
		console.log(`Cap with room for ${room} of ${customers} renewals, two billing nodes: ${JSON.stringify(reports)}`);
		expect(new Set(renewals.map(t => t.customerId)).size).toBe(customers);
		const approved = renewals.filter(t => t.status === "APPROVED");
		expect({ approved: approved.length, onCapped: approved.filter(t => t.midId === capped).length }).toEqual({
			approved: room,
			onCapped: room,
		});
		expect(renewals.filter(t => t.declineReason === "merchant_account_unavailable")).toHaveLength(customers - room);
		expect(await counter(capped)).toMatchObject({ taken: { EUR: room * 999 }, reservations: {} });
	}, 180_000);

	test("When declined checkouts, then a burst of checkouts on two nodes meet a capped MID, then it takes exactly its cap, the other sales go to the other MID, and later checkouts none", async () => {
		// Arrange
		const shop = await cappedShop(ROOM);
		const [capped, other] = shop.mids;
		// Declined at the card's verification (the checkout gives its reservation back) or at the charge (billing does).
		for (const card of [CARDS.failsVerification, CARDS.insufficientFunds, CARDS.failsVerification, CARDS.insufficientFunds]) {
			const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });
			expect(res.body.code).not.toBe("OK");
		}

		// Act: a burst, then (both nodes past the time they offer a full MID last) more.
		const burst = await checkouts(shop, BURST, 16);
		await sleep(1500);
		const after = await checkouts(shop, 40, 8);

		// Assert
		const onCapped = burst.filter(mid => mid === capped).length;
		console.log(`Cap of ${ROOM} sales, two checkout nodes, ${BURST} checkouts 16 at a time: ${onCapped} on the capped MID`);
		expect(onCapped).toBe(ROOM);
		expect(burst.filter(mid => mid === other).length).toBe(BURST - ROOM);
		expect(after.filter(mid => mid === capped)).toEqual([]);
		expect(await counter(capped)).toMatchObject({ taken: { EUR: ROOM * 999 }, reservations: {} });
	}, 180_000);

	test("When a checkout node dies after it reserved a capped MID's room, then once the reservation is older than the review age the full MID gives it back, and the MID takes exactly its cap", async () => {
		// Arrange: the shop's first checkout reserves the capped MID (a node's first pick for these MIDs is the heavier),
		// and its node dies before its card is verified.
		const room = 3;
		const shop = await cappedShop(room);
		const [capped, other] = shop.mids;
		killOnVerify = CARDS.mastercard;
		const lost = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.mastercard });
		expect(lost.status).toBe(503);
		expect(killed).not.toBeNull();
		expect(await counter(capped)).toMatchObject({ taken: { EUR: 999 } });
		expect(Object.keys((await counter(capped))!.reservations)).toHaveLength(1);
		// The dead node leaves the registry (heartbeat timeout); a new one takes its place.
		while (app.broker.registry.nodes.get(killed!)?.available) await sleep(200);
		running.splice(running.indexOf(killed!), 1, "checkout-3");
		nodes.start("checkout-3");
		await nodes.waitFor(app.broker, running);
		await sleep(REVIEW_MS);

		// Act: checkouts one at a time, so no other reservation is in flight when the full MID reviews the old one.
		const mids = await checkouts(shop, 2 * room + 4, 1);

		// Assert: the dead checkout's reservation was given back, and the MID sold exactly its cap.
		expect(mids.filter(mid => mid === capped)).toHaveLength(room);
		expect(mids.filter(mid => mid === other)).toHaveLength(room + 4);
		expect(await counter(capped)).toMatchObject({ taken: { EUR: room * 999 }, reservations: {} });
	}, 180_000);
});
