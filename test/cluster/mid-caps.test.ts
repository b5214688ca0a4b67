// A MID's monthly cap with two checkout nodes and two billing nodes, each
// checkout node and the second billing node a process of its own (`npm run
// node` with SERVICES=checkout or billing) over a real NATS server, the rest
// of the service in this process. Each charge on a capped MID is reserved on
// the MID's counter for the month before it is made
// (services/billing/mid-stats/cap-reservations.ts, docs/disputes.md#routing-weights-and-caps):
// the cap is exact whatever the number of nodes, for checkouts and for
// renewals, and a declined checkout gives its reservation back. A
// reservation whose node died: mid-cap-crash.test.ts.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, submitCheckout } from "../factories/checkout";
import { admin } from "../factories/merchant";
import { capCounter, cappedShop, paidCheckouts } from "../factories/mid-caps";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CHECKOUT_NODES = ["checkout-1", "checkout-2"];
/** Room for this many sales of 9.99 on the capped MID. */
const ROOM = 10;
const BURST = 120;

let nats: NatsServer;
let app: TestApp;
let client: MongoClient;
const checkoutNodes = serviceNodes("checkout");
const billingNodes = serviceNodes("billing");

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url },
		services: ["gateway", "accounts", "sessions", "payments", "billing"],
		broker: { nodeID: "support" },
	});
	for (const nodeId of CHECKOUT_NODES) checkoutNodes.start(nodeId);
	billingNodes.start("billing-2");
	await checkoutNodes.waitFor(app.broker, CHECKOUT_NODES);
	await billingNodes.waitFor(app.broker, ["billing-2"]);
	client = await MongoClient.connect(process.env.MONGO_URL!);
}, 90_000);

afterAll(async () => {
	checkoutNodes.killAll();
	billingNodes.killAll();
	await client?.close();
	await app?.stop();
	await nats?.stop();
});

describe("Monthly caps with two checkout nodes and two billing nodes", () => {
	test("When renewal cycles on two billing nodes at once meet a capped MID, then it renews exactly what its cap has room for", async () => {
		// Arrange: 24 customers on the second MID (the first takes no new checkouts), then the second MID closed, so
		// every renewal must move to the first, capped with room for 6.
		const [customers, room] = [24, 6];
		const shop = await createShop(app);
		const [capped, other] = shop.mids;
		const setMid = (id: number, body: object) => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${id}`, body).expect(200);
		await setMid(capped, { weight: 0 });
		expect(new Set(await paidCheckouts(app, shop, customers, 4))).toEqual(new Set([other]));
		await setMid(capped, { weight: 1, monthlyCap: { amount: room * 9.99, currency: "EUR" } });
		await setMid(other, { active: false });

		// Act: a cycle a month ahead on each billing node at once; each renews its own share of the customers first.
		const at = new Date(Date.now() + 32 * 86_400_000).toISOString();
		const reports = await Promise.all(
			["support", "billing-2"].map(nodeID => app.broker.call("billing.runRenewals", { at }, { nodeID, timeout: 120_000 })),
		);

		// Assert: exactly `room` renewals on the capped MID; the others declined for want of a MID, no processor asked.
		const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
		const renewals = await billing.collection("transactions").find({ accountId: shop.accountId, type: "RENEWAL" }).toArray();
		console.log(`Cap with room for ${room} of ${customers} renewals, two billing nodes: ${JSON.stringify(reports)}`);
		expect(new Set(renewals.map(t => t.customerId)).size).toBe(customers);
		const approved = renewals.filter(t => t.status === "APPROVED");
		expect({ approved: approved.length, onCapped: approved.filter(t => t.midId === capped).length }).toEqual({
			approved: room,
			onCapped: room,
		});
		expect(renewals.filter(t => t.declineReason === "merchant_account_unavailable")).toHaveLength(customers - room);
		expect(await capCounter(client, capped)).toMatchObject({ taken: { EUR: room * 999 }, reservations: {} });
	}, 180_000);

	test("When declined checkouts, then a burst of checkouts on two nodes meet a capped MID, then it takes exactly its cap, the other sales go to the other MID, and later checkouts none", async () => {
		// Arrange
		const shop = await cappedShop(app, ROOM);
		const [capped, other] = shop.mids;
		// Declined at the card's verification (the checkout gives its reservation back) or at the charge (billing does).
		for (const card of [CARDS.failsVerification, CARDS.insufficientFunds, CARDS.failsVerification, CARDS.insufficientFunds]) {
			const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });
			expect(res.body.code).not.toBe("OK");
		}

		// Act: a burst, then (both nodes past the time they offer a full MID last) more.
		const burst = await paidCheckouts(app, shop, BURST, 16);
		await new Promise(r => setTimeout(r, 1500));
		const after = await paidCheckouts(app, shop, 40, 8);

		// Assert
		const onCapped = burst.filter(mid => mid === capped).length;
		console.log(`Cap of ${ROOM} sales, two checkout nodes, ${BURST} checkouts 16 at a time: ${onCapped} on the capped MID`);
		expect(onCapped).toBe(ROOM);
		expect(burst.filter(mid => mid === other).length).toBe(BURST - ROOM);
		expect(after.filter(mid => mid === capped)).toEqual([]);
		expect(await capCounter(client, capped)).toMatchObject({ taken: { EUR: ROOM * 999 }, reservations: {} });
	}, 180_000);
});
