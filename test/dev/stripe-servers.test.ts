// The two Stripe servers the tests run (dev/stripe-servers.ts), spoken to only through the
// official stripe library, as the Stripe connector will: stripe-mock judges requests against
// Stripe's OpenAPI document; localstripe keeps state, so it shows declines, captures, refunds
// and 3-D Secure.
import path from "node:path";
import type Stripe from "stripe";
import {
	ensureLocalstripe,
	type StripeServer,
	startLocalstripe,
	startStripeMock,
	stripeClient,
	stripeMockBin,
} from "../../dev/stripe-servers";
import { projectRoot } from "../../shared/paths";

/** The first run also installs localstripe: about 15 s, twice that on a busy machine. */
const START_TIMEOUT_MS = 180_000;
const EXPIRY = { exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: "123" };

let mock: StripeServer | undefined;
let local: StripeServer | undefined;

async function timed<T>(start: () => Promise<T>): Promise<[T, string]> {
	const started = performance.now();
	const result = await start();
	return [result, `${((performance.now() - started) / 1000).toFixed(1)} s`];
}

beforeAll(async () => {
	const [mockServer, mockReady] = await timed(startStripeMock);
	mock = mockServer;
	const [, installed] = await timed(ensureLocalstripe);
	const [localServer, localReady] = await timed(startLocalstripe);
	local = localServer;
	console.log(`Ready: stripe-mock in ${mockReady}; localstripe in ${localReady} (plus ${installed} to install it)`);
}, START_TIMEOUT_MS);

afterAll(async () => {
	await Promise.all([mock?.stop(), local?.stop()]);
});

function card(number: string): Stripe.PaymentMethodCreateParams {
	return { type: "card", card: { number, ...EXPIRY } };
}

describe("stripeMockBin", () => {
	test("When STRIPE_MOCK_BIN is not set, then it is the stripe-mock npm install built in .stripe-mock, never one from PATH", () => {
		expect(stripeMockBin({})).toBe(path.join(projectRoot, ".stripe-mock", "stripe-mock"));
	});

	test("When STRIPE_MOCK_BIN names nothing, then the error says so", () => {
		expect(() => stripeMockBin({ STRIPE_MOCK_BIN: "/nowhere/stripe-mock" })).toThrow(
			"STRIPE_MOCK_BIN is /nowhere/stripe-mock, which does not exist",
		);
	});
});

// stripe-mock answers fixtures: an accepted request's answer is a valid object, not the outcome of
// the request (a confirmed intent still says requires_payment_method), so only acceptance is checked.
describe("stripe-mock", () => {
	let stripe: Stripe;
	beforeAll(() => {
		stripe = stripeClient(mock!);
	});

	test("When a PaymentMethod is made from a raw test card and a PaymentIntent confirmed with it, then both are accepted", async () => {
		// Act
		const method = await stripe.paymentMethods.create(card("4242424242424242"));
		const intent = await stripe.paymentIntents.create({ amount: 1999, currency: "usd", payment_method: method.id, confirm: true });

		// Assert
		expect(method).toMatchObject({ object: "payment_method", id: expect.stringMatching(/^pm_/) });
		expect(intent).toMatchObject({ object: "payment_intent", id: expect.stringMatching(/^pi_/) });
	});

	test("When a SetupIntent is confirmed with a payment method, then it is accepted", async () => {
		// Arrange
		const method = await stripe.paymentMethods.create(card("4242424242424242"));

		// Act
		const setup = await stripe.setupIntents.create({ payment_method: method.id, confirm: true, usage: "off_session" });

		// Assert
		expect(setup).toMatchObject({ object: "setup_intent", id: expect.stringMatching(/^seti_/) });
	});

	test("When part of a PaymentIntent is refunded, then the refund is accepted", async () => {
		// Arrange
		const intent = await stripe.paymentIntents.create({ amount: 1999, currency: "usd", payment_method: "pm_card_visa", confirm: true });

		// Act
		const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 500 });

		// Assert
		expect(refund).toMatchObject({ object: "refund", id: expect.stringMatching(/^re_/) });
	});

	test("When the amount is not a number, then the request is refused with an invalid_request_error naming it", async () => {
		// Act
		const creating = stripe.paymentIntents.create({ amount: "ten" as unknown as number, currency: "usd" });

		// Assert
		await expect(creating).rejects.toMatchObject({
			type: "StripeInvalidRequestError",
			rawType: "invalid_request_error",
			statusCode: 400,
			message: expect.stringContaining("'amount'"),
		});
	});
});

describe("localstripe", () => {
	let stripe: Stripe;
	beforeAll(() => {
		stripe = stripeClient(local!);
	});

	interface Payer {
		customer: Stripe.Customer;
		method: Stripe.PaymentMethod;
	}

	/** A customer with a card attached, as a subscription's first checkout leaves it. */
	async function customerWithCard(number: string): Promise<Payer> {
		const customer = await stripe.customers.create({ email: "ada@example.com" });
		const method = await stripe.paymentMethods.attach((await stripe.paymentMethods.create(card(number))).id, { customer: customer.id });
		return { customer, method };
	}

	/** A PaymentIntent of 19.99 USD on the payer's card, confirmed at once. */
	function confirmedIntent(payer: Payer, options: Partial<Stripe.PaymentIntentCreateParams> = {}): Promise<Stripe.PaymentIntent> {
		return stripe.paymentIntents.create({
			amount: 1999,
			currency: "usd",
			customer: payer.customer.id,
			payment_method: payer.method.id,
			confirm: true,
			...options,
		});
	}

	/** localstripe answers latest_charge expanded; Stripe answers its id unless asked to expand it. */
	async function chargeOf(intent: Stripe.PaymentIntent): Promise<Stripe.Charge> {
		const charge = intent.latest_charge;
		return stripe.charges.retrieve(typeof charge === "string" ? charge : charge!.id);
	}

	test("When a card is attached to a new customer, then the customer's cards list it", async () => {
		// Act
		const { customer, method } = await customerWithCard("4242424242424242");

		// Assert
		const cards = await stripe.paymentMethods.list({ customer: customer.id, type: "card" });
		expect(cards.data.map(listed => listed.id)).toEqual([method.id]);
		expect(method).toMatchObject({ customer: customer.id, card: { last4: "4242" } });
	});

	test("When an off-session PaymentIntent is confirmed with 4242424242424242, then it succeeds and its charge is captured", async () => {
		// Arrange
		const payer = await customerWithCard("4242424242424242");

		// Act
		const intent = await confirmedIntent(payer, { off_session: true });

		// Assert
		expect(intent.status).toBe("succeeded");
		expect(await chargeOf(intent)).toMatchObject({ status: "succeeded", captured: true, paid: true, amount: 1999 });
	});

	test("When the card is 4000000000000341, then it attaches but the confirm is refused with card_declined and the charge failed", async () => {
		// Arrange
		const payer = await customerWithCard("4000000000000341");

		// Act
		const confirming = confirmedIntent(payer, { off_session: true });

		// Assert
		const declined = await confirming.then(
			() => undefined,
			(err: Stripe.errors.StripeCardError) => err,
		);
		expect(declined).toMatchObject({ type: "StripeCardError", code: "card_declined", statusCode: 402 });
		expect(await stripe.charges.retrieve(declined!.charge!)).toMatchObject({ status: "failed", failure_code: "card_declined" });
	});

	test("When part of a charge is refunded, then the refund succeeds and the charge shows that part refunded", async () => {
		// Arrange
		const intent = await confirmedIntent(await customerWithCard("4242424242424242"), { off_session: true });

		// Act
		const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 500 });

		// Assert
		expect(refund).toMatchObject({ status: "succeeded", amount: 500 });
		expect(await chargeOf(intent)).toMatchObject({ amount_refunded: 500, refunded: false });
	});

	test("When a manual-capture PaymentIntent is captured, then it succeeds; when another is cancelled, then it is canceled", async () => {
		// Arrange
		const payer = await customerWithCard("4242424242424242");
		const toCapture = await confirmedIntent(payer, { capture_method: "manual" });
		const toCancel = await confirmedIntent(payer, { capture_method: "manual" });
		expect([toCapture.status, toCancel.status]).toEqual(["requires_capture", "requires_capture"]);

		// Act
		const captured = await stripe.paymentIntents.capture(toCapture.id);
		const canceled = await stripe.paymentIntents.cancel(toCancel.id);

		// Assert
		expect(captured.status).toBe("succeeded");
		expect(await chargeOf(captured)).toMatchObject({ captured: true, amount: 1999 });
		expect(canceled.status).toBe("canceled");
	});

	test("When a SetupIntent is confirmed with a card, then it succeeds", async () => {
		// Arrange
		const { customer, method } = await customerWithCard("4242424242424242");
		const setup = await stripe.setupIntents.create({ customer: customer.id, usage: "off_session" });

		// Act
		const confirmed = await stripe.setupIntents.confirm(setup.id, { payment_method: method.id });

		// Assert
		expect(setup.status).toBe("requires_payment_method");
		expect(confirmed).toMatchObject({ status: "succeeded", payment_method: method.id });
	});

	test("When a PaymentIntent is confirmed with the 3-D Secure card 4000002500003155, then it requires action", async () => {
		// Arrange
		const payer = await customerWithCard("4000002500003155");

		// Act
		const intent = await confirmedIntent(payer);

		// Assert
		expect(intent.status).toBe("requires_action");
		expect(intent.next_action).toMatchObject({ type: "use_stripe_sdk", use_stripe_sdk: { type: "three_d_secure_redirect" } });
	});
});
