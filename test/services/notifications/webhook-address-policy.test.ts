// Production accounts' webhooks reach public addresses only (no SSRF into our
// own network); sandbox accounts may use localhost and private networks. The
// production retry window is shrunk to about 2 s so refused deliveries end.
// A production account's checkout needs a real processor: its events are handed
// over as billing's outbox relay does.
import { refusalOf } from "../../../services/notifications/address-policy";
import { createShop } from "../../factories/checkout";
import { createMerchant } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { type DeliveryView, deliveryOf, eventually, handOver, newEvent, sale, setWebhookUrl } from "./webhook-events";

let app: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_RETRY_HOURS: "0.0005" } });
});
afterAll(() => app.stop());

beforeEach(async () => {
	receiver = await startWebhookReceiver();
});
afterEach(() => receiver.stop());

describe("Webhooks of production accounts", () => {
	test("When the URL is a loopback IP, then the receiver is never reached, lastError says refused, and the delivery ends DEAD", async () => {
		// Arrange
		const live = await createMerchant(app, { environment: "production" });
		await setWebhookUrl(app, live, receiver.url);
		const event = newEvent(live);

		// Act
		await handOver(app, event);
		const dead = await eventually(async () => {
			const d = await deliveryOf(app, live, event.id);
			expect(d.status).toBe("DEAD");
			return d;
		});

		// Assert
		expect(dead.lastError).toBe("refused: 127.0.0.1 is a loopback address");
		expect(dead.attemptLog[0]).toMatchObject({ statusCode: null, error: "refused: 127.0.0.1 is a loopback address" });
		expect(receiver.requests).toEqual([]);
	});

	test.each([
		["a host name resolving to loopback", "localhost", /^refused: (127\.0\.0\.1|::1) is a loopback address$/],
		["an IPv6 loopback literal", "[::1]", /^refused: ::1 is a loopback address$/],
		["an IPv4-mapped IPv6 literal", "[::ffff:127.0.0.1]", /^refused: 127\.0\.0\.1 is a loopback address$/],
		["the unspecified address", "0.0.0.0", /^refused: 0\.0\.0\.0 is an unspecified address$/],
	])("When the URL's host is %s, then the attempt is refused before any request", async (_, host, refusal) => {
		// Arrange
		const live = await createMerchant(app, { environment: "production" });
		await setWebhookUrl(app, live, `http://${host}:${receiver.port}/webhooks`);
		const event = newEvent(live);

		// Act
		await handOver(app, event);
		const delivery: DeliveryView = await eventually(async () => {
			const d = await deliveryOf(app, live, event.id);
			expect(d.lastError).not.toBeNull();
			return d;
		});

		// Assert
		expect(delivery.lastError).toMatch(refusal);
		expect(receiver.requests).toEqual([]);
	});
});

describe("Webhooks of sandbox accounts", () => {
	test("When a sandbox account uses a loopback URL, then it is delivered", async () => {
		const sandbox = await createShop(app, { environment: "sandbox" });
		await setWebhookUrl(app, sandbox, `http://localhost:${receiver.port}/webhooks`);

		const { conversion: event } = await sale(app, sandbox);

		await eventually(async () => expect((await deliveryOf(app, sandbox, event.id)).status).toBe("DELIVERED"));
		expect(receiver.requestsFor(event.id)).toHaveLength(1);
	});
});

describe("The address policy", () => {
	test.each([
		["127.0.0.1", "a loopback address"],
		["10.1.2.3", "a private address"],
		["172.16.0.1", "a private address"],
		["172.31.255.254", "a private address"],
		["192.168.1.1", "a private address"],
		["169.254.169.254", "a link-local address"],
		["100.64.0.1", "a carrier-grade NAT address"],
		["0.0.0.0", "an unspecified address"],
		["224.0.0.1", "a multicast address"],
		["255.255.255.255", "a broadcast address"],
		["::1", "a loopback address"],
		["::", "an unspecified address"],
		["fe80::1", "a link-local address"],
		["fd12:3456::1", "a unique-local address"],
		["ff02::1", "a multicast address"],
	])("When the address is %s, then it is refused as %s", (address, reason) => {
		expect(refusalOf(address)).toBe(`refused: ${address} is ${reason}`);
	});

	test("When an IPv4-mapped IPv6 address hides a private one, then it is judged as the IPv4 address", () => {
		expect(refusalOf("::ffff:192.168.0.1")).toBe("refused: 192.168.0.1 is a private address");
	});

	test.each(["93.184.215.14", "172.32.0.1", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])(
		"When the address is public (%s), then it is allowed",
		address => {
			expect(refusalOf(address)).toBeNull();
		},
	);
});
