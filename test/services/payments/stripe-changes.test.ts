// Subscription changes (issue 36, docs/subscriptions.md) on a production account whose MIDs are on Stripe, over
// HTTP, with the Stripe connector talking to localstripe (STRIPE_API_BASE), which keeps state and declines by test
// card: an upgrade's difference is charged as a renewal is, off session on the card saved at the checkout, and what
// was charged is read back from localstripe with the official library.
import type Stripe from "stripe";
import { CARDS, cardUpdateSession, type Shop, submitCardUpdate, submitCheckout } from "../../factories/checkout";
import { type LocalstripeShop, startLocalstripeShop } from "../../factories/localstripe-shop";
import { admin, bearer } from "../../factories/merchant";
import type { TestApp } from "../../setup/app";

jest.setTimeout(60_000);

interface TransactionView {
	id: number;
	type: string;
	status: string;
	amount: number;
	processorReference: string | null;
}

describe("Subscription changes on localstripe", () => {
	let stripe: Stripe;
	let app: TestApp;
	let shop: Shop;
	let dearer: number;

	let started: LocalstripeShop;

	beforeAll(async () => {
		started = await startLocalstripeShop();
		({ stripe, app, shop } = started);
		// Dearer than the shop's CHARGE product (€9.99 a month): same currency, group and interval.
		dearer = (
			await admin(app)
				.post(`/accounts/${shop.accountId}/products`, {
					name: "Dearer",
					amount: 29.99,
					currency: "EUR",
					merchantAccountGroup: "default",
					billing: "CHARGE",
					renewal: { every: 1, unit: "month" },
				})
				.expect(201)
		).body.id;
	}, 120_000);
	afterAll(() => started?.stop());

	const api = {
		post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
		get: (path: string) => app.http().get(`/api${path}`).set(bearer(shop)),
	};
	const transactionsOf = async (customerId: number): Promise<TransactionView[]> =>
		(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	const intentIds = async () => new Set((await stripe.paymentIntents.list({ limit: 100 })).data.map(i => i.id));
	const subscribe = async (card: string = CARDS.visa) => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });
		expect(res.body.code).toBe("OK");
		return res.body.customerId as number;
	};

	test("When a Stripe customer upgrades now with proration, then the difference is one off-session PaymentIntent on the saved payment method, confirmed, with the amount quoted", async () => {
		// Arrange
		const customerId = await subscribe();
		const [start] = await transactionsOf(customerId);
		const first = await stripe.paymentIntents.retrieve(start.processorReference!);
		const quote = (await api.post(`/customer/${customerId}/change-quote`, { productId: dearer, mode: "now_prorated" }).expect(200)).body;
		const before = await intentIds();

		// Act
		const done = await api.post(`/customer/${customerId}/change`, { productId: dearer, mode: "now_prorated", quoteId: quote.quoteId });

		// Assert
		expect(done.status).toBe(200);
		expect(quote).toMatchObject({ currency: "EUR", charge: expect.any(Number) });
		expect(quote.charge).toBeGreaterThan(0);
		const created = (await stripe.paymentIntents.list({ limit: 100 })).data.filter(i => !before.has(i.id));
		expect(created).toHaveLength(1);
		const [intent] = created;
		expect(intent).toMatchObject({
			status: "succeeded",
			amount: Math.round(quote.charge * 100),
			currency: "eur",
			customer: first.customer,
			payment_method: first.payment_method,
			metadata: { idempotency_key: `change:${quote.quoteId}` },
		});
		// Merchant-initiated: localstripe refuses Stripe's `off_session` parameter at confirmation, so the connector's
		// localstripe dialect leaves it out (stripe-connector.ts) and localstripe's intents never show it; what it shows of
		// an off-session charge is that no buyer took part: no 3-D Secure action, no client-side confirmation, and the
		// saved customer's attached payment method charged without a CVC.
		expect(intent.next_action ?? null).toBeNull();
		expect(intent.setup_future_usage ?? null).toBeNull();
		expect(done.body.transaction).toMatchObject({
			type: "SUBSCRIPTION_CHANGE",
			status: "APPROVED",
			amount: quote.charge,
			processorReference: intent.id,
			productId: dearer,
		});
		expect(done.body.customer).toMatchObject({ productId: dearer, quantity: 1 });
		expect((await api.get(`/customer/${customerId}`).expect(200)).body).toMatchObject({ productId: dearer, quantity: 1 });
		const changes = (await transactionsOf(customerId)).filter(t => t.type === "SUBSCRIPTION_CHANGE");
		expect(changes.map(t => [t.status, t.processorReference])).toEqual([["APPROVED", intent.id]]);
	});

	test("When Stripe declines an upgrade's charge, then nothing changes", async () => {
		// Arrange: localstripe attaches 4000000000000341 but declines every charge of it (card_declined), so the checkout
		// is paid with 4242424242424242 and the card on file then becomes 0341 by a card update, which only attaches it.
		const customerId = await subscribe(CARDS.visa);
		const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;
		expect((await submitCardUpdate(app, sessionId, { card: CARDS.declinesRenewals })).body.code).toBe("OK");
		const was = (await api.get(`/customer/${customerId}`).expect(200)).body;
		const before = await intentIds();

		// Act
		const res = await api.post(`/customer/${customerId}/change`, { productId: dearer, mode: "now_prorated" });

		// Assert
		expect(res.status).toBe(402);
		expect(res.body).toMatchObject({ error: "PAYMENT_DECLINED", status: 402, message: expect.stringContaining("declined") });
		const created = (await stripe.paymentIntents.list({ limit: 100 })).data.filter(i => !before.has(i.id));
		expect(created).toHaveLength(1);
		expect(created[0]).toMatchObject({ status: "requires_payment_method", last_payment_error: { code: "card_declined" } });
		const change = (await transactionsOf(customerId)).filter(t => t.type === "SUBSCRIPTION_CHANGE");
		expect(change.map(t => [t.status, t.processorReference])).toEqual([["DECLINED", created[0].id]]);
		expect(res.body.message).toContain(`transaction ${change[0].id}`);
		const now = (await api.get(`/customer/${customerId}`).expect(200)).body;
		expect(now).toMatchObject({ productId: shop.products.charge, quantity: 1, credit: 0, status: "ACTIVE", pendingChange: null });
		expect({ productId: now.productId, quantity: now.quantity, credit: now.credit }).toEqual({
			productId: was.productId,
			quantity: was.quantity,
			credit: was.credit,
		});
	});
});
