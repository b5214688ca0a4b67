// Webhook delivery end to end: events enqueued as billing enqueues them, the
// real services, and a real HTTP receiver on 127.0.0.1 (sandbox accounts may
// use loopback addresses).
import { randomUUID } from "node:crypto";
import { formatDateTime } from "../../../shared/time";
import { bearer, createMerchant, type TestMerchant } from "../../factories/merchant";
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { deliveriesOf, deliveryOf, enqueue, eventually, newEvent, setWebhookUrl } from "./webhook-events";

let app: TestApp;
let receiver: WebhookReceiver;
let merchant: TestMerchant;

beforeAll(async () => {
	// Retries after tens of ms instead of seconds; a timeout short enough to wait for.
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_TIMEOUT_MS: "1000" } });
});
afterAll(() => app.stop());

beforeEach(async () => {
	receiver = await startWebhookReceiver();
	merchant = await createMerchant(app);
	await setWebhookUrl(app, merchant, receiver.url);
});
afterEach(() => receiver.stop());

describe("Delivering an event", () => {
	test("When an event is enqueued, then the receiver gets the JSON envelope with the documented headers and a signature that verifies", async () => {
		// Arrange
		const event = newEvent(merchant, { type: "CONVERSION", transaction_id: 97, data: { customer: { id: 41, status: "ACTIVE" } } });

		// Act
		const answer = await enqueue(app, event);
		const [request] = await receiver.waitForRequests(1);

		// Assert
		expect(answer).toEqual({ accepted: true });
		expect(request.method).toBe("POST");
		expect(request.path).toBe("/webhooks");
		expect(request.rawBody).toBe(
			JSON.stringify({
				id: event.id,
				type: "CONVERSION",
				createdAt: event.createdAt,
				accountId: merchant.accountId,
				customerId: 41,
				transaction_id: 97,
				data: event.data,
			}),
		);
		expect(request.headers).toMatchObject({
			"content-type": "application/json",
			"user-agent": "payment-service-webhooks/1.0",
			"x-webhook-id": event.id,
			"x-webhook-signature": expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/),
		});
		expect(verifySignature(merchant.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(true);
		expect(verifySignature("another-secret", String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(false);
		expect(
			verifySignature(merchant.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody.replace("41", "42")),
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

	test("When the event has no transaction, then the envelope leaves transaction_id out", async () => {
		const event = newEvent(merchant, { type: "CANCELLATION", transaction_id: null });

		await enqueue(app, event);
		const [request] = await receiver.waitForRequests(1);

		expect(Object.keys(JSON.parse(request.rawBody))).toEqual(["id", "type", "createdAt", "accountId", "customerId", "data"]);
	});

	// How soon (the issue asks for under 1 s) is measured by the webhook-delay benchmark, not asserted here.
	test("When an event is enqueued, then its first attempt is made without any other trigger", async () => {
		// Act
		const event = newEvent(merchant);
		await enqueue(app, event);
		const [request] = await receiver.waitForRequests(1);

		// Assert
		expect(request.headers["x-webhook-id"]).toBe(event.id);
	});

	test("When the same event is enqueued again, then it is stored and sent once, and listed once in the events API", async () => {
		// Arrange
		const event = newEvent(merchant);

		// Act: a sender retrying, at once and later.
		const answers = await Promise.all([enqueue(app, event), enqueue(app, event)]);
		await eventually(async () => expect((await deliveryOf(app, merchant, event.id)).status).toBe("DELIVERED"));
		answers.push(await enqueue(app, event));
		await new Promise(r => setTimeout(r, 700));

		// Assert
		expect(answers).toEqual([{ accepted: true }, { accepted: true }, { accepted: true }]);
		expect(receiver.requestsFor(event.id)).toHaveLength(1);
		expect((await deliveryOf(app, merchant, event.id)).attempts).toBe(1);
		for (const path of ["/api/events?limit=100", `/api/events?limit=100&customerId=${event.customerId}`]) {
			const listed = (await app.http().get(path).set(bearer(merchant)).expect(200)).body.data as { id: string }[];
			expect({ path, listed: listed.filter(e => e.id === event.id).length }).toEqual({ path, listed: 1 });
		}
	});
});

describe("Retrying failed deliveries", () => {
	test("When the receiver answers 500 and then 200, then the retry delivers the same bytes and both attempts are logged", async () => {
		// Arrange
		receiver.answer(500);
		const event = newEvent(merchant);

		// Act
		await enqueue(app, event);
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
		const events = Array.from({ length: 5 }, () => newEvent(merchant));

		// Act
		for (const event of events) await enqueue(app, event);
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
		const event = newEvent(merchant);

		// Act
		await enqueue(app, event);
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
		const event = newEvent(merchant);

		try {
			// Act
			await enqueue(app, event);
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
	/** `daysAgo` days before now, as billing prints an event's createdAt. */
	function createdDaysAgo(daysAgo: number, plusMs = 0): string {
		return formatDateTime(new Date(Date.now() - daysAgo * 24 * 60 * 60 * 1000 + plusMs));
	}

	test("When the account has no webhook URL, then its events wait with no attempt, and are sent oldest first once a URL is set", async () => {
		// Arrange
		const withoutUrl = await createMerchant(app);
		const events = [3, 1, 4, 0, 2].map(n => newEvent(withoutUrl, { createdAt: createdDaysAgo(1, n * 1000) }));

		// Act: enqueued out of order, then well past several retry delays (50 ms doubling) without a URL.
		for (const event of events) await enqueue(app, event);
		await eventually(async () => expect((await deliveriesOf(app, withoutUrl, "WAITING")).length).toBe(events.length));
		await new Promise(resolve => setTimeout(resolve, 1500));
		const waiting = await deliveriesOf(app, withoutUrl);
		await setWebhookUrl(app, withoutUrl, receiver.url);

		// Assert
		expect(waiting.map(d => [d.status, d.attempts, d.attemptLog.length, d.nextAttemptAt])).toEqual(
			events.map(() => ["WAITING", 0, 0, null]),
		);
		const requests = await receiver.waitForRequests(events.length);
		const oldestFirst = [...events].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).map(e => e.id);
		expect(requests.map(r => JSON.parse(r.rawBody).id)).toEqual(oldestFirst);
		for (const request of requests)
			expect(verifySignature(withoutUrl.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(true);
		await eventually(async () =>
			expect((await deliveriesOf(app, withoutUrl, "DELIVERED")).map(d => d.attempts)).toEqual(events.map(() => 1)),
		);
	});

	test("When an event waited longer than the waiting window (30 days), then setting a URL does not send it: it is DEAD saying why", async () => {
		// Arrange
		const withoutUrl = await createMerchant(app);
		const old = newEvent(withoutUrl, { createdAt: createdDaysAgo(31) });
		const recent = newEvent(withoutUrl, { createdAt: createdDaysAgo(29) });
		await enqueue(app, old);
		await enqueue(app, recent);
		await eventually(async () => expect((await deliveriesOf(app, withoutUrl, "WAITING")).length).toBe(2));

		// Act
		await setWebhookUrl(app, withoutUrl, receiver.url);

		// Assert
		await eventually(async () => expect((await deliveryOf(app, withoutUrl, recent.id)).status).toBe("DELIVERED"));
		expect(await deliveryOf(app, withoutUrl, old.id)).toMatchObject({
			status: "DEAD",
			attempts: 0,
			lastError: "no webhook URL within 30 days of the event",
		});
		expect(receiver.requests.map(r => JSON.parse(r.rawBody).id)).toEqual([recent.id]);
	});

	test("When the URL is removed, then the next events wait again instead of being attempted", async () => {
		// Arrange
		await setWebhookUrl(app, merchant, null);
		const event = newEvent(merchant);

		// Act
		await enqueue(app, event);

		// Assert
		await eventually(async () =>
			expect(await deliveryOf(app, merchant, event.id)).toMatchObject({ status: "WAITING", attempts: 0, attemptLog: [] }),
		);
		expect(receiver.requests).toEqual([]);
	});
});

describe("notifications.enqueue", () => {
	test.each([
		["an unknown type", { type: "PAYOUT" }],
		["an id that is not a UUID", { id: "evt_1" }],
		["a createdAt with a zone", { createdAt: "2026-11-22T14:03:05.123Z" }],
		["an unknown property", { extra: 1 }],
	])("When the event has %s, then it is refused and nothing is stored", async (_, overrides) => {
		const event = { ...newEvent(merchant), ...overrides };

		const call = enqueue(app, event as never);

		await expect(call).rejects.toMatchObject({ name: "ValidationError" });
		expect(await deliveriesOf(app, merchant)).toEqual([]);
	});

	test("When the event id is upper-case, then it is stored and sent lower-case", async () => {
		const id = randomUUID();

		await enqueue(app, newEvent(merchant, { id: id.toUpperCase() }));
		const [request] = await receiver.waitForRequests(1);

		expect(request.headers["x-webhook-id"]).toBe(id);
		expect(JSON.parse(request.rawBody).id).toBe(id);
	});
});
