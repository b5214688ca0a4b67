// The spec's events end to end: real checkouts, refunds and unsubscribes, a
// real webhook receiver, signatures checked as docs/webhooks.md tells merchants to.
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import {
	type Envelope,
	type ReceivedRequest,
	startWebhookReceiver,
	verifySignature,
	type WebhookReceiver,
} from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp();
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

const bodies = (requests: ReceivedRequest[]) => requests.map(r => JSON.parse(r.rawBody) as Envelope);

/** Waits until the receiver holds `count` events of this customer, then a little longer to catch extras. */
async function eventsOf(customerId: number, count: number): Promise<Envelope[]> {
	const deadline = Date.now() + 10_000;
	const mine = () => bodies(receiver.requests).filter(e => e.customerId === customerId);
	while (mine().length < count && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	await new Promise(r => setTimeout(r, 300));
	return mine();
}

describe("Webhooks from real flows", () => {
	test("When a CHARGE checkout succeeds, then a TRANSACTION and a CONVERSION webhook arrive, signed, naming the transaction and the customer", async () => {
		// Act
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;

		// Assert
		const events = await eventsOf(customerId, 3);
		expect(events.map(e => e.type).sort()).toEqual(["CONVERSION", "INVOICE_ISSUED", "TRANSACTION"]);
		const transaction = events.find(e => e.type === "TRANSACTION")!;
		expect(transaction).toMatchObject({
			accountId: shop.accountId,
			customerId,
			data: { transaction: { type: "SUBSCRIPTION_START", amount: 9.99 } },
		});
		expect(transaction.transaction_id).toBe(transaction.data.transaction!.id);
		expect(events.find(e => e.type === "CONVERSION")!.data.customer).toMatchObject({ id: customerId, status: "ACTIVE" });
		for (const request of receiver.requests.filter(r => JSON.parse(r.rawBody).customerId === customerId)) {
			expect(verifySignature(shop.webhookSecret, String(request.headers["x-webhook-signature"]), request.rawBody)).toBe(true);
			expect(request.headers["x-webhook-id"]).toBe(JSON.parse(request.rawBody).id);
		}
	});

	test("When a SCHEDULE checkout succeeds, then only a CONVERSION arrives: no charge was attempted", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.schedule })).body;

		const events = await eventsOf(customerId, 1);

		expect(events.map(e => e.type)).toEqual(["CONVERSION"]);
		expect(events[0].transaction_id).toBeUndefined();
	});

	test("When a charge is declined, then a TRANSACTION webhook arrives and no CONVERSION", async () => {
		await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds });
		const [declined] = (await admin(app).get(`/accounts/${shop.accountId}/customers`)).body.filter(
			(c: { status: string }) => c.status === "DECLINED",
		);

		const events = await eventsOf(declined.id, 1);

		expect(events.map(e => e.type)).toEqual(["TRANSACTION"]);
		expect(events[0].data.transaction).toMatchObject({ type: "SUBSCRIPTION_START" });
	});

	test("When a transaction is refunded, then a REFUND webhook names the REFUNDED transaction", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		await eventsOf(customerId, 2);
		const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;

		await app.http().get(`/api/refund/${charge.id}?amountToRefund=1.5`).set(bearer(shop)).expect(200);

		const refund = (await eventsOf(customerId, 3)).find(e => e.type === "REFUND")!;
		expect(refund.data.transaction).toMatchObject({ type: "REFUNDED", amount: -1.5 });
		expect(refund.transaction_id).toBe(refund.data.transaction!.id);
	});

	test("When a customer is unsubscribed twice, then exactly one CANCELLATION webhook arrives", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		await eventsOf(customerId, 2);

		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		const cancellations = (await eventsOf(customerId, 3)).filter(e => e.type === "CANCELLATION");
		expect(cancellations).toHaveLength(1);
		expect(cancellations[0].data.customer).toMatchObject({ id: customerId, status: "UNSUBSCRIBED" });
	});
});

describe("Webhooks from renewals (through the sandbox test clock)", () => {
	const DAY = 86_400_000;
	/** A shop of its own: the test clock moves one account's customers. */
	async function shopWithWebhooks(): Promise<Shop> {
		const own = await createShop(app);
		await admin(app).patch(`/accounts/${own.accountId}`, { webhookUrl: receiver.url }).expect(200);
		return own;
	}
	const advance = (who: Shop, days: number) =>
		admin(app)
			.post(`/accounts/${who.accountId}/clock`, { advanceTo: new Date(Date.now() + days * DAY).toISOString() })
			.expect(200);
	const outcomes = (events: Envelope[]) =>
		events
			.filter(e => e.type === "TRANSACTION")
			.map(e => `${e.data.transaction!.type} ${(e.data.transaction as { status?: string }).status}`);

	test("When a renewal is charged, then a TRANSACTION webhook names the approved RENEWAL", async () => {
		const own = await shopWithWebhooks();
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge })).body;

		await advance(own, 32);

		const events = await eventsOf(customerId, 3);
		expect(outcomes(events)).toEqual(["SUBSCRIPTION_START APPROVED", "RENEWAL APPROVED"]);
		expect(events.find(e => e.data.transaction?.type === "RENEWAL")!.data.transaction).toMatchObject({ amount: 9.99 });
	});

	test("When a SCHEDULE trial ends, then its first charge sends a TRANSACTION webhook", async () => {
		const own = await shopWithWebhooks();
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.schedule })).body;

		await advance(own, 15);

		expect(outcomes(await eventsOf(customerId, 2))).toEqual(["SUBSCRIPTION_START APPROVED"]);
	});

	test("When every retry is declined, then a TRANSACTION arrives per attempt and one SUSPENSION after the last", async () => {
		// The default retry days are 1, 3, 5 and 7 after the first decline: five attempts in all.
		const own = await shopWithWebhooks();
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge, card: CARDS.declinesRenewals })).body;

		for (const days of [31, 32.1, 34.2, 36.3, 38.4]) await advance(own, days);

		const events = await eventsOf(customerId, 8);
		expect(outcomes(events)).toEqual(["SUBSCRIPTION_START APPROVED", ...Array(5).fill("RENEWAL DECLINED")]);
		const suspensions = events.filter(e => e.type === "SUSPENSION");
		expect(suspensions).toHaveLength(1);
		expect(suspensions[0].data.customer).toMatchObject({ id: customerId, status: "SUSPENDED" });
	});

	test("When the card has expired by the renewal (a hard decline), then one declined attempt suspends at once: TRANSACTION and SUSPENSION", async () => {
		// A card valid through this month has expired a month from now.
		const now = new Date();
		const expiry = `${String(now.getUTCMonth() + 1).padStart(2, "0")}${String(now.getUTCFullYear() % 100).padStart(2, "0")}`;
		const own = await shopWithWebhooks();
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge, expiry })).body;

		await advance(own, 32);

		const events = await eventsOf(customerId, 4);
		expect(outcomes(events)).toEqual(["SUBSCRIPTION_START APPROVED", "RENEWAL DECLINED"]);
		expect(events.filter(e => e.type === "SUSPENSION").map(e => e.data.customer)).toEqual([
			expect.objectContaining({ status: "SUSPENDED", attempts: 1 }),
		]);
	});
});
