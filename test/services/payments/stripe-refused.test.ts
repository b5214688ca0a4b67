// Stripe refusing connections (ECONNREFUSED): no request reached Stripe, so
// nothing was done there. Unlike a lost answer (stripe-outage.test.ts), the
// outcome is known at once: a plain failure, answered as such, with nothing
// left reserved (test/factories/network-cut.ts, refuse()).
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, stripeClient } from "../../../dev/stripe-servers";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { cutBetween, type NetworkCut } from "../../factories/network-cut";
import { startApp, type TestApp } from "../../setup/app";

jest.setTimeout(60_000);

let server: StripeServer;
let cut: NetworkCut;
let stripe: Stripe;
let app: TestApp;

beforeAll(async () => {
	server = await startLocalstripe();
	stripe = stripeClient(server);
	cut = await cutBetween(server.url);
	app = await startApp({ env: { STRIPE_API_BASE: cut.url, STRIPE_API_DIALECT: "localstripe", REQUEST_TIMEOUT_MS: "3000" } });
}, 120_000);
afterAll(async () => {
	await app?.stop();
	await cut?.close();
	await server?.stop();
});
afterEach(() => cut.heal());

const stripeShop = () =>
	createShop(app, { environment: "production", processor: { type: "stripe", secretKey: `sk_live_${Date.now().toString(36)}refused` } });

const REFUND_FAILED = "Refund failed: the payment processor did not accept it; nothing was refunded";

async function paidCharge(shop: Shop): Promise<{ id: number; processorReference: string }> {
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
	const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	return charge;
}

const refund = (shop: Shop, id: number, key?: string) => {
	const req = app.http().get(`/api/refund/${id}`).set(bearer(shop));
	return key ? req.set("Idempotency-Key", key) : req;
};

test("When Stripe refuses the connection, then a refund answers that nothing was refunded, gives its amount back, and a refund once Stripe is back refunds it", async () => {
	// Arrange
	const shop = await stripeShop();
	const charge = await paidCharge(shop);
	await cut.refuse();

	// Act
	const during = await refund(shop, charge.id, "refused-1");
	await cut.heal();
	const repeat = await refund(shop, charge.id, "refused-1");
	const after = await refund(shop, charge.id);

	// Assert: the refused one is a settled failure (its key keeps it); the next refund takes the whole amount, once.
	expect({ status: during.status, body: during.body }).toEqual({ status: 200, body: { success: false, message: REFUND_FAILED } });
	expect(repeat.body).toEqual({ success: false, message: REFUND_FAILED });
	expect(after.body).toEqual({ success: true, message: "Refund success with amount 9.99" });
	const atStripe = await stripe.refunds.list({ payment_intent: charge.processorReference });
	expect(atStripe.data.map(r => r.amount)).toEqual([999]);
});

test("When Stripe refuses the connection, then the charge still reads REFUNDABLE with nothing held back: a partial refund for all of it is taken once Stripe is back", async () => {
	// Arrange
	const shop = await stripeShop();
	const charge = await paidCharge(shop);
	await cut.refuse();

	// Act
	const during = await refund(shop, charge.id, undefined).query({ amountToRefund: "9.99" });
	const view = (await app.http().get(`/api/transaction/${charge.id}`).set(bearer(shop)).expect(200)).body;
	await cut.heal();
	const after = await refund(shop, charge.id).query({ amountToRefund: "9.99" });

	// Assert
	expect(during.body).toEqual({ success: false, message: REFUND_FAILED });
	expect(view.refundStatus).toBe("REFUNDABLE");
	expect(after.body).toEqual({ success: true, message: "Refund success with amount 9.99" });
});

test("When Stripe refuses the connection, then a checkout answers PROCESSING_ERROR and, once Stripe is back, the buyer pays with a new session", async () => {
	// Arrange
	const shop = await stripeShop();
	await cut.refuse();

	// Act
	const during = await submitCheckout(app, shop, { productId: shop.products.charge });
	await cut.heal();
	const after = await submitCheckout(app, shop, { productId: shop.products.charge });

	// Assert
	expect({ status: during.status, code: during.body.code }).toEqual({ status: 200, code: "PROCESSING_ERROR" });
	expect(after.body.code).toBe("OK");
});
