// Several notifications nodes share one deliveries collection: each claims a
// due delivery with one atomic update and a lease, so under load every event
// still reaches the receiver exactly once (when nothing fails). The events are
// handed over on both nodes as billing's outbox relay does, one batch each.
import type { ServiceBroker } from "moleculer";
import { createBroker } from "../../../runtime/broker";
import { createMerchant } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { deliveriesOf, eventually, newEvent, setWebhookUrl, type TestEvent } from "./webhook-events";

let app: TestApp;
let secondNode: ServiceBroker;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50" }, broker: { nodeID: "node-1" } });
	// A second node on the same databases (startApp set MONGO_URL). No transporter: it
	// shares only the collection, and runs accounts too so it can read webhook targets.
	secondNode = createBroker(["accounts", "notifications"], { logger: false, nodeID: "node-2" });
	await secondNode.start();
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	await secondNode.stop();
	await app.stop();
	await receiver.stop();
});

describe("Two notifications nodes", () => {
	test("When 50 events are handed over in parallel on both nodes, then each reaches the receiver exactly once", async () => {
		// Arrange
		const merchant = await createMerchant(app);
		await setWebhookUrl(app, merchant, receiver.url);
		const events: TestEvent[] = Array.from({ length: 50 }, () => newEvent(merchant));

		// Act
		await Promise.all(events.map((event, i) => (i % 2 ? secondNode : app.broker).call("notifications.enqueueAll", { events: [event] })));
		await receiver.waitForRequests(50, 20_000);
		const deliveries = await eventually(async () => {
			const list = await deliveriesOf(app, merchant, "DELIVERED");
			expect(list).toHaveLength(50);
			return list;
		});
		// Late duplicates would arrive now.
		await new Promise(r => setTimeout(r, 1000));

		// Assert
		expect(receiver.requests).toHaveLength(50);
		for (const event of events) expect(receiver.requestsFor(event.id)).toHaveLength(1);
		expect(deliveries.every(d => d.attempts === 1)).toBe(true);
		const nodes = new Set(deliveries.map(d => d.attemptLog[0].node));
		expect([...nodes].sort()).toEqual(["node-1", "node-2"]);
	});
});
