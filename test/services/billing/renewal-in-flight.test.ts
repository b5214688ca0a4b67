// A renewal's charge whose answer is still on its way when a second run comes
// (issue 45, item 9): run A's charge reaches Stripe (localstripe) and is done
// there, but its answer is kept back by a relay (test/factories/network-cut.ts)
// until A has given up waiting and its lease has ended; run B then meets the
// same renewal. Whatever B meets, the period is charged once: counted in
// localstripe's own records, and in the merchant's GET /api/transactions.
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, stripeClient } from "../../../dev/stripe-servers";
import { MID_CACHE_MS } from "../../../services/payments/processors";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
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

beforeAll(async () => {
	server = await startLocalstripe();
	stripe = stripeClient(server);
	cut = await cutBetween(server.url);
	app = await startApp({
		env: {
			STRIPE_API_BASE: cut.url,
			STRIPE_API_DIALECT: "localstripe",
			// Run A stops waiting for payments after 3 s; its lease on the customer ended after 2 s.
			REQUEST_TIMEOUT_MS: "3000",
			REFUND_RECOVERY_GRACE_MS: "4000",
			RENEWAL_LEASE_MS: "2000",
		},
	});
}, 120_000);
afterAll(async () => {
	await app?.stop();
	await cut?.close();
	await server?.stop();
});

interface TransactionView {
	type: string;
	status: string;
	idempotencyKey?: string;
	processorReference: string | null;
}

/** A sandbox account rehearsing on Stripe's test mode (its test clock renews), and one subscriber charged at checkout. */
async function subscriber(): Promise<{ shop: Shop; customerId: number; processor: object }> {
	const processor = { type: "stripe", secretKey: `sk_test_${Date.now().toString(36)}inflight` };
	const shop = await createShop(app, { environment: "sandbox", processor });
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa });
	expect(res.body).toMatchObject({ code: "OK" });
	return { shop, customerId: res.body.customerId, processor };
}

const clock = (shop: Shop, days: number) =>
	admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(Date.now() + days * DAY_MS).toISOString() });

/** The customer's transactions as the merchant lists them, oldest first. */
async function transactionsOf(shop: Shop, customerId: number): Promise<TransactionView[]> {
	const res = await app.http().get(`/api/transactions?customerId=${customerId}`).set(bearer(shop)).expect(200);
	return [...(res.body.data as TransactionView[])].reverse();
}

/** Succeeded charges of the Stripe customer a PaymentIntent belongs to: what the buyer's card statement shows. */
async function chargesOfBuyer(paymentIntent: string): Promise<string[]> {
	const { customer } = await stripe.paymentIntents.retrieve(paymentIntent);
	const charges = (await stripe.charges.list({ customer: String(customer), limit: 100 })).data;
	return charges.filter(c => c.status === "succeeded").map(c => String(c.payment_intent));
}

/** Runs A (its answer kept back until it gave up) and B; answers B's report and lets A's answer through. */
async function twoRuns(shop: Shop, beforeB: () => Promise<void> = async () => undefined) {
	const held = cut.holdAnswerTo(CONFIRM);
	// Run A: the charge is confirmed at Stripe, but its answer does not come back before payments' call times out.
	const [first, answer] = await Promise.all([clock(shop, 32), held]);
	expect([200, 503]).toContain(first.status);
	await beforeB();
	// Run B: A's lease has ended (2 s), A's call at payments has not (its answer is still kept back).
	const second = await clock(shop, 32);
	answer.release();
	return second;
}

/** Runs the clock until the customer's renewal is recorded as charged (each run after the one before let its lease go). */
async function untilRenewed(shop: Shop, customerId: number, days: number): Promise<void> {
	await eventually(async () => {
		const run = await clock(shop, days);
		expect(run.status).toBe(200);
		const renewals = (await transactionsOf(shop, customerId)).filter(t => t.type === "RENEWAL" && t.status === "APPROVED");
		if (renewals.length === 0) await new Promise(resolve => setTimeout(resolve, 500));
		expect(renewals.length).toBeGreaterThan(0);
	}, 30_000);
}

test("When a second renewal run meets a charge whose answer is still on its way, then it neither declines nor charges again: the answer is recorded later and the period is charged once", async () => {
	// Arrange
	const { shop, customerId } = await subscriber();

	// Act
	const second = await twoRuns(shop);
	await untilRenewed(shop, customerId, 32);
	const last = await clock(shop, 34);

	// Assert: one charge at Stripe and in the merchant's list; B charged and declined nothing (payments told it the
	// charge was still being decided).
	const transactions = await transactionsOf(shop, customerId);
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect((await chargesOfBuyer(transactions[0].processorReference!)).sort()).toEqual(transactions.map(t => t.processorReference).sort());
	expect(second.status).toBe(200);
	expect(second.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	expect(last.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
	expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0 });
});

test("When no MID may take a renewal whose charge is still on its way, then the run does not decline it: the approval is found and the period is charged once, not again on a retry", async () => {
	// Arrange
	const { shop, customerId } = await subscriber();
	const setMids = (active: boolean) =>
		Promise.all(shop.mids.map(id => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${id}`, { active }).expect(200)));

	// Act: while A's answer is kept back, the operator turns the MIDs off; after it came, on again, and the retry day passes.
	const second = await twoRuns(shop, () => setMids(false).then(() => undefined));
	await setMids(true);
	await untilRenewed(shop, customerId, 34);
	const last = await clock(shop, 34);

	// Assert: the period is charged once, at Stripe and in the merchant's list, and nothing was declined.
	const transactions = await transactionsOf(shop, customerId);
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect((await chargesOfBuyer(transactions[0].processorReference!)).sort()).toEqual(transactions.map(t => t.processorReference).sort());
	expect(second.status).toBe(200);
	expect(second.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	expect(last.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
	expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0 });
});

test("When a renewal's MID loses its processor while its charge is still on its way, then payments answers the key's outcome, not a decline: the period is charged once", async () => {
	// Arrange
	const { shop, customerId, processor } = await subscriber();
	const setProcessor = (value: object | null) =>
		Promise.all(
			shop.mids.map(id => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${id}`, { processor: value }).expect(200)),
		);
	// Payments keeps a MID's processor this long: a change reaches its charges after it.
	const midCache = () => new Promise<void>(resolve => setTimeout(resolve, MID_CACHE_MS + 500));

	// Act: while A's answer is kept back, the operator takes the MIDs' processor away; after it came, gives it back.
	const second = await twoRuns(shop, () => setProcessor(null).then(midCache));
	await setProcessor(processor);
	await midCache();
	await untilRenewed(shop, customerId, 34);
	const last = await clock(shop, 34);

	// Assert: the period is charged once, at Stripe and in the merchant's list, and nothing was declined.
	const transactions = await transactionsOf(shop, customerId);
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect((await chargesOfBuyer(transactions[0].processorReference!)).sort()).toEqual(transactions.map(t => t.processorReference).sort());
	expect(second.status).toBe(200);
	expect(second.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	expect(last.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
	expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0 });
});
