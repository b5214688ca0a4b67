// A production account whose MIDs are on Stripe goes through the flows a
// merchant uses, over HTTP, with the Stripe connector talking to a real server
// that speaks Stripe's API (STRIPE_API_BASE): localstripe, which keeps state
// and declines by test card, so every charge, hold and refund is found in its
// own records; and stripe-mock, Stripe's own mock, which checks every request
// against Stripe's OpenAPI document and answers fixtures.
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, startStripeMock, stripeClient } from "../../../dev/stripe-servers";
import { CARDS, cardUpdateSession, createShop, type Shop, submitCardUpdate, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(60_000);

const liveKey = () => `sk_live_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
const testKey = () => `sk_test_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;

interface TransactionView {
	id: number;
	type: string;
	status: string;
	amount: number;
	transactionId: number | null;
	processorReference: string | null;
	refundStatus: string;
}

describe("On localstripe", () => {
	let server: StripeServer;
	let stripe: Stripe;
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		server = await startLocalstripe();
		stripe = stripeClient(server);
		app = await startApp({ env: { STRIPE_API_BASE: server.url, STRIPE_API_DIALECT: "localstripe" } });
		shop = await createShop(app, { environment: "production", processor: { type: "stripe", secretKey: liveKey() } });
	}, 120_000);
	afterAll(async () => {
		await app?.stop();
		await server?.stop();
	});

	const transactionsOf = async (customerId: number): Promise<TransactionView[]> =>
		(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	// A production account's webhooks go to public addresses only, so its events are read as its webhooks carry them: GET /api/events.
	const eventsOf = async (customerId: number) =>
		(await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data as {
			type: string;
			data: { transaction?: { processorReference: string | null } };
		}[];
	test("When a buyer pays a CHARGE product, then Stripe holds one succeeded PaymentIntent for the amount, the transaction names it, and the TRANSACTION and CONVERSION events carry it", async () => {
		// Act
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });

		// Assert
		expect(res.body).toMatchObject({ code: "OK", customerId: expect.any(Number) });
		const [charge] = await transactionsOf(res.body.customerId);
		expect(charge).toMatchObject({
			type: "SUBSCRIPTION_START",
			status: "APPROVED",
			amount: 9.99,
			processorReference: expect.stringMatching(/^pi_/),
		});
		const intent = await stripe.paymentIntents.retrieve(charge.processorReference!);
		expect(intent).toMatchObject({ status: "succeeded", amount: 999, currency: "eur" });
		const events = await eventually(async () => {
			const found = await eventsOf(res.body.customerId);
			expect(found.length).toBeGreaterThanOrEqual(2);
			return found;
		}, 15_000);
		for (const type of ["TRANSACTION", "CONVERSION"])
			expect(events.find(e => e.type === type)?.data.transaction?.processorReference).toBe(charge.processorReference);
	});

	test("When a charge is refunded in part and then in full, then Stripe holds two refunds of its PaymentIntent adding up to the amount, and each REFUNDED transaction and REFUND event names its refund", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const [charge] = await transactionsOf(customerId);

		// Act
		const partial = await app.http().get(`/api/refund/${charge.id}?amountToRefund=4.00`).set(bearer(shop));
		const rest = await app.http().get(`/api/refund/${charge.id}`).set(bearer(shop));

		// Assert
		expect([partial.body, rest.body]).toEqual([
			{ success: true, message: "Refund success with amount 4" },
			{ success: true, message: "Refund success with amount 5.99" },
		]);
		const refunds = (await transactionsOf(customerId)).filter(t => t.type === "REFUNDED");
		expect(refunds.map(r => r.processorReference)).toEqual([expect.stringMatching(/^re_/), expect.stringMatching(/^re_/)]);
		const atStripe = await stripe.refunds.list({ payment_intent: charge.processorReference! });
		expect(atStripe.data.map(r => r.amount).sort()).toEqual([400, 599]);
		expect(atStripe.data.map(r => r.id).sort()).toEqual(refunds.map(r => r.processorReference).sort());
		const events = await eventually(async () => {
			const found = (await eventsOf(customerId)).filter(e => e.type === "REFUND");
			expect(found.length).toBeGreaterThanOrEqual(2);
			return found;
		}, 15_000);
		expect(events.map(e => e.data.transaction?.processorReference).sort()).toEqual(atStripe.data.map(r => r.id).sort());
	});

	test("When a buyer takes a PREAUTHORIZE trial and unsubscribes, then Stripe held the amount uncaptured and the hold is cancelled", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.preauthorize })).body;
		const [hold] = await transactionsOf(customerId);
		const held = await stripe.paymentIntents.retrieve(hold.processorReference!);

		// Act
		const res = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop));

		// Assert
		expect(hold).toMatchObject({ type: "PREAUTHORIZATION", status: "APPROVED" });
		expect(held).toMatchObject({ status: "requires_capture", amount: 1999 });
		expect(res.body.success).toBe(true);
		expect((await stripe.paymentIntents.retrieve(hold.processorReference!)).status).toBe("canceled");
	});

	test("When a buyer subscribes to a SCHEDULE product, then the card is verified with a SetupIntent and nothing is charged", async () => {
		const before = (await stripe.paymentIntents.list({ limit: 100 })).data.length;

		const res = await submitCheckout(app, shop, { productId: shop.products.schedule });

		expect(res.body.code).toBe("OK");
		expect(await transactionsOf(res.body.customerId)).toEqual([]);
		expect((await stripe.paymentIntents.list({ limit: 100 })).data.length).toBe(before);
	});

	test("When Stripe declines the card when it is charged, then PAYMENT_DECLINED", async () => {
		// Act: localstripe declines 4000000000000341 when it is charged.
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.declinesRenewals });

		// Assert
		expect(res.body.code).toBe("PAYMENT_DECLINED");
	});

	test("When a sandbox account's MID has a Stripe test key, then the test clock's renewal is charged off session on Stripe with the saved card", async () => {
		// Arrange
		const rehearsal = await createShop(app, { processor: { type: "stripe", secretKey: testKey() } });
		const { customerId } = (await submitCheckout(app, rehearsal, { productId: rehearsal.products.charge })).body;

		// Act
		await advanceClock(app, rehearsal, 32);

		// Assert
		const list = (await admin(app).get(`/accounts/${rehearsal.accountId}/customers/${customerId}/transactions`)).body as TransactionView[];
		expect(list.map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
		const [first, renewal] = await Promise.all(list.map(t => stripe.paymentIntents.retrieve(t.processorReference!)));
		expect(renewal).toMatchObject({ status: "succeeded", amount: 999, customer: first.customer, payment_method: first.payment_method });
	});
	test("When a customer of a Stripe MID gives a new card, then the card is verified on Stripe, nothing is charged, and the next renewal is charged on the new card", async () => {
		// Arrange: a sandbox account with a Stripe test key (its test clock renews).
		const rehearsal = await createShop(app, { processor: { type: "stripe", secretKey: testKey() } });
		const { customerId } = (await submitCheckout(app, rehearsal, { productId: rehearsal.products.charge, card: CARDS.visa })).body;
		const sessionId = (await cardUpdateSession(app, rehearsal, customerId).expect(200)).text;

		// Act
		const update = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });
		await advanceClock(app, rehearsal, 32);

		// Assert
		expect(update.body.code).toBe("OK");
		const list = (await admin(app).get(`/accounts/${rehearsal.accountId}/customers/${customerId}/transactions`)).body as TransactionView[];
		expect(list.map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
		const [first, renewal] = await Promise.all(list.map(t => stripe.paymentIntents.retrieve(t.processorReference!)));
		const card = async (intent: Stripe.PaymentIntent) => (await stripe.paymentMethods.retrieve(String(intent.payment_method))).card?.last4;
		expect([await card(first), await card(renewal)]).toEqual(["4242", "4444"]);
	});
});

describe("On stripe-mock", () => {
	let server: StripeServer;
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		server = await startStripeMock();
		app = await startApp({ env: { STRIPE_API_BASE: server.url } });
		shop = await createShop(app, { environment: "production", processor: { type: "stripe", secretKey: liveKey() } });
	}, 120_000);
	afterAll(async () => {
		await app?.stop();
		await server?.stop();
	});

	// stripe-mock answers fixtures (its SetupIntent says requires_payment_method, whatever was sent), so the checkout
	// ends at the verification; a request it refused would make the connector answer ERROR, and the checkout PROCESSING_ERROR.
	test.each(["charge", "preauthorize", "schedule"] as const)(
		"When a buyer checks out a %s product, then every request the connector sends is one Stripe's OpenAPI document accepts",
		async product => {
			const res = await submitCheckout(app, shop, { productId: shop.products[product] });

			expect(res.status).toBe(200);
			expect(res.body.code).not.toBe("PROCESSING_ERROR");
		},
	);
});
