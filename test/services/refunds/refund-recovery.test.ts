// Refunds interrupted by a crash are settled by billing's recovery sweep
// (services/billing/refunds/refund-recovery.ts). Each test builds the state a crash
// leaves behind at one step of a refund, directly in the database (and, where
// the processor had already acted, in the sandbox processor's own ledger, by
// asking the real sandbox processor), dated past the grace period; the app's
// sweep runs every 200 ms. What the merchant sees is asserted through the API,
// a real webhook receiver and the sandbox processor's ledger.
import { randomBytes, randomUUID } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import { type Db, MongoClient } from "mongodb";
import { createBroker } from "../../../runtime/broker";
import { keyRecordOf } from "../../../services/refunds/idempotent-refund";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { type SandboxPayments, sandboxPayments } from "../../factories/sandbox-processor";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;
let client: MongoClient;
let billingDb: Db;
let refundsDb: Db;
/** The payments service, as billing calls it: what "the processor did it" means here. */
let processor: SandboxPayments;

beforeAll(async () => {
	app = await startApp({ env: { REFUND_RECOVERY_INTERVAL_MS: "200" } });
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const url = process.env.MONGO_URL!;
	client = await MongoClient.connect(url);
	billingDb = client.db(databaseNameFor("billing", url));
	refundsDb = client.db(databaseNameFor("refunds", url));
	processor = sandboxPayments(app);
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
	await client.close();
});

interface Transaction {
	id: number;
	type: string;
	amount: number;
	refundStatus: string;
	/** The processor's id of the charge. */
	transactionId: number;
	customerId: number;
}

/** A fresh paid checkout's charge (9.99 EUR). */
async function paidCharge(card: string = CARDS.visa): Promise<Transaction> {
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card })).body;
	const [tx] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
	return { ...tx, customerId };
}

const refundVia = (id: number, query = "", headers: Record<string, string> = {}) =>
	app.http().get(`/api/refund/${id}${query}`).set(bearer(shop)).set(headers);
const readTransaction = async (id: number) => (await app.http().get(`/api/transaction/${id}`).set(bearer(shop))).body;
const transactionsOf = async (customerId: number): Promise<{ id: number; type: string; amount: number }[]> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
const refundOperations = async (): Promise<{ idempotencyKey: string; outcome: PaymentOutcome | null }[]> =>
	(await admin(app).get("/sandbox/operations?kind=refund")).body;
const refundWebhooksOf = (customerId: number) =>
	receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.type === "REFUND" && e.customerId === customerId);

const LONG_AGO_MS = 10 * 60_000;
const newRefundId = () => `rf_crash_${randomBytes(8).toString("hex")}`;

// The steps of a refund (services/billing/refunds/refund-ledger.ts), each written as that step writes it.

/** Step 2: the amount reserved on the transaction, the refund listed as pending. */
async function reserve(tx: Transaction, refundId: string, amount: number): Promise<void> {
	await billingDb
		.collection("transactions")
		.updateOne({ _id: tx.id as never }, { $inc: { refundableRemaining: -amount }, $addToSet: { pendingRefunds: refundId } as never });
}

/** Step 3: the processor asked to refund, with the refund id as idempotency key. */
function askProcessor(tx: Transaction, refundId: string, amount: number): Promise<PaymentOutcome> {
	return processor.refund({ idempotencyKey: refundId, processorTransactionId: tx.transactionId, amount });
}

/** Step 4a: the REFUNDED transaction, with its REFUND webhook in its outbox. */
async function recordRefundTransaction(tx: Transaction, refundId: string, amount: number, outcome: PaymentOutcome): Promise<void> {
	const original = (await billingDb.collection("transactions").findOne({ _id: tx.id as never }))!;
	await billingDb.collection("transactions").insertOne({
		...original,
		_id: (900_000_000 + Math.floor(Math.random() * 1_000_000)) as never,
		timestamp: new Date(),
		type: "REFUNDED",
		amount: -amount,
		processorTransactionId: outcome.processorTransactionId,
		refundStatus: "NOT_REFUNDABLE",
		idempotencyKey: `refund:${refundId}`,
		refundableRemaining: 0,
		pendingRefunds: [],
		originalTransactionId: tx.id,
		outbox: [{ id: randomUUID(), type: "REFUND", createdAt: new Date() }],
	});
}

/** Step 4a, after the REFUNDED transaction: the refund no longer pending. */
async function releaseReservation(tx: Transaction, refundId: string): Promise<void> {
	await billingDb.collection("transactions").updateOne({ _id: tx.id as never }, { $pull: { pendingRefunds: refundId } as never });
}

/** Step 4b: the amount given back. */
async function giveBack(tx: Transaction, refundId: string, amount: number): Promise<void> {
	await billingDb
		.collection("transactions")
		.updateOne({ _id: tx.id as never }, { $inc: { refundableRemaining: amount }, $pull: { pendingRefunds: refundId } as never });
}

/**
 * Step 1, the refund recorded RESERVED by a request that then died, by default
 * dated past the grace period (and its request's lease with it). Written last,
 * so no sweep sees a state half built by the test.
 */
async function leftReserved(
	tx: Transaction,
	refundId: string,
	amount: number,
	createdAt = new Date(Date.now() - LONG_AGO_MS),
): Promise<void> {
	await billingDb.collection("refunds").insertOne({
		_id: refundId as never,
		accountId: shop.accountId,
		transactionId: tx.id,
		amount,
		status: "RESERVED",
		refundTransactionId: null,
		createdAt,
		settledAt: null,
		lease: { owner: "request", until: new Date(createdAt.getTime() + 120_000) },
	});
}

/** The merchant's keyed request, recorded by the refunds service before it called billing, unanswered. */
async function keyedRequestLeftUnanswered(tx: Transaction, idempotencyKey: string, amountToRefund?: string): Promise<string> {
	const { key, fingerprint, refundId } = keyRecordOf({ accountId: shop.accountId, id: tx.id, amountToRefund, idempotencyKey });
	await refundsDb
		.collection("refund_requests")
		.insertOne({ _id: key as never, fingerprint, refundId, answer: null, createdAt: new Date(Date.now() - LONG_AGO_MS) });
	return refundId;
}

/** Waits until billing has settled the refund (COMPLETED or FAILED). */
async function settled(refundId: string, timeoutMs = 10_000): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const refund = await billingDb.collection("refunds").findOne({ _id: refundId as never });
		if (refund && refund.status !== "RESERVED") return refund.status as string;
		if (Date.now() > deadline) throw new Error(`refund ${refundId} still ${refund?.status ?? "missing"} after ${timeoutMs} ms`);
		await new Promise(r => setTimeout(r, 50));
	}
}

/** Waits for `count` REFUND webhooks of the customer, then a little longer (and one more sweep) to catch extras. */
async function refundWebhooks(customerId: number, count: number): Promise<ReturnType<typeof refundWebhooksOf>> {
	const deadline = Date.now() + 10_000;
	while (refundWebhooksOf(customerId).length < count && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	await app.broker.call("billing.recoverRefunds");
	await new Promise(r => setTimeout(r, 1000));
	return refundWebhooksOf(customerId);
}

describe("A refund interrupted by a crash, after the grace period", () => {
	test("When the process died after the processor approved a full refund, then the sweep records the REFUNDED transaction, the original is REFUNDED, one REFUND webhook arrives, and the merchant's repeat gets the success", async () => {
		// Arrange: the merchant's keyed request reached billing, the processor refunded, then the process died.
		const tx = await paidCharge();
		const refundId = await keyedRequestLeftUnanswered(tx, `crash-approved-${tx.id}`);
		await reserve(tx, refundId, 999);
		const outcome = await askProcessor(tx, refundId, 999);
		await leftReserved(tx, refundId, 999);

		// Act
		const status = await settled(refundId);

		// Assert
		expect(outcome.status).toBe("APPROVED");
		expect(status).toBe("COMPLETED");
		expect(await readTransaction(tx.id)).toMatchObject({ refundStatus: "REFUNDED" });
		const all = await transactionsOf(tx.customerId);
		expect(all.map(t => [t.type, t.amount])).toEqual([
			["SUBSCRIPTION_START", 9.99],
			["REFUNDED", -9.99],
		]);
		expect(await readTransaction(all[1].id)).toMatchObject({
			type: "REFUNDED",
			amount: -9.99,
			transactionId: outcome.processorTransactionId,
			status: "APPROVED",
		});
		const webhooks = await refundWebhooks(tx.customerId, 1);
		expect(webhooks).toHaveLength(1);
		expect(webhooks[0]).toMatchObject({ transaction_id: all[1].id, data: { transaction: { type: "REFUNDED", amount: -9.99 } } });
		expect((await refundOperations()).filter(o => o.idempotencyKey === refundId).map(o => o.outcome?.status)).toEqual(["APPROVED"]);
		const repeat = await refundVia(tx.id, "", { "Idempotency-Key": `crash-approved-${tx.id}` });
		expect(repeat.body).toEqual({ success: true, message: "Refund success with amount 9.99" });
		expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED")).toHaveLength(1);
	});

	test.each([
		["before the reservation was settled", false],
		["after the reservation was settled", true],
	])(
		"When the process died after the REFUNDED transaction was written, %s, then the refund is completed with that transaction and its one webhook",
		async (_, released) => {
			// Arrange
			const tx = await paidCharge();
			const refundId = newRefundId();
			await reserve(tx, refundId, 999);
			const outcome = await askProcessor(tx, refundId, 999);
			await recordRefundTransaction(tx, refundId, 999, outcome);
			if (released) await releaseReservation(tx, refundId);
			await leftReserved(tx, refundId, 999);

			// Act
			const status = await settled(refundId);

			// Assert
			expect(status).toBe("COMPLETED");
			expect(await readTransaction(tx.id)).toMatchObject({ refundStatus: "REFUNDED" });
			expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED").map(t => t.amount)).toEqual([-9.99]);
			expect(await refundWebhooks(tx.customerId, 1)).toHaveLength(1);
			expect((await refundVia(tx.id)).body).toEqual({ success: false, message: `This transaction is not refundable ${tx.id}` });
		},
	);

	test("When the process died before the processor was asked, then the reservation is given back, no webhook, the processor's ledger has no refund, and the merchant's repeat gets the failure", async () => {
		// Arrange: a partial keyed refund reserved, and nothing more.
		const tx = await paidCharge();
		const key = `crash-unasked-${tx.id}`;
		const refundId = await keyedRequestLeftUnanswered(tx, key, "4");
		await reserve(tx, refundId, 400);
		await leftReserved(tx, refundId, 400);

		// Act
		const status = await settled(refundId);

		// Assert
		expect(status).toBe("FAILED");
		expect(await readTransaction(tx.id)).toMatchObject({ refundStatus: "REFUNDABLE" });
		expect(await transactionsOf(tx.customerId)).toHaveLength(1);
		expect(await refundWebhooks(tx.customerId, 0)).toEqual([]);
		expect((await refundOperations()).filter(o => o.idempotencyKey === refundId)).toEqual([]);
		const repeat = await refundVia(tx.id, "?amountToRefund=4", { "Idempotency-Key": key });
		expect(repeat.body).toEqual({
			success: false,
			message: "Refund failed: the payment processor did not accept it; nothing was refunded",
		});
		expect((await refundOperations()).filter(o => o.idempotencyKey === refundId)).toEqual([]);
		// The whole 9.99 is refundable again.
		expect((await refundVia(tx.id)).body).toEqual({ success: true, message: "Refund success with amount 9.99" });
	});

	test.each([
		["before it gave the reservation back", false],
		["between giving the reservation back and marking the refund FAILED", true],
	])("When the processor declined and the process died %s, then the amount is given back exactly once", async (_, givenBack) => {
		// Arrange: a charge on the card whose refunds the sandbox declines.
		const tx = await paidCharge(CARDS.refundsDeclined);
		const refundId = newRefundId();
		await reserve(tx, refundId, 500);
		const outcome = await askProcessor(tx, refundId, 500);
		if (givenBack) await giveBack(tx, refundId, 500);
		await leftReserved(tx, refundId, 500);

		// Act
		const status = await settled(refundId);

		// Assert: 9.99 is left, no more (10 is too high), no less (9.99 passes the amount check and reaches the processor, which declines).
		expect(outcome.status).toBe("DECLINED");
		expect(status).toBe("FAILED");
		expect(await readTransaction(tx.id)).toMatchObject({ refundStatus: "REFUNDABLE" });
		expect((await refundVia(tx.id, "?amountToRefund=10")).body).toEqual({
			success: false,
			message: "Refund amount is higher than amount in transaction",
		});
		expect((await refundVia(tx.id, "?amountToRefund=9.99")).body).toEqual({
			success: false,
			message: expect.stringContaining("payment processor did not accept it"),
		});
		expect(await transactionsOf(tx.customerId)).toHaveLength(1);
		expect(await refundWebhooks(tx.customerId, 0)).toEqual([]);
	});

	test("When a refund was recorded but its reservation never happened, then it is FAILED and what is left to refund is untouched", async () => {
		// Arrange: the refund record, then the process died (or the database dropped) before the reserving update.
		const tx = await paidCharge();
		const refundId = newRefundId();
		await leftReserved(tx, refundId, 300);

		// Act
		const status = await settled(refundId);

		// Assert
		expect(status).toBe("FAILED");
		expect(await refundWebhooks(tx.customerId, 0)).toEqual([]);
		expect((await refundOperations()).filter(o => o.idempotencyKey === refundId)).toEqual([]);
		expect((await refundVia(tx.id)).body).toEqual({ success: true, message: "Refund success with amount 9.99" });
	});

	test("When a refund is younger than the grace period, then the sweep leaves it to its request", async () => {
		// Arrange: reserved a moment ago; its request may still be at work.
		const tx = await paidCharge();
		const refundId = newRefundId();
		await reserve(tx, refundId, 100);
		await leftReserved(tx, refundId, 100, new Date());

		// Act
		await app.broker.call("billing.recoverRefunds");
		await new Promise(r => setTimeout(r, 600));

		// Assert
		expect((await billingDb.collection("refunds").findOne({ _id: refundId as never }))?.status).toBe("RESERVED");
		expect((await refundVia(tx.id, "?amountToRefund=9.99")).body).toEqual({
			success: false,
			message: "Refund amount is higher than amount in transaction",
		});
	});
});

describe("Recovery on several billing nodes", () => {
	let second: ServiceBroker;

	beforeAll(async () => {
		// A second billing node (with the payments and accounts it asks) on the same database (no transporter: its webhooks leave through the first node's relay).
		second = createBroker(["billing", "payments", "accounts"], { nodeID: "billing-2", logger: false });
		await second.start();
	});
	afterAll(() => second.stop());

	test("When two billing nodes sweep at once, then each stranded refund is settled once", async () => {
		// Arrange: on one charge two approved partial refunds and one never asked; on another an approved full refund.
		const [partly, fully] = [await paidCharge(), await paidCharge()];
		const approved = [
			{ tx: partly, id: newRefundId(), amount: 200 },
			{ tx: partly, id: newRefundId(), amount: 300 },
			{ tx: fully, id: newRefundId(), amount: 999 },
		];
		const unasked = { tx: partly, id: newRefundId(), amount: 100 };
		for (const r of [...approved, unasked]) await reserve(r.tx, r.id, r.amount);
		for (const r of approved) expect((await askProcessor(r.tx, r.id, r.amount)).status).toBe("APPROVED");
		await Promise.all([...approved, unasked].map(r => leftReserved(r.tx, r.id, r.amount)));

		// Act: both nodes' timers run, and ops asks both nodes at once.
		await Promise.all([
			app.broker.call("billing.recoverRefunds"),
			second.call("billing.recoverRefunds"),
			second.call("billing.recoverRefunds"),
		]);
		const statuses = await Promise.all([...approved, unasked].map(r => settled(r.id)));

		// Assert
		expect(statuses).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "FAILED"]);
		expect(
			(await transactionsOf(partly.customerId))
				.filter(t => t.type === "REFUNDED")
				.map(t => t.amount)
				.sort((a, b) => a - b),
		).toEqual([-3, -2]);
		expect((await transactionsOf(fully.customerId)).filter(t => t.type === "REFUNDED").map(t => t.amount)).toEqual([-9.99]);
		expect(await refundWebhooks(partly.customerId, 2)).toHaveLength(2);
		expect(await refundWebhooks(fully.customerId, 1)).toHaveLength(1);
		expect(await readTransaction(fully.id)).toMatchObject({ refundStatus: "REFUNDED" });
		expect(await readTransaction(partly.id)).toMatchObject({ refundStatus: "REFUNDABLE" });
		expect((await refundOperations()).filter(o => o.idempotencyKey === unasked.id)).toEqual([]);
		// 9.99 - 2 - 3 is left: the never-asked 1.00 came back.
		expect((await refundVia(partly.id)).body).toEqual({ success: true, message: "Refund success with amount 4.99" });
	}, 30_000);
});

describe("A merchant repeating a crashed refund", () => {
	test("When the repeat comes while the refund's first request may still be at work, then 'still being processed'; once the grace period is over, the repeat resumes it once", async () => {
		// Arrange: a keyed full refund reserved, processor not asked, its request 40 s old (the refunds service calls it abandoned after 30 s).
		const tx = await paidCharge();
		const key = `crash-repeat-${tx.id}`;
		const refundId = await keyedRequestLeftUnanswered(tx, key);
		await reserve(tx, refundId, 999);
		await leftReserved(tx, refundId, 999, new Date(Date.now() - 40_000));

		// Act
		const early = await refundVia(tx.id, "", { "Idempotency-Key": key });
		// The grace period passes; the repeat comes before any sweep settles it (the sweep would only look the key up, and give back).
		await billingDb
			.collection("refunds")
			.updateOne({ _id: refundId as never }, { $set: { lease: { owner: "request", until: new Date(Date.now() - 1) } } });
		const later = await refundVia(tx.id, "", { "Idempotency-Key": key });
		const again = await refundVia(tx.id, "", { "Idempotency-Key": key });

		// Assert
		expect(early.body).toEqual({ success: false, message: "A request with this Idempotency-Key is still being processed; retry shortly" });
		expect(later.body).toEqual({ success: true, message: "Refund success with amount 9.99" });
		expect(again.body).toEqual(later.body);
		expect(await settled(refundId)).toBe("COMPLETED");
		expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED").map(t => t.amount)).toEqual([-9.99]);
		expect(await refundWebhooks(tx.customerId, 1)).toHaveLength(1);
	}, 30_000);
});
