// The outbox sweep (services/billing/outbox/outbox-sweep.ts) while metrics is down, with more listings due than one
// enqueue takes (ENQUEUE_BATCH): a relay of events carrying metrics entries then fails at metrics.apply after they were
// enqueued, so they stay listed and every sweep starts again at the same first batch. An event whose own relay lost its enqueue
// (a NATS server killed mid-request: CI's nats-cluster failure) is listed after that batch; it must still go out.

import type { BillingDeps } from "../../../services/billing/deps";
import { ENQUEUE_BATCH } from "../../../services/billing/outbox/relay-events";
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import { aroundAction } from "../../factories/around-action";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

/** The sweep's bound for an event a relay missed (outbox-sweep.ts: 8 s), with room for a busy machine. */
const SWEPT_WITHIN_MS = 20_000;
/** Checkouts sent at once while the listings pile up. */
const AT_ONCE = 4;

let app: TestApp;
let receiver: WebhookReceiver;
let shop: Shop;
let deps: BillingDeps;
/** From now on the relays that follow each write lose their enqueue before notifications gets it; the sweep's go through. */
let loseRelays = false;

const loseRelayEnqueue = aroundAction<{ events: WebhookEvent[]; resent?: boolean }>(
	"LoseRelayEnqueue",
	"notifications.enqueueAll",
	async (ctx, enqueueAll) => {
		if (loseRelays && !ctx.params.resent) throw new Error("lost with a NATS server");
		return enqueueAll(ctx);
	},
);

beforeAll(async () => {
	// No metrics service, as in the resilience tests: metrics.apply is not found.
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds", "notifications"],
		broker: { middlewares: [loseRelayEnqueue] },
	});
	deps = (app.broker.getLocalService("billing") as unknown as { deps: BillingDeps }).deps;
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
});

afterAll(async () => {
	await app?.stop();
	await receiver?.stop();
});

/** The events listed in the outbox schedule. */
async function listed(): Promise<number> {
	const slots = await deps.db.outboxSchedule.find({ _id: { $ne: "cursor" } }).lean();
	return slots.reduce((sum, slot) => sum + slot.ids.length, 0);
}

async function checkout(): Promise<number> {
	const res = await submitCheckout(app, shop, { productId: shop.products.charge });
	expect(res.body.code).toBe("OK");
	return res.body.customerId as number;
}

const transactionWebhook = (customerId: number) =>
	receiver.requests.some(r => {
		const event = JSON.parse(r.rawBody) as { type: string; customerId: number };
		return event.type === "TRANSACTION" && event.customerId === customerId;
	});

test("When more events wait in the outbox than one enqueue takes because metrics is down, and a checkout's relay loses its enqueue, then the sweep still sends its TRANSACTION webhook", async () => {
	// Arrange: more listings due than one batch, each still waiting (its relay enqueued it, then failed at metrics.apply).
	while ((await listed()) <= ENQUEUE_BATCH) await Promise.all(Array.from({ length: AT_ONCE }, checkout));

	// Act: a checkout whose relay loses its enqueue: only the sweep can send its events, listed after the first batch.
	loseRelays = true;
	const customerId = await checkout();
	for (const deadline = Date.now() + SWEPT_WITHIN_MS; !transactionWebhook(customerId) && Date.now() < deadline; )
		await new Promise(r => setTimeout(r, 200));

	// Assert
	expect({ customerId, transactionWebhook: transactionWebhook(customerId) }).toEqual({ customerId, transactionWebhook: true });
}, 180_000);
