// Webhook delivery end to end: events of checkouts and unsubscribes made
// through HTTP (or handed over as billing's outbox relay does, for shapes no
// flow makes at will), the real services, and a real HTTP receiver on
// 127.0.0.1 (sandbox accounts may use loopback addresses).
import { randomUUID } from "node:crypto";
import { createShop, type Shop } from "../../factories/checkout";
import { bearer, DAY_MS } from "../../factories/merchant";
import { setWallClock } from "../../factories/wall-clock";
import { type Envelope, startWebhookReceiver, verifySignature, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { deliveriesOf, deliveryOf, eventually, handOver, newEvent, sale, setWebhookUrl, unsubscribe } from "./webhook-events";

let app: TestApp;
let receiver: WebhookReceiver;
let merchant: Shop;

beforeAll(async () => {
	// Retries after tens of ms instead of seconds; a timeout short enough to wait for.
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_TIMEOUT_MS: "1000" } });
});
afterAll(() => app.stop());

beforeEach(async () => {
	receiver = await startWebhookReceiver();
	merchant = await createShop(app);
	await setWebhookUrl(app, merchant, receiver.url);
});
afterEach(() => receiver.stop());

describe("Delivering an event", () => {
	test("When a checkout converts a customer, then the receiver gets the JSON envelope with the documented headers and a signature that verifies", async () => {
		// Act
		const { customerId, conversion: event } = await sale(app, merchant);
		const [request] = await eventually(() => {
			expect(receiver.requestsFor(event.id)).toHaveLength(1);
			return receiver.requestsFor(event.id);
		});

		// Assert
		expect(request.method).toBe("POST");
		expect(request.path).toBe("/webhooks");
		expect(request.rawBody).toBe(JSON.stringify(event));
		expect(event).toMatchObject({ type: "CONVERSION", accountId: merchant.accountId, customerId, transaction_id: expect.any(Number) });
		expect(request.headers).toMatchObject({
			"content-type": "application/json",
			"user-agent": "payment-service-webhooks/1.0",
			"x-webhook-id": event.id,
			"x-webhook-signature": expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/),
		});
		expect(verifySignature(merchant.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(true);
		expect(verifySignature("another-secret", String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(false);
		expect(
			verifySignature(merchant.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody.replace("ACTIVE", "PENDING")),
		).toBe(false);
		const delivery = await eventually(async () => {
			const d = await deliveryOf(app, merchant, event.id);
			expect(d.status).toBe("DELIVERED");
			return d;
		});
		expect(delivery).toMatchObject({
			type: "CONVERSION",
			attempts: 1,
			lastError: null,
			nextAttemptAt: null,
			createdAt: event.createdAt,
			deliveredAt: expect.any(String),
		});
		expect(delivery.attemptLog).toEqual([
			{ attempt: 1, node: expect.any(String), time: expect.any(String), statusCode: 200, latencyMs: expect.any(Number), error: null },
		]);
	});

	test("When the event has no transaction (an unsubscribe), then the envelope leaves transaction_id out", async () => {
		const { customerId } = await sale(app, merchant);

		const event = await unsubscribe(app, merchant, customerId);
		const [request] = await eventually(() => {
			expect(receiver.requestsFor(event.id)).toHaveLength(1);
			return receiver.requestsFor(event.id);
		});

		expect(Object.keys(JSON.parse(request.rawBody))).toEqual(["id", "type", "createdAt", "accountId", "customerId", "data"]);
	});

	// How soon (the issue asks for under 1 s) is measured by the webhook-delay benchmark, not asserted here.
	test("When a checkout writes its events, then their first attempts are made without any other trigger", async () => {
		// Act
		const { transaction, conversion, invoice } = await sale(app, merchant);
		const requests = await receiver.waitForRequests(3);

		// Assert
		expect(requests.map(r => r.headers["x-webhook-id"]).sort()).toEqual([transaction.id, conversion.id, invoice.id].sort());
	});

	// A first hand-over is not looked up before it is listed (resent: false); a sweep's is (resent: true).
	test.each([
		["as a first hand-over", false],
		["as a sweep's", true],
	])(
		"When billing hands the same event over again %s, then it is stored and sent once, and listed once in the events API",
		async (_, resent) => {
			// Arrange
			const event = newEvent(merchant);
			const hand = () => app.broker.call("notifications.enqueueAll", { events: [event], resent });

			// Act: the outbox relay retrying, at once and later.
			const answers = await Promise.all([hand(), hand()]);
			await eventually(async () => expect((await deliveryOf(app, merchant, event.id)).status).toBe("DELIVERED"));
			answers.push(await hand());
			await new Promise(r => setTimeout(r, 700));

			// Assert
			expect(answers).toEqual([{ accepted: 1 }, { accepted: 1 }, { accepted: 1 }]);
			expect(receiver.requestsFor(event.id)).toHaveLength(1);
			expect((await deliveryOf(app, merchant, event.id)).attempts).toBe(1);
			for (const path of ["/api/events?limit=100", `/api/events?limit=100&customerId=${event.customerId}`]) {
				const listed = (await app.http().get(path).set(bearer(merchant)).expect(200)).body.data as { id: string }[];
				expect({ path, listed: listed.filter(e => e.id === event.id).length }).toEqual({ path, listed: 1 });
			}
		},
	);
});

describe("Retrying failed deliveries", () => {
	test("When the receiver answers 500 and then 200, then the retry delivers the same bytes and both attempts are logged", async () => {
		// Arrange
		receiver.answer(500);

		// Act: the checkout's first event is the one answered 500.
		await sale(app, merchant);
		const [failed] = await receiver.waitForRequests(1);
		const event = { id: String(failed.headers["x-webhook-id"]) };
		const delivery = await eventually(async () => {
			const d = await deliveryOf(app, merchant, event.id);
			expect(d.status).toBe("DELIVERED");
			return d;
		});

		// Assert
		expect(delivery.attempts).toBe(2);
		expect(delivery.attemptLog.map(a => [a.attempt, a.statusCode, a.error])).toEqual([
			[1, 500, "HTTP 500"],
			[2, 200, null],
		]);
		const [first, second] = receiver.requestsFor(event.id);
		expect(second.rawBody).toBe(first.rawBody);
		expect(verifySignature(merchant.webhookSecret, String(second.headers["x-webhook-signature"]), second.rawBody)).toBe(true);
	});

	test("When the receiver is down, then the events wait as PENDING and every one arrives once it is back", async () => {
		// Arrange
		await receiver.stop();

		// Act
		const events: Envelope[] = [];
		for (let i = 0; i < 3; i++) {
			const { transaction, conversion, invoice } = await sale(app, merchant);
			events.push(transaction, conversion, invoice);
		}
		await eventually(async () => {
			for (const event of events) {
				const d = await deliveryOf(app, merchant, event.id);
				expect(d).toMatchObject({ status: "PENDING", lastError: expect.stringContaining("ECONNREFUSED") });
			}
		});
		const failing = await deliveriesOf(app, merchant, "FAILED");
		await receiver.start();

		// Assert
		expect(failing.map(d => d.id).sort()).toEqual(events.map(e => e.id).sort());
		await eventually(async () => {
			for (const event of events) expect((await deliveryOf(app, merchant, event.id)).status).toBe("DELIVERED");
		}, 20_000);
		for (const event of events) expect(receiver.requestsFor(event.id)).toHaveLength(1);
	});

	test("When the receiver is slower than WEBHOOK_TIMEOUT_MS, then the attempt fails as a timeout and a later one delivers once it is fast", async () => {
		// Arrange
		receiver.delay(2000);

		// Act
		const { conversion: event } = await sale(app, merchant);
		await eventually(async () => expect((await deliveryOf(app, merchant, event.id)).lastError).toBe("timeout after 1000 ms"));
		receiver.delay(0);

		// Assert
		const delivery = await eventually(async () => {
			const d = await deliveryOf(app, merchant, event.id);
			expect(d.status).toBe("DELIVERED");
			return d;
		});
		expect(delivery.attemptLog[0]).toMatchObject({ statusCode: null, error: "timeout after 1000 ms" });
		expect(delivery.attemptLog.at(-1)).toMatchObject({ statusCode: 200, error: null });
	});

	test("When the receiver answers with a redirect, then it is not followed and the attempt counts as failed", async () => {
		// Arrange
		const elsewhere = await startWebhookReceiver();
		receiver.answer(302);
		receiver.redirectTo(elsewhere.url);

		try {
			// Act: the checkout's first event is the one redirected.
			await sale(app, merchant);
			const [first] = await receiver.waitForRequests(1);
			const event = { id: String(first.headers["x-webhook-id"]) };
			const delivery = await eventually(async () => {
				const d = await deliveryOf(app, merchant, event.id);
				expect(d.status).toBe("DELIVERED");
				return d;
			});

			// Assert
			expect(delivery.attemptLog[0]).toMatchObject({ statusCode: 302, error: "HTTP 302: redirects are not followed" });
			expect(elsewhere.requests).toEqual([]);
		} finally {
			await elsewhere.stop();
		}
	});
});

describe("Accounts without a webhook URL", () => {
	test("When the account has no webhook URL, then its events wait with no attempt, and are sent oldest first once a URL is set", async () => {
		// Arrange: checkouts a day ago, a second apart, made out of order.
		const withoutUrl = await createShop(app);
		const dayAgo = Date.now() - DAY_MS;
		const events: Envelope[] = [];
		try {
			for (const second of [3, 1, 4, 0, 2]) {
				setWallClock(dayAgo + second * 1000);
				const { transaction, conversion, invoice } = await sale(app, withoutUrl);
				events.push(transaction, conversion, invoice);
			}
		} finally {
			jest.useRealTimers();
		}

		// Act: well past several retry delays (50 ms doubling) without a URL, then a URL.
		await eventually(async () => expect((await deliveriesOf(app, withoutUrl, "WAITING")).length).toBe(events.length));
		await new Promise(resolve => setTimeout(resolve, 1500));
		const waiting = await deliveriesOf(app, withoutUrl);
		await setWebhookUrl(app, withoutUrl, receiver.url);

		// Assert
		expect(waiting.map(d => [d.status, d.attempts, d.attemptLog.length, d.nextAttemptAt])).toEqual(
			events.map(() => ["WAITING", 0, 0, null]),
		);
		const sent = (await receiver.waitForRequests(events.length)).map(r => JSON.parse(r.rawBody) as Envelope);
		expect(sent.map(e => e.createdAt)).toEqual(events.map(e => e.createdAt).sort());
		expect(sent.map(e => e.id).sort()).toEqual(events.map(e => e.id).sort());
		for (const request of receiver.requests)
			expect(verifySignature(withoutUrl.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(true);
		await eventually(async () =>
			expect((await deliveriesOf(app, withoutUrl, "DELIVERED")).map(d => d.attempts)).toEqual(events.map(() => 1)),
		);
	});

	test("When an event waited longer than the waiting window (30 days), then setting a URL does not send it: it is DEAD saying why", async () => {
		// Arrange: a checkout 31 days ago and one 29 days ago, while the account had no URL.
		const withoutUrl = await createShop(app);
		const started = Date.now();
		let old: Envelope;
		let recent: Envelope;
		try {
			setWallClock(started - 31 * DAY_MS);
			({ conversion: old } = await sale(app, withoutUrl));
			setWallClock(started - 29 * DAY_MS);
			({ conversion: recent } = await sale(app, withoutUrl));
		} finally {
			jest.useRealTimers();
		}
		await eventually(async () => expect((await deliveriesOf(app, withoutUrl, "WAITING")).length).toBe(6));

		// Act
		await setWebhookUrl(app, withoutUrl, receiver.url);

		// Assert
		await eventually(async () => expect((await deliveryOf(app, withoutUrl, recent.id)).status).toBe("DELIVERED"));
		expect(await deliveryOf(app, withoutUrl, old.id)).toMatchObject({
			status: "DEAD",
			attempts: 0,
			lastError: "no webhook URL within 30 days of the event",
		});
		expect(receiver.requestsFor(old.id)).toEqual([]);
		expect(receiver.requestsFor(recent.id)).toHaveLength(1);
	});

	test("When the URL is removed, then the next events wait again instead of being attempted", async () => {
		// Arrange
		await setWebhookUrl(app, merchant, null);

		// Act
		const { transaction, conversion } = await sale(app, merchant);

		// Assert
		for (const event of [transaction, conversion])
			await eventually(async () =>
				expect(await deliveryOf(app, merchant, event.id)).toMatchObject({ status: "WAITING", attempts: 0, attemptLog: [] }),
			);
		expect(receiver.requests).toEqual([]);
	});
});

describe("notifications.enqueueAll (billing's outbox relay)", () => {
	test.each([
		["an unknown type", { type: "PAYOUT" }],
		["an id that is not a UUID", { id: "evt_1" }],
		["a createdAt with a zone", { createdAt: "2026-11-22T14:03:05.123Z" }],
		["an unknown property", { extra: 1 }],
	])("When the event has %s, then it is refused and nothing is stored", async (_, overrides) => {
		const event = { ...newEvent(merchant), ...overrides };

		const call = handOver(app, event as never);

		await expect(call).rejects.toMatchObject({ name: "ValidationError" });
		expect(await deliveriesOf(app, merchant)).toEqual([]);
	});

	test("When the event id is upper-case, then it is stored and sent lower-case", async () => {
		const id = randomUUID();

		await handOver(app, newEvent(merchant, { id: id.toUpperCase() }));
		const [request] = await receiver.waitForRequests(1);

		expect(request.headers["x-webhook-id"]).toBe(id);
		expect(JSON.parse(request.rawBody).id).toBe(id);
	});
});
