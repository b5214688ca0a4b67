// The Stripe connector against the two servers that speak Stripe's API (dev/stripe-servers.ts):
// stripe-mock checks every request the connector sends against Stripe's OpenAPI document;
// localstripe keeps state, so it shows what the requests did: charges, holds, refunds, declines,
// and what a lookup finds after an answer was lost.
import type Stripe from "stripe";
import { freePort } from "../../../dev/net";
import { type StripeServer, startLocalstripe, startStripeMock, stripeClient } from "../../../dev/stripe-servers";
import type { ConnectorOutcome, FirstPaymentKind, MidContext, Remember, VaultCard } from "../../../services/payments/connectors/connector";
import type { StripeCardKeys, StripeKeyStore } from "../../../services/payments/connectors/stripe/client";
import { createStripeConnector, type StripeConnector } from "../../../services/payments/connectors/stripe/stripe-connector";
import { DeclineCategory } from "../../../shared/contracts/billing";
import { declineCategory } from "../../../shared/decline-reasons";

/** The first run also installs localstripe: about 15 s, twice that on a busy machine. */
const START_TIMEOUT_MS = 180_000;
const EXPIRY = `12${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, "0")}`;
const MID: MidContext = { midId: 7, accountId: 1, secretKey: "sk_test_connector" };

let mock: StripeServer | undefined;
let local: StripeServer | undefined;

beforeAll(async () => {
	// Each kept as soon as it runs, so that afterAll stops it even when the other did not start.
	await Promise.all([startStripeMock().then(server => (mock = server)), startLocalstripe().then(server => (local = server))]);
}, START_TIMEOUT_MS);

afterAll(async () => {
	await Promise.all([mock?.stop(), local?.stop()]);
});

/** What the payments service keeps per MID and card; a collection there, a Map here. */
function memoryKeyStore(): StripeKeyStore & { entries: Map<string, StripeCardKeys> } {
	const entries = new Map<string, StripeCardKeys>();
	return {
		entries,
		async get(midId, cardToken) {
			return entries.get(`${midId}:${cardToken}`) ?? null;
		},
		async set(midId, cardToken, value) {
			entries.set(`${midId}:${cardToken}`, value);
		},
	};
}

let serial = 0;
/** A card of its own per test, so each test has its own customer on the server. */
function vaultCard(pan: string): VaultCard {
	return { cardToken: `card_${++serial}`, pan, expiry: EXPIRY };
}
const keyFor = (name: string) => `${name}-${++serial}`;

/** A remember that keeps what it was given, as the ledger does. */
function rememberer(): { remember: Remember; references: string[] } {
	const references: string[] = [];
	return { references, remember: async reference => void references.push(reference) };
}

const approved = (prefix: string) => ({ status: "APPROVED", reference: expect.stringMatching(new RegExp(`^${prefix}_`)), reason: null });
const unavailable = { status: "ERROR", reason: "processor_unavailable", hardDecline: false };

/** A category as billing decides it (shared/decline-reasons.ts). */
function categoryOf(outcome: ConnectorOutcome): DeclineCategory | null {
	return declineCategory(outcome);
}

// stripe-mock answers fixtures (a confirmed intent still says requires_payment_method), so an accepted request
// shows as an outcome that is not an ERROR: a refused one would be ERROR with the refusal's code.
describe("stripe-mock: every request the connector makes is accepted", () => {
	let connector: StripeConnector;
	beforeEach(() => {
		connector = createStripeConnector({ apiBase: mock!.url, keyStore: memoryKeyStore(), timeoutMs: 10_000 });
	});

	function expectAccepted(outcome: ConnectorOutcome | null, prefix: string): void {
		expect(outcome?.status).not.toBe("ERROR");
		expect(outcome?.reference).toMatch(new RegExp(`^${prefix}_`));
	}

	const money = (initiator: "customer" | "merchant") => ({
		idempotencyKey: keyFor("mock"),
		mid: MID,
		card: vaultCard("4242424242424242"),
		amount: 1999,
		currency: "USD",
		initiator,
	});

	test("When a card is verified, then its customer, payment method and attach are accepted, and no SetupIntent is made", async () => {
		// Arrange
		const { remember, references } = rememberer();

		// Act
		const outcome = await connector.verify(
			{ idempotencyKey: keyFor("mock"), mid: MID, card: vaultCard("4242424242424242"), cvc: "123" },
			remember,
		);

		// Assert
		expectAccepted(outcome, "pm");
		expect(references).toEqual([]);
	});

	test("When a card is set up for later charges with a return address, for a product asking always, then the SetupIntent (request_three_d_secure any) and its confirm with return_url are accepted", async () => {
		// Arrange: as the payments service makes it with PUBLIC_BASE_URL set.
		const withReturn = createStripeConnector({
			apiBase: mock!.url,
			keyStore: memoryKeyStore(),
			timeoutMs: 10_000,
			returnUrl: "https://pay.example.com/checkout/challenge-return.html",
		});
		const { remember, references } = rememberer();

		// Act
		const outcome = await withReturn.pay(
			{ ...money("customer"), amount: 0, kind: "setup", challengeUntil: new Date(Date.now() + 300_000), authenticate: "ALWAYS" },
			remember,
		);

		// Assert: the fixture's SetupIntent says requires_payment_method, so the answer is a decline; a refused request would be an ERROR.
		expectAccepted(outcome as ConnectorOutcome, "seti");
		expect(references).toEqual([outcome.reference]);
	});

	test.each(["customer", "merchant"] as const)(
		"When the %s charges a card, then the intent and its confirm are accepted",
		async initiator => {
			// Arrange
			const { remember, references } = rememberer();

			// Act
			const outcome = await connector.charge(money(initiator), remember);

			// Assert
			expectAccepted(outcome, "pi");
			expect(references).toEqual([outcome.reference]);
		},
	);

	test("When the buyer pays with a return address for 3-D Secure, for a product asking always, then the card-only intent (request_three_d_secure any) and its confirm with return_url are accepted", async () => {
		// Arrange: as the payments service makes it with PUBLIC_BASE_URL set.
		const withReturn = createStripeConnector({
			apiBase: mock!.url,
			keyStore: memoryKeyStore(),
			timeoutMs: 10_000,
			returnUrl: "https://pay.example.com/checkout/challenge-return.html",
		});

		// Act
		const outcome = await withReturn.pay(
			{ ...money("customer"), kind: "charge", challengeUntil: new Date(Date.now() + 300_000), authenticate: "ALWAYS" },
			rememberer().remember,
		);

		// Assert: stripe-mock's intent fixture asks for nothing, so the answer is its status; a refused request would be an ERROR.
		expect(outcome.status).not.toBe("ERROR");
		expect(outcome).toMatchObject({ reference: expect.stringMatching(/^pi_/) });
	});

	test("When a hold is placed, captured, and another voided, then all are accepted", async () => {
		// Arrange
		const hold = await connector.authorize(money("customer"), rememberer().remember);
		const other = await connector.authorize(money("customer"), rememberer().remember);

		// Act
		const captured = await connector.capture({
			idempotencyKey: keyFor("mock"),
			mid: MID,
			reference: hold.reference!,
			amount: 1500,
			currency: "eur",
		});
		const voided = await connector.void({ idempotencyKey: keyFor("mock"), mid: MID, reference: other.reference! });

		// Assert
		expectAccepted(hold, "pi");
		expectAccepted(captured, "pi");
		expectAccepted(voided, "pi");
	});

	test("When part of a charge is refunded, then the search for an earlier refund and the refund are accepted", async () => {
		// Arrange
		const charge = await connector.charge(money("merchant"), rememberer().remember);
		expectAccepted(charge, "pi");

		// Act
		const refund = await connector.refund(
			{ idempotencyKey: keyFor("mock"), mid: MID, reference: charge.reference!, amount: 500, currency: "eur", cardToken: null },
			rememberer().remember,
		);

		// Assert
		expectAccepted(refund, "re");
	});

	test("When every kind of operation is looked up, then every lookup is accepted", async () => {
		// Arrange
		const verified = await connector.verify(
			{ idempotencyKey: keyFor("mock"), mid: MID, card: vaultCard("4242424242424242"), cvc: "123" },
			rememberer().remember,
		);
		const charge = await connector.charge(money("customer"), rememberer().remember);
		const lookup = (kind: Parameters<StripeConnector["lookup"]>[0]["kind"], reference: string | null, chargeReference?: string) =>
			connector.lookup({ idempotencyKey: keyFor("mock"), kind, mid: MID, reference, chargeReference });

		// Act
		const found = {
			// A verification made nothing to look up; one from before 3-D Secure remembered a SetupIntent.
			verify: await lookup("verify", verified.reference),
			olderVerify: await lookup("verify", "seti_123"),
			setup: await lookup("setup", "seti_123"),
			charge: await lookup("charge", charge.reference),
			authorize: await lookup("authorize", charge.reference),
			capture: await lookup("capture", charge.reference),
			void: await lookup("void", charge.reference),
			refund: await lookup("refund", "re_123"),
			refundByKey: await lookup("refund", null, charge.reference!),
		};

		// Assert
		expect(found.verify).toBeNull();
		expectAccepted(found.olderVerify, "seti");
		expectAccepted(found.setup, "seti");
		for (const kind of ["charge", "authorize", "capture", "void"] as const) expectAccepted(found[kind], "pi");
		expectAccepted(found.refund, "re");
		// The fixture refund does not carry our key: none was made under it.
		expect(found.refundByKey).toBeNull();
	});
});

describe("localstripe: what the connector's requests do", () => {
	let connector: StripeConnector;
	let keyStore: ReturnType<typeof memoryKeyStore>;
	/** Reads what localstripe holds, as Stripe's dashboard would show it. */
	let stripe: Stripe;
	beforeAll(() => {
		stripe = stripeClient(local!);
	});
	beforeEach(() => {
		keyStore = memoryKeyStore();
		connector = createStripeConnector({ apiBase: local!.url, keyStore, timeoutMs: 10_000, dialect: "localstripe" });
	});

	/** localstripe takes a raw card only with its CVC, so a card is verified before it is charged, as at checkout. */
	async function verified(pan: string): Promise<VaultCard> {
		const card = vaultCard(pan);
		const outcome = await connector.verify({ idempotencyKey: keyFor("verify"), mid: MID, card, cvc: "123" }, rememberer().remember);
		expect(outcome).toMatchObject(approved("pm"));
		return card;
	}

	function charge(card: VaultCard, options: { idempotencyKey?: string; remember?: Remember; initiator?: "customer" | "merchant" } = {}) {
		return connector.charge(
			{
				idempotencyKey: options.idempotencyKey ?? keyFor("charge"),
				mid: MID,
				card,
				amount: 1999,
				currency: "USD",
				initiator: options.initiator ?? "customer",
			},
			options.remember ?? rememberer().remember,
		);
	}

	function authorize(card: VaultCard) {
		return connector.authorize({ idempotencyKey: keyFor("hold"), mid: MID, card, amount: 1999, currency: "USD" }, rememberer().remember);
	}

	async function customerOf(card: VaultCard): Promise<string> {
		return (await keyStore.get(MID.midId, card.cardToken))!.customer;
	}

	/** The customer's charges; localstripe lists charges by customer. */
	async function chargesOf(card: VaultCard): Promise<Stripe.Charge[]> {
		return stripe.charges.list({ customer: await customerOf(card) }).autoPagingToArray({ limit: 1000 });
	}

	/** The customer's intents; localstripe lists intents only unfiltered. */
	async function intentsOf(card: VaultCard): Promise<Stripe.PaymentIntent[]> {
		const customer = await customerOf(card);
		const all = await stripe.paymentIntents.list().autoPagingToArray({ limit: 10_000 });
		return all.filter(intent => intent.customer === customer);
	}

	test("When a card is verified, then its customer holds it as a payment method, attached, and no SetupIntent is made", async () => {
		// Arrange
		const card = vaultCard("4242424242424242");
		const { remember, references } = rememberer();
		const setUpBefore = (await stripe.setupIntents.list({ limit: 100 })).data.length;

		// Act
		const outcome = await connector.verify({ idempotencyKey: keyFor("verify"), mid: MID, card, cvc: "123" }, remember);

		// Assert
		const kept = (await keyStore.get(MID.midId, card.cardToken))!;
		expect(outcome).toMatchObject({ ...approved("pm"), reference: kept.paymentMethod });
		expect(references).toEqual([]);
		const methods = await stripe.paymentMethods.list({ customer: kept.customer, type: "card" });
		expect(methods.data.map(method => method.id)).toEqual([kept.paymentMethod]);
		expect((await stripe.setupIntents.list({ limit: 100 })).data).toHaveLength(setUpBefore);
		expect(await stripe.customers.retrieve(kept.customer)).toMatchObject({ metadata: { card_token: card.cardToken } });
	});

	test("When a verified card is charged by the buyer and then by the merchant, then each charges once and a lookup finds it approved", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const { remember, references } = rememberer();

		// Act
		const byBuyer = await charge(card, { remember });
		const byMerchant = await charge(card, { initiator: "merchant" });

		// Assert
		expect(byBuyer).toMatchObject(approved("pi"));
		expect(byMerchant).toMatchObject(approved("pi"));
		expect(references).toEqual([byBuyer.reference]);
		const charges = await chargesOf(card);
		expect(charges.map(made => [made.payment_intent, made.status, made.amount, made.currency])).toEqual(
			expect.arrayContaining([
				[byBuyer.reference, "succeeded", 1999, "usd"],
				[byMerchant.reference, "succeeded", 1999, "usd"],
			]),
		);
		expect(charges).toHaveLength(2);
		const found = await connector.lookup({ idempotencyKey: "lost", kind: "charge", mid: MID, reference: byBuyer.reference });
		expect(found).toEqual(byBuyer);
	});

	test("When a charge is refunded in full, then the refund succeeds and the charge is refunded", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const paid = await charge(card);
		const { remember, references } = rememberer();

		// Act
		const refund = await connector.refund(
			{ idempotencyKey: keyFor("refund"), mid: MID, reference: paid.reference!, amount: 1999, currency: "eur", cardToken: card.cardToken },
			remember,
		);

		// Assert
		expect(refund).toMatchObject(approved("re"));
		expect(references).toEqual([refund.reference]);
		expect(await stripe.refunds.retrieve(refund.reference!)).toMatchObject({ status: "succeeded", amount: 1999 });
		expect((await chargesOf(card))[0]).toMatchObject({ amount_refunded: 1999, refunded: true });
	});

	test("When a charge is refunded in two parts, then both succeed and the charge is refunded once whole", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const paid = await charge(card);
		const refund = (amount: number) =>
			connector.refund(
				{ idempotencyKey: keyFor("refund"), mid: MID, reference: paid.reference!, amount, currency: "eur", cardToken: card.cardToken },
				rememberer().remember,
			);

		// Act
		const first = await refund(500);
		const afterFirst = (await chargesOf(card))[0];
		const rest = await refund(1499);

		// Assert
		expect([first, rest]).toEqual([expect.objectContaining(approved("re")), expect.objectContaining(approved("re"))]);
		expect(afterFirst).toMatchObject({ amount_refunded: 500, refunded: false });
		expect((await chargesOf(card))[0]).toMatchObject({ amount_refunded: 1999, refunded: true });
	});

	test("When a refund is asked again under its key (its answer was lost), then the first refund is the answer and no second one is made", async () => {
		// Arrange: localstripe ignores Idempotency-Key, so only the connector's search by our key stops a second refund.
		const card = await verified("4242424242424242");
		const paid = await charge(card);
		const op = {
			idempotencyKey: keyFor("refund"),
			mid: MID,
			reference: paid.reference!,
			amount: 500,
			currency: "eur",
			cardToken: card.cardToken,
		};
		const first = await connector.refund(op, rememberer().remember);

		// Act
		const again = await connector.refund(op, rememberer().remember);
		const found = await connector.lookup({ ...op, kind: "refund", reference: null, chargeReference: paid.reference! });
		const notMade = await connector.lookup({
			...op,
			idempotencyKey: "never-refunded",
			kind: "refund",
			reference: null,
			chargeReference: paid.reference!,
		});

		// Assert
		expect(again).toEqual(first);
		expect(found).toEqual(first);
		expect(notMade).toBeNull();
		expect((await stripe.refunds.list({ payment_intent: paid.reference! })).data).toHaveLength(1);
	});

	test("When a hold is captured in part, then it succeeds; captured again (an answer lost), the answer is the same", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const hold = await authorize(card);
		const capture = () =>
			connector.capture({ idempotencyKey: keyFor("capture"), mid: MID, reference: hold.reference!, amount: 1500, currency: "eur" });

		// Act
		const captured = await capture();
		const again = await capture();

		// Assert
		expect(hold).toMatchObject(approved("pi"));
		expect(captured).toEqual({ status: "APPROVED", reference: hold.reference, reason: null, hardDecline: false });
		expect(again).toEqual(captured);
		expect(await stripe.paymentIntents.retrieve(hold.reference!)).toMatchObject({ status: "succeeded" });
		expect(await chargesOf(card)).toEqual([expect.objectContaining({ captured: true, status: "succeeded" })]);
		expect(await connector.lookup({ idempotencyKey: "lost", kind: "capture", mid: MID, reference: hold.reference })).toEqual(captured);
	});

	test("When a hold is voided, then its intent is canceled; voided again it is still approved, and a capture is declined as a hold not found", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const hold = await authorize(card);
		const voidIt = () => connector.void({ idempotencyKey: keyFor("void"), mid: MID, reference: hold.reference! });

		// Act
		const voided = await voidIt();
		const again = await voidIt();
		const captured = await connector.capture({
			idempotencyKey: keyFor("capture"),
			mid: MID,
			reference: hold.reference!,
			amount: 1999,
			currency: "eur",
		});

		// Assert
		expect(voided).toEqual({ status: "APPROVED", reference: hold.reference, reason: null, hardDecline: false });
		expect(again).toEqual(voided);
		expect(await stripe.paymentIntents.retrieve(hold.reference!)).toMatchObject({ status: "canceled" });
		expect(captured).toMatchObject({ status: "DECLINED", reason: "authorization_not_found", hardDecline: true });
		expect(await connector.lookup({ idempotencyKey: "lost", kind: "void", mid: MID, reference: hold.reference })).toEqual(voided);
	});

	test("When 4000000000000341 is charged, then the charge is declined with card_declined, soft, and a lookup finds the decline", async () => {
		// Arrange
		const card = await verified("4000000000000341");

		// Act
		const outcome = await charge(card);

		// Assert
		expect(outcome).toEqual({ status: "DECLINED", reference: expect.stringMatching(/^pi_/), reason: "card_declined", hardDecline: false });
		expect(categoryOf(outcome)).toBe(DeclineCategory.Soft);
		expect(await chargesOf(card)).toEqual([expect.objectContaining({ status: "failed", failure_code: "card_declined" })]);
		expect(await connector.lookup({ idempotencyKey: "lost", kind: "charge", mid: MID, reference: outcome.reference })).toEqual(outcome);
	});

	test("When 4000000000000002 is verified, then attaching it is declined, nothing is kept, and trying again is declined again", async () => {
		// Arrange
		const card = vaultCard("4000000000000002");
		const verify = () => connector.verify({ idempotencyKey: keyFor("verify"), mid: MID, card, cvc: "123" }, rememberer().remember);

		// Act
		const first = await verify();
		const again = await verify();

		// Assert
		const declined = { status: "DECLINED", reference: null, reason: "card_declined", hardDecline: false };
		expect([first, again]).toEqual([declined, declined]);
		expect(keyStore.entries.size).toBe(0);
	});

	test("When a 3-D Secure card (4000002500003155) is verified, then it is attached (only a payment can ask for authentication); charged by the merchant it is declined authentication_required and cancelled", async () => {
		// Arrange
		const card = await verified("4000002500003155");

		// Act: a renewal, off session: no buyer can take a challenge.
		const charged = await charge(card, { initiator: "merchant" });

		// Assert
		expect(charged).toMatchObject({ status: "DECLINED", reference: expect.stringMatching(/^pi_/), reason: "authentication_required" });
		expect(categoryOf(charged)).toBe(DeclineCategory.Authentication);
		expect(await stripe.paymentIntents.retrieve(charged.reference!)).toMatchObject({ status: "canceled" });
		expect(await chargesOf(card)).toEqual([]);
	});

	describe("3-D Secure with the buyer present (the checkout's first payment, docs/authentication.md)", () => {
		/** A 3-D Secure card on the MID's account, verified (attached) as at checkout. */
		const threeDSCard = () => verified("4000002500003155");
		const pay = (card: VaultCard, kind: FirstPaymentKind, idempotencyKey = keyFor("pay")) =>
			connector.pay(
				{
					idempotencyKey,
					mid: MID,
					card,
					amount: kind === "setup" ? 0 : 1999,
					currency: "USD",
					kind,
					challengeUntil: new Date(Date.now() + 300_000),
				},
				rememberer().remember,
			);
		/** The issuer's part, as localstripe's own stripe.js plays it: its `_authenticate` route (not Stripe's API). */
		async function issuer(intentId: string, success: boolean): Promise<void> {
			const { client_secret } = await stripe.paymentIntents.retrieve(intentId);
			const res = await fetch(`${local!.url}/v1/payment_intents/${intentId}/_authenticate`, {
				method: "POST",
				headers: { Authorization: "Bearer sk_test_issuer", "Content-Type": "application/x-www-form-urlencoded" },
				body: new URLSearchParams({ client_secret: String(client_secret), success: String(success) }),
			});
			expect(res.status).toBe(200);
		}
		const afterChallenge = (reference: string, kind: FirstPaymentKind = "charge") =>
			connector.afterChallenge({ idempotencyKey: keyFor("after"), kind, mid: MID, reference });

		test("When the issuer asks for a challenge and the buyer completes it, then the payment waits for it, and afterwards it is approved, charged once", async () => {
			// Arrange
			const card = await threeDSCard();

			// Act
			const asked = await pay(card, "charge");
			const before = await afterChallenge(asked.reference!);
			await issuer(asked.reference!, true);
			const after = await afterChallenge(asked.reference!);

			// Assert
			expect(asked).toMatchObject({ status: "AWAITING_BUYER", reference: expect.stringMatching(/^pi_/), challengeUrl: "about:blank" });
			expect(before).toMatchObject({ status: "AWAITING_BUYER", reference: asked.reference });
			expect(after).toMatchObject({ status: "APPROVED", reference: asked.reference, authentication: { outcome: "CHALLENGED" } });
			expect((await chargesOf(card)).filter(c => c.status === "succeeded")).toHaveLength(1);
		});

		test("When the buyer completes the challenge of a hold, then the hold is placed, uncaptured", async () => {
			const card = await threeDSCard();

			const asked = await pay(card, "authorize");
			await issuer(asked.reference!, true);
			const after = await afterChallenge(asked.reference!, "authorize");

			expect(after).toMatchObject({ status: "APPROVED", authentication: { outcome: "CHALLENGED" } });
			expect(await stripe.paymentIntents.retrieve(asked.reference!)).toMatchObject({ status: "requires_capture" });
		});

		test("When the buyer fails the challenge, then the payment is declined authentication_failed and nothing is charged", async () => {
			const card = await threeDSCard();

			const asked = await pay(card, "charge");
			await issuer(asked.reference!, false);
			const after = await afterChallenge(asked.reference!);

			expect(after).toMatchObject({ status: "DECLINED", reason: "authentication_failed", authentication: { outcome: "FAILED" } });
			expect((await chargesOf(card)).filter(c => c.status === "succeeded")).toEqual([]);
		});

		test("When the buyer abandons the challenge, then a lookup (the session over) cancels the intent and answers that nothing moved", async () => {
			const card = await threeDSCard();
			const key = keyFor("pay");

			const asked = await pay(card, "charge", key);
			const found = await connector.lookup({ idempotencyKey: key, kind: "charge", mid: MID, reference: asked.reference! });

			expect(found).toBeNull();
			expect(await stripe.paymentIntents.retrieve(asked.reference!)).toMatchObject({ status: "canceled" });
			expect((await chargesOf(card)).filter(c => c.status === "succeeded")).toEqual([]);
		});

		test("When a card needs no authentication, then the buyer's payment, and a set-up, are approved at once", async () => {
			const card = await verified("4242424242424242");

			expect(await pay(card, "charge")).toMatchObject({ status: "APPROVED", reference: expect.stringMatching(/^pi_/) });
			expect(await pay(card, "setup")).toMatchObject({ status: "APPROVED", reference: expect.stringMatching(/^seti_/) });
		});

		describe("a card set up for later charges (SCHEDULE, a card update with nothing owed): a SetupIntent", () => {
			/**
			 * The issuer's part for a SetupIntent. localstripe has no `_authenticate` route for them: its SetupIntent confirmed
			 * again (as stripe.js does once the buyer is back) succeeds, and the buyer's failure leaves it cancelled.
			 */
			async function setupIssuer(setupId: string, success: boolean): Promise<void> {
				if (success) await stripe.setupIntents.confirm(setupId);
				else await stripe.setupIntents.cancel(setupId);
			}

			test("When the issuer asks for a challenge and the buyer completes it, then the set-up waits for it and is approved afterwards; nothing is charged", async () => {
				const card = await threeDSCard();

				const asked = await pay(card, "setup");
				const before = await afterChallenge(asked.reference!, "setup");
				await setupIssuer(asked.reference!, true);
				const after = await afterChallenge(asked.reference!, "setup");

				expect(asked).toMatchObject({ status: "AWAITING_BUYER", reference: expect.stringMatching(/^seti_/), challengeUrl: "about:blank" });
				expect(before).toMatchObject({ status: "AWAITING_BUYER", reference: asked.reference });
				expect(after).toMatchObject({ status: "APPROVED", reference: asked.reference, authentication: { outcome: "CHALLENGED" } });
				expect(await chargesOf(card)).toEqual([]);
			});

			test("When the buyer fails it, then the set-up is declined authentication_failed", async () => {
				const card = await threeDSCard();

				const asked = await pay(card, "setup");
				await setupIssuer(asked.reference!, false);

				expect(await afterChallenge(asked.reference!, "setup")).toMatchObject({
					status: "DECLINED",
					reason: "authentication_failed",
					authentication: { outcome: "FAILED" },
				});
			});

			test("When the buyer abandons it, then a lookup (the session over) cancels the SetupIntent and answers that nothing was set up", async () => {
				const card = await threeDSCard();
				const key = keyFor("pay");

				const asked = await pay(card, "setup", key);
				const found = await connector.lookup({ idempotencyKey: key, kind: "setup", mid: MID, reference: asked.reference! });

				expect(found).toBeNull();
				expect(await stripe.setupIntents.retrieve(asked.reference!)).toMatchObject({ status: "canceled" });
			});
		});
	});

	test("When the call dies between remembering the intent and confirming it, then a lookup cancels it and answers null, and the key then charges exactly once", async () => {
		// Arrange
		const card = await verified("4242424242424242");
		const idempotencyKey = keyFor("charge");
		let stored: string | null = null;
		const dies: Remember = async reference => {
			stored = reference;
			throw new Error("the process died here");
		};
		await expect(charge(card, { idempotencyKey, remember: dies })).rejects.toThrow("the process died here");
		expect(await stripe.paymentIntents.retrieve(stored!)).toMatchObject({ status: "requires_confirmation" });

		// Act
		const found = await connector.lookup({ idempotencyKey, kind: "charge", mid: MID, reference: stored });
		const retried = await charge(card, { idempotencyKey });

		// Assert
		expect(found).toBeNull();
		expect(retried).toMatchObject(approved("pi"));
		const intents = await intentsOf(card);
		expect(intents.map(intent => [intent.id, intent.status, intent.metadata.idempotency_key]).sort()).toEqual(
			[
				[stored, "canceled", idempotencyKey],
				[retried.reference, "succeeded", idempotencyKey],
			].sort(),
		);
		expect((await chargesOf(card)).map(made => [made.payment_intent, made.status])).toEqual([[retried.reference, "succeeded"]]);
	});

	test("When nothing was remembered for a charge, hold or verification, then a lookup answers null without asking", async () => {
		// Act
		const found = await Promise.all(
			(["charge", "authorize", "verify"] as const).map(kind =>
				connector.lookup({ idempotencyKey: keyFor("lost"), kind, mid: MID, reference: null }),
			),
		);

		// Assert
		expect(found).toEqual([null, null, null]);
	});

	test("When the MID's key is refused (401), then a charge is declined as merchant_account_refused (MERCHANT_ACCOUNT) and a lookup is an ERROR", async () => {
		// Arrange: a publishable key configured where the secret key belongs.
		const mid = { midId: 8, accountId: 1, secretKey: "pk_test_not_a_secret_key" };
		const card = vaultCard("4242424242424242");

		// Act
		const charged = await connector.charge(
			{ idempotencyKey: keyFor("charge"), mid, card, amount: 1999, currency: "USD", initiator: "merchant" },
			rememberer().remember,
		);
		const found = await connector.lookup({ idempotencyKey: keyFor("lost"), kind: "charge", mid, reference: "pi_123" });
		const withoutKey = await connector.verify(
			{ idempotencyKey: keyFor("verify"), mid: { midId: 9, accountId: 1 }, card, cvc: "123" },
			rememberer().remember,
		);

		// Assert
		expect(charged).toEqual({ status: "DECLINED", reference: null, reason: "merchant_account_refused", hardDecline: false });
		expect(categoryOf(charged)).toBe(DeclineCategory.MerchantAccount);
		expect(found).toMatchObject({ status: "ERROR", reason: "merchant_account_refused" });
		expect(withoutKey).toEqual(charged);
	});

	test("When localstripe is killed, then a charge and a lookup answer ERROR instead of throwing", async () => {
		// Arrange: a server of this test's own, so the others keep theirs.
		const doomed = await startLocalstripe();
		const store = memoryKeyStore();
		// The same 10 s per request as the other connectors here: a fresh localstripe compiles its modules on its first requests.
		const onDoomed = createStripeConnector({ apiBase: doomed.url, keyStore: store, timeoutMs: 10_000, dialect: "localstripe" });
		const card = vaultCard("4242424242424242");
		expect(await onDoomed.verify({ idempotencyKey: keyFor("verify"), mid: MID, card, cvc: "123" }, rememberer().remember)).toMatchObject(
			approved("pm"),
		);
		const { remember, references } = rememberer();
		await doomed.stop();

		// Act
		const charged = await onDoomed.charge(
			{ idempotencyKey: keyFor("charge"), mid: MID, card, amount: 1999, currency: "USD", initiator: "merchant" },
			remember,
		);
		const found = await onDoomed.lookup({ idempotencyKey: keyFor("lost"), kind: "charge", mid: MID, reference: "pi_123" });

		// Assert: refused connections, so nothing was sent (the ledger then needs no lookup).
		expect(charged).toEqual({ ...unavailable, reference: null, neverSent: true });
		expect(references).toEqual([]);
		expect(found).toEqual({ ...unavailable, reference: "pi_123", neverSent: true });
	}, 60_000);
});

describe("no server at all", () => {
	test("When nothing listens on the port, then every operation answers ERROR processor_unavailable, marked never sent", async () => {
		// Arrange
		const connector = createStripeConnector({
			apiBase: `http://127.0.0.1:${await freePort()}`,
			keyStore: memoryKeyStore(),
			timeoutMs: 5000,
		});
		const card = vaultCard("4242424242424242");
		const op = { idempotencyKey: keyFor("dead"), mid: MID, card, amount: 1999, currency: "USD" };

		// Act
		const outcomes = [
			await connector.verify({ ...op, cvc: "123" }, rememberer().remember),
			await connector.charge({ ...op, initiator: "customer" }, rememberer().remember),
			await connector.authorize(op, rememberer().remember),
			await connector.capture({ ...op, reference: "pi_123" }),
			await connector.void({ ...op, reference: "pi_123" }),
			await connector.refund({ ...op, reference: "pi_123", cardToken: card.cardToken }, rememberer().remember),
			await connector.lookup({ ...op, kind: "charge", reference: "pi_123" }),
		];

		// Assert
		expect(outcomes.map(outcome => [outcome?.status, outcome?.reason, outcome?.neverSent])).toEqual(
			Array(7).fill(["ERROR", "processor_unavailable", true]),
		);
	});
});
