// Nothing is lost: events are written with the change they announce, so
// changes made while the notifications service is down are delivered once it
// is back.
import NotificationsService from "../../../services/notifications/notifications.service";
import { createShop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
	// Every service but notifications.
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "invoicing", "refunds", "metrics"],
	});
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

test("When checkouts, a refund and an unsubscribe happen while notifications is down, then every event arrives once it is back", async () => {
	// Arrange
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);

	// Act: the changes, with no notifications service anywhere.
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
	const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
	const refunded = await app.http().get(`/api/refund/${charge.id}?amountToRefund=1`).set(bearer(shop));
	const unsubscribed = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop));
	await new Promise(resolve => setTimeout(resolve, 1500));
	const receivedWhileDown = receiver.requests.length;
	// Act: notifications comes up on this node.
	app.broker.createService(NotificationsService);
	await app.broker.waitForServices(["notifications"]);
	// The checkout's, its invoice's, the refund's, its credit note's and the cancellation's.
	await receiver.waitForRequests(6, 15_000);

	// Assert
	expect([refunded.body.success, unsubscribed.body.success]).toEqual([true, true]);
	expect(receivedWhileDown).toBe(0);
	const types = receiver.requests.map(r => JSON.parse(r.rawBody).type).sort();
	expect(types).toEqual(["CANCELLATION", "CONVERSION", "CREDIT_NOTE_ISSUED", "INVOICE_ISSUED", "REFUND", "TRANSACTION"]);
}, 30_000);
