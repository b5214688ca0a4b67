// Stripe's disputes and early fraud warnings reach us through the MID's own
// endpoint, POST /api/processors/stripe/{midId}/events (docs/api.md#stripe-events).
// A production account's two Stripe MIDs, each with its webhook signing secret,
// charge real checkouts on localstripe; the tests then build events as Stripe
// sends them, sign them with the library's own helper and post them over HTTP.
// localstripe 1.15.10 keeps each PaymentIntent with its metadata (our
// idempotency key), which is how an event finds its charge. It has no disputes
// of its own (the events are built here), and it keeps one store whatever the
// key, so "a payment another Stripe account made" is one it does not have.
// The last describe reads events as a pure function, for the dispute statuses
// localstripe cannot produce.
import { randomBytes } from "node:crypto";
import type Stripe from "stripe";
import { type StripeServer, startLocalstripe, stripeClient } from "../../../dev/stripe-servers";
import { readEvent } from "../../../services/payments/connectors/stripe/events";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { everythingStored } from "../../factories/stored-text";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(60_000);

const liveKey = () => `sk_live_${randomBytes(12).toString("hex")}`;
/** A signing secret as Stripe's dashboard shows it, unique per call so a leak is found by its text. */
const signingSecret = () => `whsec_${randomBytes(16).toString("hex")}Zq7`;
const uniqueId = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Transaction {
	id: number;
	type: string;
	status: string;
	amount: number;
	midId: number;
	processorReference: string | null;
	refundStatus: string;
}

interface Paid {
	customerId: number;
	charge: Transaction;
}

describe("Stripe's events for a MID, over HTTP, on localstripe", () => {
	let server: StripeServer;
	let stripe: Stripe;
	let app: TestApp;
	let shop: Shop;
	/** Each MID's webhook signing secret. */
	const secrets = new Map<number, string>();
	const logs: string[] = [];

	beforeAll(async () => {
		server = await startLocalstripe();
		stripe = stripeClient(server);
		app = await startApp({
			env: { STRIPE_API_BASE: server.url, STRIPE_API_DIALECT: "localstripe" },
			onLog: line => logs.push(line),
			logLevel: "debug",
		});
		const first = signingSecret();
		shop = await createShop(app, { environment: "production", processor: { type: "stripe", secretKey: liveKey(), webhookSecret: first } });
		secrets.set(shop.mids[0], first);
		// Every checkout here pays with the same card: a dispute would otherwise block it for the next (docs/disputes.md#protection).
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, { disputeProtection: { blockCard: false } })
			.expect(200);
		// The second MID is another Stripe account: its own key and its own secret.
		const second = signingSecret();
		await admin(app)
			.patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.mids[1]}`, {
				processor: { type: "stripe", secretKey: liveKey(), webhookSecret: second },
			})
			.expect(200);
		secrets.set(shop.mids[1], second);
	}, 120_000);
	afterAll(async () => {
		await app?.stop();
		await server?.stop();
	});

	const api = (path: string) => app.http().get(path).set(bearer(shop));
	const otherMid = (midId: number) => shop.mids.find(id => id !== midId)!;

	/** A buyer's CHARGE checkout, paid on one of the shop's MIDs (the checkout takes them in turn). */
	async function paid(): Promise<Paid> {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });
		expect(res.body.code).toBe("OK");
		const [charge] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${res.body.customerId}/transactions`).expect(200))
			.body as Transaction[];
		return { customerId: res.body.customerId, charge };
	}

	/** The dispute of a charge: the same id in each of its events, as at Stripe. */
	const disputeIdOf = (charge: Pick<Transaction, "processorReference">) => `du_${charge.processorReference!.slice(3)}`;

	/** A `charge.dispute.*` event about the charge's PaymentIntent, as Stripe sends it. */
	function disputeEvent(type: string, charge: Transaction, dispute: Record<string, unknown> = {}) {
		const created = nowSeconds();
		return {
			id: uniqueId("evt"),
			object: "event",
			api_version: "2026-10-28.endive",
			created,
			livemode: true,
			pending_webhooks: 1,
			type,
			data: {
				object: {
					id: disputeIdOf(charge),
					object: "dispute",
					amount: 999,
					currency: "eur",
					reason: "fraudulent",
					status: "needs_response",
					evidence_details: { due_by: created + 7 * 86_400, has_evidence: false, past_due: false, submission_count: 0 },
					payment_intent: charge.processorReference,
					charge: null,
					created,
					livemode: true,
					metadata: {},
					...dispute,
				},
			},
		};
	}

	function fraudWarningEvent(charge: Transaction) {
		const created = nowSeconds();
		return {
			id: uniqueId("evt"),
			object: "event",
			created,
			livemode: true,
			type: "radar.early_fraud_warning.created",
			data: {
				object: {
					id: uniqueId("issfr"),
					object: "radar.early_fraud_warning",
					actionable: true,
					charge: uniqueId("ch"),
					created,
					fraud_type: "made_with_stolen_card",
					livemode: true,
					payment_intent: charge.processorReference,
				},
			},
		};
	}

	/**
	 * POSTs the event to the MID's endpoint as Stripe does: the JSON as text, signed with `secret` (none: no
	 * Stripe-Signature), `secondsAgo` in the past.
	 */
	function deliver(midId: number, event: object | string, options: { secret?: string | null; secondsAgo?: number } = {}) {
		// Indented, as Stripe sends it: the signature holds only for these exact bytes.
		const payload = typeof event === "string" ? event : JSON.stringify(event, null, 2);
		const secret = options.secret === undefined ? secrets.get(midId)! : options.secret;
		const req = app.http().post(`/api/processors/stripe/${midId}/events`).set("Content-Type", "application/json; charset=utf-8");
		if (secret !== null) {
			const timestamp = nowSeconds() - (options.secondsAgo ?? 0);
			req.set("Stripe-Signature", stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }));
		}
		return req.send(payload);
	}

	const disputesOf = async (transactionId: number) =>
		(await api("/api/disputes?limit=100").expect(200)).body.data.filter(
			(d: { disputedTransactionId: number }) => d.disputedTransactionId === transactionId,
		) as Record<string, unknown>[];
	const transaction = async (id: number) => (await api(`/api/transaction/${id}`).expect(200)).body as Transaction;
	const eventTypesOf = async (customerId: number) =>
		((await api(`/api/events?customerId=${customerId}&limit=100`).expect(200)).body.data as { type: string }[]).map(e => e.type);
	/** The customer's DISPUTE_OPENED events, once the first is there. */
	const openedEvents = (customerId: number) =>
		eventually(async () => {
			const opened = (await eventTypesOf(customerId)).filter(type => type === "DISPUTE_OPENED");
			expect(opened.length).toBeGreaterThan(0);
			return opened;
		}, 15_000);

	/** Nothing of the event reached the charge: no dispute, still refundable. */
	async function expectNothingApplied(charge: Transaction) {
		expect(await disputesOf(charge.id)).toEqual([]);
		expect((await transaction(charge.id)).refundStatus).toBe("REFUNDABLE");
	}

	describe("A dispute", () => {
		test("When Stripe sends a signed charge.dispute.created, then 200, the dispute is listed, the transaction is DISPUTED and DISPUTE_OPENED is among the events", async () => {
			// Arrange
			const { customerId, charge } = await paid();

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", charge));

			// Assert
			expect(res.status).toBe(200);
			expect(res.body).toEqual({ received: true });
			expect(await disputesOf(charge.id)).toEqual([
				expect.objectContaining({
					customerId,
					midId: charge.midId,
					status: "NEEDS_RESPONSE",
					reason: "fraudulent",
					amount: 9.99,
					currency: "EUR",
					processorReference: disputeIdOf(charge),
					evidenceDueBy: expect.any(String),
					chargebackTransactionId: null,
				}),
			]);
			expect((await transaction(charge.id)).refundStatus).toBe("DISPUTED");
			expect(await openedEvents(customerId)).toEqual(["DISPUTE_OPENED"]);
		});

		test("When charge.dispute.closed says lost, then the dispute is LOST, with its CHARGEBACK transaction, and the charge CHARGED_BACK", async () => {
			// Arrange
			const { charge } = await paid();
			await deliver(charge.midId, disputeEvent("charge.dispute.created", charge)).expect(200);

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.closed", charge, { status: "lost" }));

			// Assert
			expect(res.status).toBe(200);
			const [dispute] = await disputesOf(charge.id);
			expect(dispute).toMatchObject({ status: "LOST", closedAt: expect.any(String), chargebackTransactionId: expect.any(Number) });
			expect(await transaction(dispute.chargebackTransactionId as number)).toMatchObject({ type: "CHARGEBACK", amount: -9.99 });
			expect((await transaction(charge.id)).refundStatus).toBe("CHARGED_BACK");
		});

		test("When the dispute names the charge and no PaymentIntent, then it is found through the charge's intent", async () => {
			// Arrange
			const { charge } = await paid();
			const latest = (await stripe.paymentIntents.retrieve(charge.processorReference!)).latest_charge;
			const chargeId = typeof latest === "string" ? latest : latest!.id;

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", charge, { payment_intent: null, charge: chargeId }));

			// Assert
			expect(res.status).toBe(200);
			expect(await disputesOf(charge.id)).toEqual([expect.objectContaining({ status: "NEEDS_RESPONSE" })]);
		});
	});

	describe("What is refused, and nothing applied", () => {
		test.each([
			["no Stripe-Signature header", { secret: null }],
			["a signature made with another secret", { secret: signingSecret() }],
			["a signature 10 minutes old (a replay)", { secondsAgo: 600 }],
		])("When the event comes with %s, then 400 and nothing is applied", async (_, options) => {
			// Arrange
			const { charge } = await paid();

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", charge), options);

			// Assert
			expect(res.status).toBe(400);
			expect(res.body).toEqual({
				error: "BAD_REQUEST",
				status: 400,
				message:
					"The Stripe-Signature header is missing, was not made with this merchant account's webhook signing secret, or is more than 5 minutes old",
			});
			await expectNothingApplied(charge);
		});

		test("When an event signed with MID A's secret is posted to MID B's endpoint, then 400 and nothing is applied", async () => {
			// Arrange
			const { charge } = await paid();
			const event = disputeEvent("charge.dispute.created", charge);

			// Act
			const res = await deliver(otherMid(charge.midId), event, { secret: secrets.get(charge.midId)! });

			// Assert
			expect(res.status).toBe(400);
			expect(res.body.message).toMatch(/^The Stripe-Signature header/);
			await expectNothingApplied(charge);
		});

		test("When MID B signs an event about a charge MID A made, then 400 naming the other merchant account, and nothing is applied", async () => {
			// Arrange
			const { charge } = await paid();

			// Act
			const res = await deliver(otherMid(charge.midId), disputeEvent("charge.dispute.created", charge));

			// Assert
			expect(res.status).toBe(400);
			expect(res.body.message).toBe("The event's charge was made on another merchant account");
			await expectNothingApplied(charge);
		});

		test("When the event names a PaymentIntent the MID's Stripe account does not have, then 400", async () => {
			// Arrange
			const { charge } = await paid();

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", { ...charge, processorReference: uniqueId("pi") }));

			// Assert
			expect(res.status).toBe(400);
			expect(res.body.message).toBe("The event names a payment this merchant account's Stripe account does not have");
			await expectNothingApplied(charge);
		});

		test.each([
			["not JSON", () => "not json"],
			["a dispute without its amount", (charge: Transaction) => disputeEvent("charge.dispute.created", charge, { amount: undefined })],
		])("When a signed body is %s, then 400 and nothing is applied", async (_, body) => {
			// Arrange
			const { charge } = await paid();

			// Act
			const res = await deliver(charge.midId, body(charge));

			// Assert
			expect(res.status).toBe(400);
			expect(res.body.message).toBe("The body is not a Stripe event");
			await expectNothingApplied(charge);
		});

		test("When the body is not sent as JSON, then 400 and nothing is applied", async () => {
			// Arrange
			const { charge } = await paid();
			const payload = JSON.stringify(disputeEvent("charge.dispute.created", charge));
			const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: secrets.get(charge.midId)! });

			// Act
			const res = await app
				.http()
				.post(`/api/processors/stripe/${charge.midId}/events`)
				.set("Content-Type", "text/plain")
				.set("Stripe-Signature", signature)
				.send(payload);

			// Assert
			expect(res.status).toBe(400);
			expect(res.body.message).toBe("The body must be the event as JSON (Content-Type: application/json)");
			await expectNothingApplied(charge);
		});

		test("When the MID does not exist, then 400", async () => {
			const res = await deliver(987_654_321, { id: uniqueId("evt") }, { secret: signingSecret() });

			expect(res.status).toBe(400);
			expect(res.body.message).toBe("This merchant account is not on Stripe: it takes no Stripe events");
		});
	});

	describe("Repeats", () => {
		test("When the same event comes twice, then both answer 200 and it is applied once: one dispute, one DISPUTE_OPENED", async () => {
			// Arrange
			const { customerId, charge } = await paid();
			const event = disputeEvent("charge.dispute.created", charge);

			// Act
			const first = await deliver(charge.midId, event);
			const again = await deliver(charge.midId, event);

			// Assert
			expect([first.status, again.status]).toEqual([200, 200]);
			expect(await disputesOf(charge.id)).toHaveLength(1);
			expect(await openedEvents(customerId)).toEqual(["DISPUTE_OPENED"]);
		});

		test("When the same event comes twice at once, then both answer 200 and it is applied once: one dispute, one DISPUTE_OPENED", async () => {
			// Arrange
			const { customerId, charge } = await paid();
			const event = disputeEvent("charge.dispute.created", charge);

			// Act
			const answers = await Promise.all([deliver(charge.midId, event), deliver(charge.midId, event)]);

			// Assert
			expect(answers.map(res => res.status)).toEqual([200, 200]);
			expect(await disputesOf(charge.id)).toHaveLength(1);
			expect(await openedEvents(customerId)).toEqual(["DISPUTE_OPENED"]);
		});

		test("When an early fraud warning comes twice at once, then the charge is refunded once: one REFUNDED transaction, one refund at Stripe", async () => {
			// Arrange
			const { customerId, charge } = await paid();
			const event = fraudWarningEvent(charge);

			// Act
			const answers = await Promise.all([deliver(charge.midId, event), deliver(charge.midId, event)]);

			// Assert
			expect(answers.map(res => res.status)).toEqual([200, 200]);
			const transactions = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200))
				.body as Transaction[];
			expect(transactions.filter(t => t.type === "REFUNDED")).toEqual([expect.objectContaining({ amount: -9.99, status: "APPROVED" })]);
			expect((await transaction(charge.id)).refundStatus).toBe("REFUNDED");
			expect((await stripe.refunds.list({ payment_intent: charge.processorReference! })).data.map(r => r.amount)).toEqual([999]);
		});
	});

	describe("What is acknowledged and ignored", () => {
		test("When Stripe sends another event type, then 200 and nothing changes", async () => {
			// Arrange
			const { charge } = await paid();
			const event = { ...disputeEvent("payment_intent.succeeded", charge), data: { object: { id: charge.processorReference } } };

			// Act
			const res = await deliver(charge.midId, event);

			// Assert
			expect(res.status).toBe(200);
			expect(res.body).toEqual({ received: true });
			await expectNothingApplied(charge);
		});

		test.each([
			["without our key (made outside this service)", {}],
			["with a key no charge of ours has", { idempotency_key: "not-one-of-ours:charge" }],
		])("When a dispute concerns a PaymentIntent of the MID's account %s, then 200 and nothing is applied", async (_, metadata) => {
			// Arrange: a payment the merchant made on its Stripe account directly.
			const { charge } = await paid();
			const customer = await stripe.customers.create({});
			const method = await stripe.paymentMethods.create({
				type: "card",
				card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
			});
			await stripe.paymentMethods.attach(method.id, { customer: customer.id });
			const intent = await stripe.paymentIntents.create({
				amount: 500,
				currency: "eur",
				customer: customer.id,
				payment_method: method.id,
				metadata,
			});

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", { ...charge, processorReference: intent.id }));

			// Assert
			expect(res.status).toBe(200);
			await expectNothingApplied(charge);
		});
	});

	describe("The webhook signing secret", () => {
		test("When MIDs were given webhook secrets, then the admin API shows only their last 4 characters, and no database or log line holds one", async () => {
			// Act
			const listed = await admin(app).get(`/accounts/${shop.accountId}/merchant-accounts`).expect(200);

			// Assert
			for (const [midId, secret] of secrets) {
				expect(listed.body.find((m: { id: number }) => m.id === midId).processor).toEqual({
					type: "stripe",
					keyMode: "live",
					secretKeyLast4: expect.any(String),
					webhookSecretLast4: secret.slice(-4),
				});
				expect(listed.text).not.toContain(secret.slice(0, -4));
				expect(await everythingStored(["accounts", "payments", "billing", "notifications"])).not.toContain(secret.slice(6));
				expect(logs.filter(line => line.includes(secret.slice(6)))).toEqual([]);
			}
		});

		test("When a MID's processor is replaced without a webhook secret, then it shows none and its events are refused", async () => {
			// Arrange
			const secret = signingSecret();
			const mid = (
				await admin(app)
					.post(`/accounts/${shop.accountId}/merchant-accounts`, {
						name: "Stripe without events",
						group: "spare",
						cardTypes: ["visa"],
						processor: { type: "stripe", secretKey: liveKey(), webhookSecret: secret },
					})
					.expect(201)
			).body;

			// Act
			const res = await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${mid.id}`, {
				processor: { type: "stripe", secretKey: liveKey() },
			});
			const event = await deliver(mid.id, { id: uniqueId("evt") }, { secret });

			// Assert
			expect(mid.processor.webhookSecretLast4).toBe(secret.slice(-4));
			expect(res.status).toBe(200);
			expect(res.body.processor.webhookSecretLast4).toBeNull();
			expect(event.status).toBe(400);
			expect(event.body.message).toBe(
				"This merchant account has no webhook signing secret (processor.webhookSecret): its events cannot be verified",
			);
		});
	});

	// Last: it stops localstripe.
	describe("Stripe out of reach", () => {
		test("When Stripe cannot be reached to read the event's payment, then 503 and nothing is applied (Stripe sends it again)", async () => {
			// Arrange
			const { charge } = await paid();
			await server.stop();

			// Act
			const res = await deliver(charge.midId, disputeEvent("charge.dispute.created", charge));

			// Assert
			expect(res.status).toBe(503);
			expect(res.body.message).toBe("Stripe could not be reached to read the event's payment: nothing was applied; send it again");
			await expectNothingApplied(charge);
		});
	});
});

// localstripe has no disputes: the events above are built with the statuses a new and a lost dispute have. The
// translation of the others (inquiries, reviews, wins, a status Stripe adds later) is read here as a pure function.
describe("readEvent, as a pure function: the dispute statuses localstripe cannot produce", () => {
	const disputeOf = (status: string, extra: Record<string, unknown> = {}) => ({
		id: "evt_1",
		object: "event",
		type: "charge.dispute.updated",
		created: 1_800_000_000,
		data: {
			object: {
				id: "du_1",
				object: "dispute",
				amount: 1250,
				currency: "usd",
				reason: "product_not_received",
				status,
				evidence_details: { due_by: 1_800_604_800 },
				payment_intent: "pi_1",
				charge: "ch_1",
				...extra,
			},
		},
	});
	const noticeOf = (event: unknown) => {
		const reading = readEvent(event);
		if (typeof reading === "string" || reading.concerns === null) throw new Error(`not a notice: ${JSON.stringify(reading)}`);
		return reading.notice(7, "attempt-1:charge");
	};

	test.each([
		["warning_needs_response", "NEEDS_RESPONSE"],
		["needs_response", "NEEDS_RESPONSE"],
		["warning_under_review", "UNDER_REVIEW"],
		["under_review", "UNDER_REVIEW"],
		["warning_closed", "WON"],
		["won", "WON"],
		["lost", "LOST"],
		["a_status_stripe_adds_later", "UNDER_REVIEW"],
	])("When a dispute's status is %s, then the notice's is %s", (status, ours) => {
		expect(noticeOf(disputeOf(status))).toEqual({
			kind: "dispute",
			id: "evt_1",
			midId: 7,
			chargeKey: "attempt-1:charge",
			reference: "du_1",
			at: "2027-01-15T08:00:00.000Z",
			status: ours,
			reason: "product_not_received",
			amount: 1250,
			currency: "USD",
			evidenceDueBy: "2027-01-22T08:00:00.000Z",
		});
	});

	test("When a dispute has no due date and its intent and charge come expanded, then evidenceDueBy is null and it concerns their ids", () => {
		const reading = readEvent(
			disputeOf("won", { evidence_details: { due_by: null }, payment_intent: { id: "pi_2" }, charge: { id: "ch_2" } }),
		);

		expect(reading).toMatchObject({ eventId: "evt_1", concerns: { paymentIntent: "pi_2", charge: "ch_2" } });
		expect(noticeOf(disputeOf("won", { evidence_details: { due_by: null } }))).toMatchObject({ evidenceDueBy: null });
	});

	test("When an early fraud warning is read, then it is a notice of its fraud type", () => {
		const event = {
			id: "evt_2",
			type: "radar.early_fraud_warning.created",
			created: 1_800_000_000,
			data: { object: { id: "issfr_1", fraud_type: "card_never_received", charge: "ch_1", payment_intent: null } },
		};

		expect(readEvent(event)).toMatchObject({ concerns: { paymentIntent: null, charge: "ch_1" } });
		expect(noticeOf(event)).toEqual({
			kind: "earlyFraudWarning",
			id: "evt_2",
			midId: 7,
			chargeKey: "attempt-1:charge",
			reference: "issfr_1",
			at: "2027-01-15T08:00:00.000Z",
			fraudType: "card_never_received",
		});
	});

	test.each([
		[
			"is of another type",
			"ignored",
			{ id: "evt_3", type: "customer.created", created: 1, data: { object: { id: "cus_1" } } },
			{ eventId: "evt_3", concerns: null },
		],
		["has no id", "MALFORMED", { ...disputeOf("lost"), id: undefined }, "MALFORMED"],
		["has a dispute of a negative amount", "MALFORMED", disputeOf("lost", { amount: -1 }), "MALFORMED"],
		["has a dispute of neither intent nor charge", "MALFORMED", disputeOf("lost", { payment_intent: null, charge: null }), "MALFORMED"],
		["has a due date that is not a time", "MALFORMED", disputeOf("lost", { evidence_details: { due_by: "soon" } }), "MALFORMED"],
		["is an array", "MALFORMED", [], "MALFORMED"],
	])("When the event %s, then it reads as %s", (_, __, event, expected) => {
		expect(readEvent(event)).toEqual(expected);
	});
});
