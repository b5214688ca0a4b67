// A renewal's charge whose answer is still on its way when a second run comes
// (issue 45, item 9): run A's charge reaches Stripe (localstripe) and is done
// there, but its answer is kept back by a relay (test/factories/network-cut.ts)
// until A's lease on the customer has ended and run B has met the same
// renewal. Whatever B meets, the period is charged once: counted in
// localstripe's own records, and in the merchant's GET /api/transactions.
import { MongoClient } from "mongodb";
import type Stripe from "stripe";
import type { Response } from "supertest";
import { type StripeServer, startLocalstripe, stripeClient } from "../../../dev/stripe-servers";
import { MID_CACHE_MS } from "../../../services/payments/processors";
import { call } from "../../../shared/call";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, DAY_MS } from "../../factories/merchant";
import { cutBetween, type NetworkCut } from "../../factories/network-cut";
import { clockTo, nextRenewalOf } from "../../factories/test-clock";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(90_000);

let server: StripeServer;
let cut: NetworkCut;
let stripe: Stripe;
let app: TestApp;

const CONFIRM = /^POST \/v1\/payment_intents\/pi_\w+\/confirm /;
const LEASE_MS = 2000;

beforeAll(async () => {
	server = await startLocalstripe();
	stripe = stripeClient(server);
	cut = await cutBetween(server.url);
	app = await startApp({
		// A renewal's lease ends after 2 s, while its charge may still be in flight.
		env: { STRIPE_API_BASE: cut.url, STRIPE_API_DIALECT: "localstripe", RENEWAL_LEASE_MS: String(LEASE_MS) },
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

/** Runs A (its charge's answer kept back) and, once A's lease has ended, B; answers B's answer and lets A's answer through. */
async function twoRuns(shop: Shop, beforeB: () => Promise<void> = async () => undefined) {
	const held = cut.holdAnswerTo(CONFIRM);
	// Run A: the charge is confirmed at Stripe, but its answer does not come back.
	// (then: supertest sends a request only once it is awaited)
	const first = clock(shop, 32).then(res => res);
	const answer = await held;
	// A claimed the customer before it charged: its lease is over after this, its charge still in flight.
	await new Promise(resolve => setTimeout(resolve, LEASE_MS));
	await beforeB();
	const second = await clock(shop, 32);
	answer.release();
	// A answers once its charge's answer came, or 503 if it stopped waiting for payments first (REQUEST_TIMEOUT_MS).
	expect([200, 503]).toContain((await first).status);
	return second;
}

/**
 * Runs the clock until the customer has moved on to its next period (each run after the one before let its lease
 * go): due again in about two months, not on a retry day.
 */
async function untilRenewed(shop: Shop, customerId: number, days: number): Promise<void> {
	await eventually(async () => {
		const run = await clock(shop, days);
		expect(run.status).toBe(200);
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		const movedOn = customer.attempts === 0 && new Date(customer.nextRenewalTimestamp).getTime() > Date.now() + 45 * DAY_MS;
		if (!movedOn) await new Promise(resolve => setTimeout(resolve, 500));
		expect(movedOn).toBe(true);
	}, 30_000);
}

/**
 * The period charged once, at Stripe and in the merchant's list, and the customer moved on with no attempt used; run
 * B (which met the customer: not skipped) and the last run charged and declined nothing.
 */
async function expectChargedOnce(shop: Shop, customerId: number, runs: { second?: Response; last: Response }): Promise<void> {
	const transactions = await transactionsOf(shop, customerId);
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect((await chargesOfBuyer(transactions[0].processorReference!)).sort()).toEqual(transactions.map(t => t.processorReference).sort());
	if (runs.second)
		expect({ status: runs.second.status, body: runs.second.body }).toMatchObject({
			status: 200,
			body: { charged: 0, declined: 0, suspended: 0, skipped: 0 },
		});
	expect(runs.last.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
	const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
	expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0 });
}

test("When a second renewal run meets a charge whose answer is still on its way, then it neither declines nor charges again: the answer is recorded later and the period is charged once", async () => {
	// Arrange
	const { shop, customerId } = await subscriber();

	// Act
	const second = await twoRuns(shop);
	await untilRenewed(shop, customerId, 32);
	const last = await clock(shop, 34);

	// Assert: B charged and declined nothing (payments told it the charge was still being decided); one charge.
	await expectChargedOnce(shop, customerId, { second, last });
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
	await expectChargedOnce(shop, customerId, { second, last });
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
	await expectChargedOnce(shop, customerId, { second, last });
});

test("When a try's key is approved after its run moved the customer to the retry day (a request of it still on its way), then the retry finds that approval: the period is paid by it and charged once", async () => {
	// Arrange: Stripe refuses connections during the run, so the renewal is an ERROR (nothing moved), retried a day later.
	const { shop, customerId } = await subscriber();
	await cut.refuse();
	// To the renewal's due time: its retry comes a day later.
	const failed = await clockTo(app, shop, await nextRenewalOf(app, shop, customerId));
	await cut.heal();
	expect(failed.body).toMatchObject({ charged: 0, declined: 1 });
	// The state a request of that try still on its way leaves: it reaches payments after the customer moved on, and is
	// approved (sent here as billing sends it, with the try's key, card and MID read from billing's database).
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
	const retrying = await billing
		.collection<{ _id: number; cardToken: string; midId: number; attempts: number }>("customers")
		.findOne({ _id: customerId });
	const failedTry = await billing
		.collection<{ customerId: number; status: string; idempotencyKey: string }>("transactions")
		.findOne({ customerId, status: "ERROR" });
	await client.close();
	expect(retrying?.attempts).toBe(1);
	const late = await call(app.broker, "payments.charge", {
		idempotencyKey: failedTry!.idempotencyKey,
		cardToken: retrying!.cardToken,
		amount: 999,
		currency: "EUR",
		midId: retrying!.midId,
		initiator: "merchant",
	});
	expect(late).toMatchObject({ status: "APPROVED" });

	// Act: the retry day.
	const retryDay = await nextRenewalOf(app, shop, customerId);
	const retry = await clockTo(app, shop, retryDay);
	const last = await clockTo(app, shop, retryDay);

	// Assert: the retry charged nothing new: the try's transaction, its ERROR completed by the late approval, pays the period.
	expect(retry.body).toMatchObject({ charged: 1, declined: 0 });
	await expectChargedOnce(shop, customerId, { last });
});
