// Webhooks in a cluster over a real NATS server, as `npm run node` runs it:
// events handed over from another node (as billing's outbox relay does: no
// billing node runs here, so the events are the relay's batches), webhook targets
// read from the accounts node, two notifications nodes sharing the work.
import type { AddressInfo } from "node:net";
import type { ServiceBroker } from "moleculer";
import request from "supertest";
import { createBroker } from "../../../runtime/broker";
import type { ServiceName } from "../../../shared/config";
import { createMerchant } from "../../factories/merchant";
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from "../../factories/webhook-receiver";
import { type TestApp, testEnvironment } from "../../setup/app";
import { type NatsServer, startNats } from "../../setup/nats";
import { deliveriesOf, eventually, handOver, newEvent, setWebhookUrl } from "./webhook-events";

let nats: NatsServer;
let receiver: WebhookReceiver;
const nodes: ServiceBroker[] = [];
let app: TestApp;

async function startNode(services: ServiceName[], nodeID: string): Promise<ServiceBroker> {
	const broker = createBroker(services, { nodeID, logger: false });
	await broker.start();
	nodes.push(broker);
	return broker;
}

beforeAll(async () => {
	nats = await startNats();
	testEnvironment({ env: { TRANSPORTER: nats.url, WEBHOOK_RETRY_BASE_MS: "50" } });
	const gateway = await startNode(["gateway"], "gateway-node");
	await startNode(["accounts"], "accounts-node");
	await startNode(["notifications"], "notifications-a");
	await startNode(["notifications"], "notifications-b");
	await gateway.waitForServices(["accounts", "notifications"], 10_000);
	const server = (gateway.getLocalService("gateway") as unknown as { server: import("node:http").Server }).server;
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	// The factories take an app; here it is the gateway node.
	app = { url, http: () => request(url), broker: gateway, stop: async () => {} };
	receiver = await startWebhookReceiver();
}, 30_000);

afterAll(async () => {
	await Promise.all(nodes.map(node => node.stop()));
	await nats?.stop();
	await receiver?.stop();
});

describe("Webhooks over NATS", () => {
	test("When events are handed over from another node, then both notifications nodes deliver them, each once and signed", async () => {
		// Arrange
		const merchant = await createMerchant(app);
		await setWebhookUrl(app, merchant, receiver.url);
		const events = Array.from({ length: 20 }, () => newEvent(merchant));

		// Act
		const answers = await Promise.all(events.map(event => handOver(app, event)));
		const delivered = await eventually(async () => {
			const list = await deliveriesOf(app, merchant, "DELIVERED");
			expect(list).toHaveLength(20);
			return list;
		});

		// Assert
		expect(answers.every(a => a.accepted === 1)).toBe(true);
		for (const event of events) {
			const [received, ...more] = receiver.requestsFor(event.id);
			expect(more).toEqual([]);
			expect(verifySignature(merchant.webhookSecret, String(received.headers["x-webhook-signature"]), received.rawBody)).toBe(true);
		}
		expect(new Set(delivered.map(d => d.attemptLog[0].node))).toEqual(new Set(["notifications-a", "notifications-b"]));
	});

	test("When the merchant changes the webhook URL, then every notifications node sends the next events to the new one", async () => {
		// Arrange: both nodes have delivered (and so know) the old URL.
		const merchant = await createMerchant(app);
		await setWebhookUrl(app, merchant, receiver.url);
		const before = Array.from({ length: 10 }, () => newEvent(merchant));
		await Promise.all(before.map(event => handOver(app, event)));
		await eventually(async () => expect(await deliveriesOf(app, merchant, "DELIVERED")).toHaveLength(10));
		const newReceiver = await startWebhookReceiver();

		try {
			// Act
			await setWebhookUrl(app, merchant, newReceiver.url);
			const after = Array.from({ length: 10 }, () => newEvent(merchant));
			await Promise.all(after.map(event => handOver(app, event)));
			const delivered = await eventually(async () => {
				const list = await deliveriesOf(app, merchant, "DELIVERED");
				expect(list).toHaveLength(20);
				return list.filter(d => after.some(e => e.id === d.id));
			});

			// Assert
			for (const event of after) {
				expect(newReceiver.requestsFor(event.id)).toHaveLength(1);
				expect(receiver.requestsFor(event.id)).toEqual([]);
			}
			expect(new Set(delivered.map(d => d.attemptLog[0].node))).toEqual(new Set(["notifications-a", "notifications-b"]));
		} finally {
			await newReceiver.stop();
		}
	});
});
