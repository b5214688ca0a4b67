// A capped MID's reservation whose checkout node died before anything
// recorded its charge's outcome (docs/disputes.md#routing-weights-and-caps):
// the checkout node is a process of its own over a real NATS server, the rest
// of the service in this process, whose payments service SIGKILLs the
// checkout node that asks for its card's verification, once: after the
// reservation, before the customer is opened. Nothing settles that
// reservation; once it is older than MID_CAP_REVIEW_MS (3 s here) and the MID
// is full, billing asks the processor about its key, finds nothing moved and
// gives it back, so the MID still sells exactly its cap.
import { MongoClient } from "mongodb";
import { SettleTimedOutRequests } from "../../shared/settle-timed-out-requests";
import { aroundAction } from "../factories/around-action";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, submitCheckout } from "../factories/checkout";
import { capCounter, cappedShop, paidCheckouts } from "../factories/mid-caps";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

/** How old a reservation must be before a full MID reviews it (MID_CAP_REVIEW_MS), here. */
const REVIEW_MS = 3000;

let nats: NatsServer;
let app: TestApp;
let client: MongoClient;
const nodes = serviceNodes("checkout");
/** The next card verification of this card number SIGKILLs the checkout node that asked for it. */
let killOnVerify: string | null = null;
let killed: string | null = null;

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The payments service's side of the kill: the checkout node dies holding its reservation, before its customer is opened. */
const killCaller = aroundAction<{ card: { pan: string } }>("KillCheckoutOnVerify", "payments.saveCard", async (ctx, saveCard) => {
	if (!killOnVerify || ctx.params.card.pan !== killOnVerify) return saveCard(ctx);
	killOnVerify = null;
	killed = ctx.nodeID!;
	nodes.processes.get(killed)!.kill("SIGKILL");
	throw new Error("the checkout node died before its card was verified");
});

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, MID_CAP_REVIEW_MS: String(REVIEW_MS) },
		services: ["gateway", "accounts", "sessions", "payments", "billing"],
		broker: { nodeID: "support", middlewares: [SettleTimedOutRequests, killCaller] },
	});
	nodes.start("checkout-1");
	await nodes.waitFor(app.broker, ["checkout-1"]);
	client = await MongoClient.connect(process.env.MONGO_URL!);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await client?.close();
	await app?.stop();
	await nats?.stop();
});

test("When a checkout node dies after it reserved a capped MID's room, then once the reservation is older than the review age the full MID gives it back, and the MID sells exactly its cap", async () => {
	// Arrange: the shop's first checkout reserves the capped MID (a node's first pick for these MIDs is the heavier),
	// and its node dies before its card is verified.
	const room = 3;
	const shop = await cappedShop(app, room);
	const [capped, other] = shop.mids;
	killOnVerify = CARDS.mastercard;
	const lost = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.mastercard });
	expect(lost.status).toBe(503);
	expect(killed).toBe("checkout-1");
	const left = await capCounter(client, capped);
	expect(left?.taken).toEqual({ EUR: 999 });
	expect(Object.keys(left?.reservations ?? {})).toHaveLength(1);
	// The dead node leaves the registry (heartbeat timeout); a new one takes its place.
	while (app.broker.registry.nodes.get("checkout-1")?.available) await sleep(200);
	nodes.start("checkout-2");
	await nodes.waitFor(app.broker, ["checkout-2"]);
	await sleep(REVIEW_MS);

	// Act: checkouts one at a time, so no other reservation is in flight when the full MID reviews the old one.
	const mids = await paidCheckouts(app, shop, 2 * room + 4, 1);

	// Assert: the dead checkout's reservation was given back, and the MID sold exactly its cap.
	expect(mids.filter(mid => mid === capped)).toHaveLength(room);
	expect(mids.filter(mid => mid === other)).toHaveLength(room + 4);
	expect(await capCounter(client, capped)).toMatchObject({ taken: { EUR: room * 999 }, reservations: {} });
}, 180_000);
