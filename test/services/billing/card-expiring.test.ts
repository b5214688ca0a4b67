// CARD_EXPIRING through the sandbox test clock: the merchant hears, 30 days
// (CARD_EXPIRING_DAYS) before a renewal the card will have expired by, once per card.
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp();
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

const advance = (shop: Shop, days: number) => advanceClock(app, shop, days);

/** MMYY of the month `months` from now (UTC): a card valid through the end of that month. */
function expiryIn(months: number): string {
	const at = new Date();
	at.setUTCDate(1);
	at.setUTCMonth(at.getUTCMonth() + months);
	return `${String(at.getUTCMonth() + 1).padStart(2, "0")}${String(at.getUTCFullYear() % 100).padStart(2, "0")}`;
}

async function subscribed(expiry: string): Promise<{ shop: Shop; customerId: number }> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, expiry });
	expect(res.body.code).toBe("OK");
	return { shop, customerId: res.body.customerId };
}

/** The customer's events of a type, after the webhooks of a run have had time to arrive. */
async function eventsOf(customerId: number, type: string, atLeast = 0) {
	const mine = () => receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === customerId && e.type === type);
	const deadline = Date.now() + 10_000;
	while (mine().length < atLeast && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	await new Promise(r => setTimeout(r, 500));
	return mine();
}

describe("CARD_EXPIRING", () => {
	test("When a renewal will fall after the card's expiry, then one CARD_EXPIRING arrives 30 days before it, and no second one", async () => {
		// Arrange: the card is valid through the month of the first renewal, not the second's.
		const { shop, customerId } = await subscribed(expiryIn(1));

		// Act: past the first renewal and 30 days before the second; then later again.
		await advance(shop, 33);
		const first = await eventsOf(customerId, "CARD_EXPIRING", 1);
		await advance(shop, 40);

		// Assert
		expect(first).toHaveLength(1);
		expect(first[0].data.customer).toMatchObject({ id: customerId, status: "ACTIVE", cardExpiredTime: expiryIn(1) });
		expect(await eventsOf(customerId, "CARD_EXPIRING")).toHaveLength(1);
		expect(await eventsOf(customerId, "TRANSACTION")).toHaveLength(2);
	});

	test("When the card expires before the first renewal, then the warning goes out with the next cycle", async () => {
		// Arrange: valid through this month only.
		const { shop, customerId } = await subscribed(expiryIn(0));

		// Act
		await advance(shop, 2);
		const warned = await eventsOf(customerId, "CARD_EXPIRING", 1);
		await advance(shop, 5);

		// Assert
		expect(warned).toHaveLength(1);
		expect(await eventsOf(customerId, "CARD_EXPIRING")).toHaveLength(1);
	});

	test("When the card is valid long after the renewals, then no warning is sent", async () => {
		const { shop, customerId } = await subscribed(expiryIn(24));

		await advance(shop, 33);

		expect(await eventsOf(customerId, "TRANSACTION", 2)).toHaveLength(2);
		expect(await eventsOf(customerId, "CARD_EXPIRING")).toEqual([]);
	});

	test("When the customer is unsubscribed before the warning is due, then no warning is sent", async () => {
		const { shop, customerId } = await subscribed(expiryIn(0));
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		await advance(shop, 3);

		expect(await eventsOf(customerId, "CARD_EXPIRING")).toEqual([]);
	});
});
