// What operators do with webhooks through the admin API: list them, and send
// them again after the merchant fixed their endpoint. The sandbox retry
// window is shrunk to about 2 s so deliveries reach DEAD within a test.
import { randomUUID } from "node:crypto";
import { formatDateTime } from "../../../shared/time";
import { createShop, type Shop } from "../../factories/checkout";
import { admin, createMerchant, type TestMerchant } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { type DeliveryView, deliveriesOf, deliveryOf, eventually, handOver, newEvent, sale, setWebhookUrl } from "./webhook-events";

let app: TestApp;
let receiver: WebhookReceiver;
let merchant: Shop;

beforeAll(async () => {
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50", WEBHOOK_SANDBOX_RETRY_HOURS: "0.0005" } });
});
afterAll(() => app.stop());

beforeEach(async () => {
	receiver = await startWebhookReceiver();
	merchant = await createShop(app);
	await setWebhookUrl(app, merchant, receiver.url);
});
afterEach(() => receiver.stop());

async function untilStatus(eventId: string, status: DeliveryView["status"], who: TestMerchant = merchant): Promise<DeliveryView> {
	return eventually(async () => {
		const delivery = await deliveryOf(app, who, eventId);
		expect(delivery.status).toBe(status);
		return delivery;
	}, 15_000);
}

const secondsAgo = (seconds: number) => formatDateTime(new Date(Date.now() - seconds * 1000));

describe("The retry window", () => {
	test("When a sandbox delivery keeps failing past WEBHOOK_SANDBOX_RETRY_HOURS, then it is DEAD with every attempt logged", async () => {
		// Arrange
		receiver.answerByDefault(500);

		// Act
		const { conversion: event } = await sale(app, merchant);
		const dead = await untilStatus(event.id, "DEAD");

		// Assert
		expect(dead).toMatchObject({ lastError: "HTTP 500", nextAttemptAt: null, deliveredAt: null });
		expect(dead.attempts).toBeGreaterThan(1);
		expect(dead.attemptLog).toHaveLength(dead.attempts);
		expect(dead.attemptLog.every(a => a.statusCode === 500)).toBe(true);
		expect(receiver.requestsFor(event.id)).toHaveLength(dead.attempts);
	});

	// No flow writes an event an hour old: it is handed over as billing's relay does after an outage.
	test("When an event is already older than the window, then it still gets one attempt", async () => {
		const event = newEvent(merchant, { createdAt: secondsAgo(3600) });

		await handOver(app, event);

		await untilStatus(event.id, "DELIVERED");
		expect(receiver.requestsFor(event.id)).toHaveLength(1);
	});
});

describe("GET /admin/accounts/:accountId/webhooks", () => {
	test("When a status is given, then only the account's deliveries in that status come back, newest first", async () => {
		// Arrange: events handed over as billing's relay does, with createdAt a second apart (a checkout's two events share theirs).
		const older = newEvent(merchant, { createdAt: secondsAgo(2) });
		const newer = newEvent(merchant, { createdAt: secondsAgo(1) });
		await handOver(app, older);
		await handOver(app, newer);
		await untilStatus(older.id, "DELIVERED");
		await untilStatus(newer.id, "DELIVERED");
		receiver.answerByDefault(503);
		const failing = newEvent(merchant);
		await handOver(app, failing);
		await untilStatus(failing.id, "DEAD");
		const other = await createMerchant(app);
		await handOver(app, newEvent(other));

		// Act
		const all = await deliveriesOf(app, merchant);
		const delivered = await deliveriesOf(app, merchant, "DELIVERED");
		const dead = await deliveriesOf(app, merchant, "DEAD");
		const failed = await deliveriesOf(app, merchant, "FAILED");
		const limited = await admin(app).get(`/accounts/${merchant.accountId}/webhooks?limit=1`);
		const bad = await admin(app).get(`/accounts/${merchant.accountId}/webhooks?status=LOST`);

		// Assert
		expect(all.map(d => d.id)).toEqual([failing.id, newer.id, older.id]);
		expect(delivered.map(d => d.id)).toEqual([newer.id, older.id]);
		expect(dead.map(d => d.id)).toEqual([failing.id]);
		expect(failed.map(d => d.id)).toEqual([failing.id]);
		expect(limited.body.map((d: DeliveryView) => d.id)).toEqual([failing.id]);
		expect(bad.status).toBe(400);
		expect(dead[0]).toEqual({
			id: failing.id,
			type: "TRANSACTION",
			status: "DEAD",
			accountId: merchant.accountId,
			customerId: 41,
			transaction_id: 97,
			attempts: expect.any(Number),
			nextAttemptAt: null,
			lastError: "HTTP 503",
			createdAt: failing.createdAt,
			deliveredAt: null,
			attemptLog: expect.arrayContaining([
				{
					attempt: 1,
					node: expect.any(String),
					time: expect.any(String),
					statusCode: 503,
					latencyMs: expect.any(Number),
					error: "HTTP 503",
				},
			]),
		});
	});
});

describe("POST /admin/webhooks/:eventId/redeliver", () => {
	test("When a DELIVERED event is redelivered, then it is sent again with the same id and body", async () => {
		// Arrange
		const { conversion: event } = await sale(app, merchant);
		await untilStatus(event.id, "DELIVERED");

		// Act
		const res = await admin(app).post(`/webhooks/${event.id}/redeliver`, {});
		await eventually(() => expect(receiver.requestsFor(event.id)).toHaveLength(2));

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toMatchObject({ id: event.id, status: "PENDING" });
		const [first, again] = receiver.requestsFor(event.id);
		expect(again.rawBody).toBe(first.rawBody);
		expect(await untilStatus(event.id, "DELIVERED")).toMatchObject({ attempts: 2 });
	});

	test("When a DEAD event is redelivered after the receiver is fixed, then it is delivered", async () => {
		// Arrange
		receiver.answerByDefault(500);
		const { conversion: event } = await sale(app, merchant);
		await untilStatus(event.id, "DEAD");
		receiver.answerByDefault(200);

		// Act
		const res = await admin(app).post(`/webhooks/${event.id.toUpperCase()}/redeliver`);

		// Assert
		expect(res.status).toBe(200);
		const delivered = await untilStatus(event.id, "DELIVERED");
		expect(delivered.attemptLog.at(-1)).toMatchObject({ statusCode: 200, error: null });
	});

	test("When the event is unknown, then 404", async () => {
		const res = await admin(app).post(`/webhooks/${randomUUID()}/redeliver`, {});

		expect(res.status).toBe(404);
		expect(res.body).toMatchObject({ error: "NOT_FOUND", status: 404 });
	});

	test("When the event id is not a UUID, then 400", async () => {
		const res = await admin(app).post("/webhooks/not-an-id/redeliver", {});

		expect(res.status).toBe(400);
	});
});

describe("POST /admin/accounts/:accountId/webhooks/redeliver", () => {
	test("When an account's webhooks failed, then every DEAD one is sent again and the delivered ones are not", async () => {
		// Arrange
		const fine = await sale(app, merchant);
		for (const event of [fine.transaction, fine.conversion, fine.invoice]) await untilStatus(event.id, "DELIVERED");
		receiver.answerByDefault(500);
		const { transaction, conversion, invoice } = await sale(app, merchant);
		const failed = [transaction, conversion, invoice];
		for (const event of failed) await untilStatus(event.id, "DEAD");
		receiver.answerByDefault(200);

		// Act
		const res = await admin(app).post(`/accounts/${merchant.accountId}/webhooks/redeliver`, {});

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ redelivered: 3 });
		for (const event of failed) await untilStatus(event.id, "DELIVERED");
		for (const event of [fine.transaction, fine.conversion]) expect(receiver.requestsFor(event.id)).toHaveLength(1);
	});

	test("When the account has nothing failed, then nothing is redelivered", async () => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/webhooks/redeliver`, {});

		expect(res.body).toEqual({ redelivered: 0 });
	});
});
