// The hot paths read and write by key: every command a checkout (with a promotion code), the merchant
// reads (the metrics included), a refund, an unsubscribe (a trial's too, its hold released), a subscription's change, pause and resume, the
// outbox relay (and the invoices and credit notes it issues, their lists and links), webhook delivery, buyers' emails
// and a renewal send is answered from an index on the embedded database (_id, or a
// unique index matched exactly), so none slows down as collections grow.
// The commands are recorded with the driver's command monitoring.
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../factories/webhook-receiver";
import { startApp, type TestApp } from "../setup/app";
import { recordCommands, scans, uniqueKeysOf } from "../setup/db-commands";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp();
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	// Emails on: each payment also stores and attempts a receipt (no SMTP server here, so its attempts are retried).
	await admin(app)
		.patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url, emails: { enabled: true } })
		.expect(200);
	await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "41111111" }).expect(201);
	// So that its checkouts also ask whether the buyer is blocked.
	await admin(app).post(`/accounts/${shop.accountId}/blocked-buyers`, { email: "blocked@hot-paths.example.com" }).expect(201);
	// So that its checkouts find a promotion code by its unique key, take a redemption, and keep or give it back.
	await admin(app)
		.post(`/accounts/${shop.accountId}/coupons`, {
			code: "HOT",
			percentOff: 10,
			duration: "repeating",
			durationInPeriods: 2,
			maxRedemptions: 10,
		})
		.expect(201);
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

describe("Hot paths on the embedded database", () => {
	test("When a buyer checks out, the merchant reads, refunds, renews and unsubscribes, and the webhooks go out, then no command scans a collection", async () => {
		// Arrange
		const recording = recordCommands(app);

		// Act
		const promotionCode = { promotionCode: "hot" };
		const checkout = await submitCheckout(app, shop, { productId: shop.products.charge, extra: promotionCode });
		const declined = await submitCheckout(app, shop, {
			productId: shop.products.charge,
			card: CARDS.insufficientFunds,
			extra: promotionCode,
		});
		const customerId = checkout.body.customerId as number;
		await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200);
		recording.stop();
		const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
		const reads = recordCommands(app);
		await app.http().get(`/api/transaction/${charge.id}`).set(bearer(shop)).expect(200);
		await app.http().get(`/api/refund/${charge.id}?amountToRefund=1.00`).set(bearer(shop)).set("Idempotency-Key", "hot-path-1").expect(200);
		await app.http().get(`/api/refund/${charge.id}`).set(bearer(shop)).expect(200);
		await admin(app)
			.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(Date.now() + 32 * 24 * 3600 * 1000).toISOString() })
			.expect(200);
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);
		await receiver.waitForRequests(7);
		// Invoices and credit notes: issued by the relay above; their lists, one by key, and the buyer's link.
		const invoices = await app.http().get(`/api/invoices?customerId=${customerId}`).set(bearer(shop)).expect(200);
		await app.http().get("/api/invoices").set(bearer(shop)).expect(200);
		await app.http().get("/api/credit-notes").set(bearer(shop)).expect(200);
		await app.http().get(`/api/invoice/${charge.id}`).set(bearer(shop)).expect(200);
		await app.http().get(invoices.body.data[0].url).expect(200);
		// The metrics: the account's index and its months, by key (a product's scope too).
		await app.http().get("/api/metrics?granularity=week").set(bearer(shop)).expect(200);
		await app.http().get(`/api/metrics?productId=${shop.products.charge}`).set(bearer(shop)).expect(200);
		reads.stop();

		// Assert
		expect([checkout.body.code, declined.body.code]).toEqual(["OK", "PAYMENT_DECLINED"]);
		const keys = uniqueKeysOf(app);
		expect([...scans(recording.commands, keys), ...scans(reads.commands, keys)]).toEqual([]);
		// The receipts were stored and attempted on the way.
		const touched = new Set([...recording.commands, ...reads.commands].map(c => c.collection));
		expect([touched.has("emails"), touched.has("email_schedule")]).toEqual([true, true]);
	});

	test("When a merchant quotes and makes changes (an Idempotency-Key repeated, one at the period's end, cancelled), pauses and resumes, then no command scans a collection", async () => {
		// Arrange
		const checkout = await submitCheckout(app, shop, { productId: shop.products.charge });
		const id = checkout.body.customerId as number;
		const post = (path: string, body?: object) => {
			const request = app.http().post(`/api/customer/${id}/${path}`).set(bearer(shop));
			return body ? request.send(body) : request;
		};
		const recording = recordCommands(app);

		// Act
		const quote = await post("change-quote", { quantity: 2, mode: "now_prorated" }).expect(200);
		await post("change", { mode: "now_prorated", quoteId: quote.body.quoteId }).expect(200);
		await post("change", { quantity: 3, mode: "now_prorated" }).set("Idempotency-Key", "hot-path-change").expect(200);
		await post("change", { quantity: 3, mode: "now_prorated" }).set("Idempotency-Key", "hot-path-change").expect(200);
		await post("change", { quantity: 1, mode: "at_period_end" }).expect(200);
		await app.http().delete(`/api/customer/${id}/pending-change`).set(bearer(shop)).expect(200);
		await post("pause").expect(200);
		await post("resume").expect(200);
		await receiver.waitForRequests(1);
		recording.stop();

		// Assert
		expect(scans(recording.commands, uniqueKeysOf(app))).toEqual([]);
	});

	test("When customers in a trial (a hold placed, or the first charge scheduled) unsubscribe, then no command scans a collection", async () => {
		// Arrange
		const held = await submitCheckout(app, shop, { productId: shop.products.preauthorize });
		const scheduled = await submitCheckout(app, shop, { productId: shop.products.schedule });
		const recording = recordCommands(app);

		// Act
		for (const { body } of [held, scheduled])
			await app
				.http()
				.post(`/api/unsubscribe/${body.customerId}`)
				.set(bearer(shop))
				.expect(200, { success: true, message: `Customer ${body.customerId} unsubscribed` });
		recording.stop();

		// Assert
		expect([held.body.code, scheduled.body.code]).toEqual(["OK", "OK"]);
		const [hold] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${held.body.customerId}/transactions`)).body;
		expect(hold).toMatchObject({ type: "PREAUTHORIZATION", refundStatus: "VOIDED" });
		expect(scans(recording.commands, uniqueKeysOf(app))).toEqual([]);
	});
});
