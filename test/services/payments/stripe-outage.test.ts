// Stripe unreachable in the middle of an operation: the request reached
// Stripe and was done there, and its answer was lost with the network
// (test/factories/network-cut.ts). Every request answers a documented code,
// what was done is found later by a lookup of the object remembered before
// the money moved, and nobody is charged or refunded twice, counted in
// localstripe's own records.
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, stripeClient } from "../../../dev/stripe-servers";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, bearer, DAY_MS } from "../../factories/merchant";
import { cutBetween, type NetworkCut } from "../../factories/network-cut";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(90_000);

let server: StripeServer;
let cut: NetworkCut;
let stripe: Stripe;
let app: TestApp;

const CONFIRM = /^POST \/v1\/payment_intents\/pi_\w+\/confirm /;
const REFUND = /^POST \/v1\/refunds /;

beforeAll(async () => {
	server = await startLocalstripe();
	stripe = stripeClient(server);
	cut = await cutBetween(server.url);
	app = await startApp({
		env: {
			STRIPE_API_BASE: cut.url,
			STRIPE_API_DIALECT: "localstripe",
			REQUEST_TIMEOUT_MS: "3000",
			REFUND_RECOVERY_GRACE_MS: "4000",
			REFUND_RECOVERY_INTERVAL_MS: "300",
			RENEWAL_LEASE_MS: "2000",
		},
	});
}, 120_000);
afterAll(async () => {
	await app?.stop();
	await cut?.close();
	await server?.stop();
});
afterEach(() => cut.heal());

interface TransactionView {
	id: number;
	type: string;
	status: string;
	processorReference: string | null;
}

const shopOn = (environment: "sandbox" | "production") =>
	createShop(app, {
		environment,
		processor: { type: "stripe", secretKey: `sk_${environment === "production" ? "live" : "test"}_${Date.now().toString(36)}outage` },
	});
const transactionsOf = async (shop: Shop, customerId: number): Promise<TransactionView[]> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;

/** Succeeded charges of the Stripe customer a PaymentIntent belongs to: what the buyer's card statement shows. */
async function chargesOfBuyer(paymentIntent: string): Promise<Stripe.Charge[]> {
	const { customer } = await stripe.paymentIntents.retrieve(paymentIntent);
	return (await stripe.charges.list({ customer: String(customer), limit: 100 })).data.filter(c => c.status === "succeeded");
}

test("When the answer to a checkout's charge is lost with the network, then the checkout answers a documented code, the charge is found later and the customer activated, and the buyer is charged once", async () => {
	// Arrange
	const shop = await shopOn("production");
	const email = uniqueEmail();
	const lost = cut.loseAnswerTo(CONFIRM);

	// Act
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, email });
	await lost;
	await cut.heal();

	// Assert: 503 or PROCESSING_ERROR, nothing else; then the recovery's lookup settles it.
	expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: expect.anything() });
	const customer = await eventually(async () => {
		const found = (
			await app
				.http()
				.get(`/api/customers?email=${encodeURIComponent(email)}`)
				.set(bearer(shop))
				.expect(200)
		).body.data[0] as { id: number; status: string } | undefined;
		expect(found?.status).toBe("ACTIVE");
		return found;
	}, 30_000);
	const transactions = await transactionsOf(shop, customer!.id);
	expect(transactions.map(t => [t.type, t.status])).toEqual([["SUBSCRIPTION_START", "APPROVED"]]);
	expect(await chargesOfBuyer(transactions[0].processorReference!)).toHaveLength(1);
});

test("When the answer to a refund is lost with the network, then the refund is settled later from Stripe's records, once", async () => {
	// Arrange
	const shop = await shopOn("production");
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
	const [charge] = await transactionsOf(shop, customerId);
	const lost = cut.loseAnswerTo(REFUND);

	// Act
	const res = await app.http().get(`/api/refund/${charge.id}`).set(bearer(shop));
	await lost;
	await cut.heal();

	// Assert: an answer the spec or our docs name, and one refund at Stripe, recorded once.
	expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: expect.anything() });
	const refunded = await eventually(async () => {
		const found = (await transactionsOf(shop, customerId)).filter(t => t.type === "REFUNDED");
		expect(found.length).toBeGreaterThan(0);
		return found;
	}, 30_000);
	await new Promise(resolve => setTimeout(resolve, 1000));
	expect(await transactionsOf(shop, customerId)).toHaveLength(2);
	const atStripe = await stripe.refunds.list({ payment_intent: charge.processorReference! });
	expect(atStripe.data.map(r => r.id)).toEqual([refunded[0].processorReference]);
});

test("When the answer to a renewal's charge is lost with the network, then the next run finds it instead of charging again", async () => {
	// Arrange: a sandbox account rehearsing on Stripe's test mode, renewed by its test clock.
	const shop = await shopOn("sandbox");
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa })).body;
	const lost = cut.loseAnswerTo(CONFIRM);
	const advanceTo = new Date(Date.now() + 32 * DAY_MS).toISOString();

	// Act: the run whose answer is lost, then (the renewal's lease over) the same run again.
	const first = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo });
	await lost;
	await cut.heal();
	await new Promise(resolve => setTimeout(resolve, 2500));
	const again = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo });

	// Assert
	expect([200, 503]).toContain(first.status);
	expect(again.status).toBe(200);
	const transactions = await transactionsOf(shop, customerId);
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect(await chargesOfBuyer(transactions[0].processorReference!)).toHaveLength(2);
});
