// A production account whose MIDs are on Stripe goes through the flows a
// merchant uses, over HTTP, with the Stripe connector talking to a real server
// that speaks Stripe's API (STRIPE_API_BASE): localstripe, which keeps state
// and declines by test card, so every charge, hold and refund is found in its
// own records; and stripe-mock, Stripe's own mock, which checks every request
// against Stripe's OpenAPI document and answers fixtures.
import type Stripe from "stripe";
import { type StripeServer, startStripeMock } from "../../../dev/stripe-servers";
import {
	CARDS,
	cardUpdateSession,
	checkoutBody,
	createShop,
	newSession,
	type Shop,
	submitCardUpdate,
	submitCheckout,
} from "../../factories/checkout";
import { type LocalstripeShop, startLocalstripeShop } from "../../factories/localstripe-shop";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(60_000);

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

	let started: LocalstripeShop;

	beforeAll(async () => {
		started = await startLocalstripeShop();
		({ server, stripe, app, shop } = started);
	}, 120_000);
	afterAll(() => started?.stop());

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

	test("When a buyer subscribes to a SCHEDULE product, then the card is set up with a SetupIntent and nothing is charged", async () => {
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

	describe("3-D Secure (docs/authentication.md): localstripe's 3-D Secure card, the test playing the issuer", () => {
		/** localstripe asks 4000002500003155 for authentication (use_stripe_sdk): its dialect shows an empty page. */
		const THREE_DS = "4000002500003155";
		const continueCheckout = (sessionId: string) =>
			app.http().post("/api/checkout/continue").send({ sessionId, landingDomain: "shop.example.com" }).expect(200);
		/** A checkout with the 3-D Secure card, stopped at its challenge, and the intent or set-up waiting for the buyer. */
		async function challenged(productId: number) {
			const sessionId = await newSession(app, shop);
			const answer = (
				await app
					.http()
					.post("/api/checkout")
					.send(await checkoutBody(app, shop, { productId, sessionId, card: THREE_DS }))
			).body;
			const waiting = async <T extends { status: string; created: number }>(list: T[]) =>
				list.filter(o => o.status === "requires_action").sort((a, b) => b.created - a.created)[0];
			return {
				sessionId,
				answer,
				intent: async () => waiting((await stripe.paymentIntents.list({ limit: 100 })).data),
				setup: async () => waiting((await stripe.setupIntents.list({ limit: 100 })).data),
			};
		}
		/** The issuer's part for an intent, as localstripe's stripe.js plays it: its `_authenticate` route. */
		async function authenticate(intent: Stripe.PaymentIntent, success: boolean) {
			const res = await fetch(`${server.url}/v1/payment_intents/${intent.id}/_authenticate`, {
				method: "POST",
				headers: { Authorization: "Bearer sk_test_issuer", "Content-Type": "application/x-www-form-urlencoded" },
				body: new URLSearchParams({ client_secret: String(intent.client_secret), success: String(success) }),
			});
			expect(res.status).toBe(200);
		}

		test("When the issuer asks the buyer of a CHARGE product and the buyer authenticates, then the frame gets CHALLENGE, then OK, and Stripe holds one succeeded PaymentIntent, recorded as CHALLENGED", async () => {
			// Arrange
			const { sessionId, answer, intent } = await challenged(shop.products.charge);
			const waiting = await intent();

			// Act
			await authenticate(waiting, true);
			const done = (await continueCheckout(sessionId)).body;

			// Assert
			expect(answer).toMatchObject({ code: "CHALLENGE", challengeUrl: "about:blank" });
			expect(done).toMatchObject({ code: "OK", customerId: expect.any(Number) });
			const [charge] = await transactionsOf(done.customerId);
			expect(charge).toMatchObject({
				type: "SUBSCRIPTION_START",
				status: "APPROVED",
				processorReference: waiting.id,
				authentication: { outcome: "CHALLENGED" },
			});
			expect(await stripe.paymentIntents.retrieve(waiting.id)).toMatchObject({ status: "succeeded", amount: 999 });
		});

		test("When the buyer fails the issuer's challenge, then AUTHENTICATION_FAILED, and Stripe charged nothing", async () => {
			const { sessionId, intent } = await challenged(shop.products.charge);
			const waiting = await intent();

			await authenticate(waiting, false);
			const done = (await continueCheckout(sessionId)).body;

			expect(done).toMatchObject({ code: "AUTHENTICATION_FAILED" });
			expect((await stripe.paymentIntents.retrieve(waiting.id)).status).not.toBe("succeeded");
		});

		test("When a SCHEDULE product's card is set up and the issuer asks, then the SetupIntent waits for the buyer, and once authenticated the checkout is OK with nothing charged", async () => {
			// Arrange
			const { sessionId, answer, setup } = await challenged(shop.products.schedule);
			const waiting = await setup();

			// Act: localstripe has no issuer route for SetupIntents; confirmed again (as stripe.js does afterwards) it succeeds.
			await stripe.setupIntents.confirm(waiting.id);
			const done = (await continueCheckout(sessionId)).body;

			// Assert
			expect(answer).toMatchObject({ code: "CHALLENGE" });
			expect(done).toMatchObject({ code: "OK", customerId: expect.any(Number) });
			expect(await transactionsOf(done.customerId)).toEqual([]);
			expect(await stripe.setupIntents.retrieve(waiting.id)).toMatchObject({ status: "succeeded", usage: "off_session" });
		});
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

	// stripe-mock answers Stripe's own fixtures, with its intents set to `succeeded` (dev/stripe-servers.ts): a flow goes
	// past the card's verification, and a request that Stripe's OpenAPI document refuses answers 400, which the
	// connector turns into an ERROR and the flow into PROCESSING_ERROR or a 503. Every id is the fixture's, the same
	// each time, and nothing is kept: what the requests did is shown on localstripe, above. A hold's cancel answers the
	// same `succeeded` intent, so the void of an unsubscribed trial is shown there too, and accepted by stripe-mock in
	// test/services/payments/stripe-connector.test.ts.
	// stripe-mock takes test-mode keys only (sk_test_…; a live key answers 401), and a production account's MID takes
	// live keys only, so these flows run on a sandbox account rehearsing with a Stripe test key: the same connector,
	// sending the same requests.
	beforeAll(async () => {
		server = await startStripeMock({ intentsSucceed: true });
		app = await startApp({ env: { STRIPE_API_BASE: server.url } });
		shop = await createShop(app, { processor: { type: "stripe", secretKey: testKey() } });
	}, 120_000);
	afterAll(async () => {
		await app?.stop();
		await server?.stop();
	});

	const transactionsOf = async (customerId: number): Promise<TransactionView[]> =>
		(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	const eventsOf = async (customerId: number, type: string, count: number) =>
		eventually(async () => {
			const found = (await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data.filter(
				(e: { type: string }) => e.type === type,
			) as { data: { transaction?: { processorReference: string | null } } }[];
			expect(found).toHaveLength(count);
			return found.map(e => e.data.transaction?.processorReference);
		}, 15_000);

	test("When a buyer pays a CHARGE product, then the charge is approved under a PaymentIntent, and the TRANSACTION and CONVERSION events carry it", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });

		expect(res.body).toMatchObject({ code: "OK" });
		const [charge] = await transactionsOf(res.body.customerId);
		expect(charge).toMatchObject({ type: "SUBSCRIPTION_START", status: "APPROVED", processorReference: expect.stringMatching(/^pi_/) });
		expect(await eventsOf(res.body.customerId, "TRANSACTION", 1)).toEqual([charge.processorReference]);
		expect(await eventsOf(res.body.customerId, "CONVERSION", 1)).toEqual([charge.processorReference]);
	});

	test("When a buyer takes a PREAUTHORIZE trial, then the hold is approved under a PaymentIntent", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.preauthorize });

		expect(res.body).toMatchObject({ code: "OK" });
		expect(await transactionsOf(res.body.customerId)).toMatchObject([
			{ type: "PREAUTHORIZATION", status: "APPROVED", processorReference: expect.stringMatching(/^pi_/) },
		]);
	});

	test("When a buyer subscribes to a SCHEDULE product, then the card is verified and nothing is charged", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.schedule });

		expect(res.body).toMatchObject({ code: "OK" });
		expect(await transactionsOf(res.body.customerId)).toEqual([]);
	});

	test("When a charge is refunded in part and then in full, and the customer unsubscribes, then each refund is recorded under a Refund and its REFUND event carries it", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const [charge] = await transactionsOf(customerId);

		const partial = await app.http().get(`/api/refund/${charge.id}?amountToRefund=4.00`).set(bearer(shop));
		const rest = await app.http().get(`/api/refund/${charge.id}`).set(bearer(shop));
		const unsubscribed = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop));

		expect([partial.body, rest.body]).toEqual([
			{ success: true, message: "Refund success with amount 4" },
			{ success: true, message: "Refund success with amount 5.99" },
		]);
		expect(unsubscribed.body.success).toBe(true);
		const refunds = (await transactionsOf(customerId)).filter(t => t.type === "REFUNDED");
		expect(refunds.map(r => [r.amount, r.processorReference])).toEqual([
			[-4, expect.stringMatching(/^re_/)],
			[-5.99, expect.stringMatching(/^re_/)],
		]);
		expect(await eventsOf(customerId, "REFUND", 2)).toEqual(refunds.map(r => r.processorReference));
	});

	test("When a customer gives a new card, then the card is verified and the test clock's renewal is charged off session", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;

		const update = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });
		await advanceClock(app, shop, 32);

		expect(update.body.code).toBe("OK");
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status, t.processorReference?.slice(0, 3)])).toEqual([
			["SUBSCRIPTION_START", "APPROVED", "pi_"],
			["RENEWAL", "APPROVED", "pi_"],
		]);
	});

	test("When the sandbox MID that took the card refuses a renewal, then the renewal cascades to a Stripe MID of the same group, which charges the vault's card", async () => {
		// Arrange: MID A on the sandbox, MID B of the same group on Stripe's test mode; the card is refused by the MID that
		// verified it. On stripe-mock, not localstripe: Stripe gets the card from the vault without its CVC (never stored),
		// and localstripe refuses a card PaymentMethod without one, where Stripe's OpenAPI document (and Stripe) take it.
		const mixed = await createShop(app);
		await admin(app)
			.patch(`/accounts/${mixed.accountId}/merchant-accounts/${mixed.mids[1]}`, { processor: { type: "stripe", secretKey: testKey() } })
			.expect(200);
		const { customerId } = (await submitCheckout(app, mixed, { productId: mixed.products.charge, card: CARDS.renewalsRefusedByFirstMid }))
			.body;

		// Act: the renewal, refused; an hour later, the next try.
		await advanceClock(app, mixed, 32);
		await advanceClock(app, mixed, 32.1);

		// Assert
		const list = (await admin(app).get(`/accounts/${mixed.accountId}/customers/${customerId}/transactions`)).body as (TransactionView & {
			midId: number;
		})[];
		expect(list.map(t => [t.type, t.status, t.midId, t.processorReference?.slice(0, 3) ?? null])).toEqual([
			["SUBSCRIPTION_START", "APPROVED", mixed.mids[0], "sbx"],
			["RENEWAL", "DECLINED", mixed.mids[0], "sbx"],
			["RENEWAL", "APPROVED", mixed.mids[1], "pi_"],
		]);
	});
});
