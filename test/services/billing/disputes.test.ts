// Disputes through the sandbox's dispute test cards and the test clock
// (docs/disputes.md): opened, reviewed, won or lost, with every state, the
// transactions, the refund endpoint's answer and the merchant's webhooks.
import { DateTime } from "luxon";
import { freePort } from "../../../dev/net";
import { createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

const DISPUTE_CARDS = {
	lost: "4000000000002602",
	wonWithEvidence: "4000000000002610",
	won: "4000000000002628",
	earlyFraudWarning: "4000000000002636",
} as const;

let app: TestApp;
let receiver: WebhookReceiver;
let metricsPort: number;

beforeAll(async () => {
	metricsPort = await freePort();
	app = await startApp({ env: { METRICS_PORT: String(metricsPort) } });
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

interface Paid {
	shop: Shop;
	customerId: number;
	transactionId: number;
	email: string;
}

/** A shop whose webhooks reach the receiver, and a customer who paid with `card`. */
async function paidWith(card: string, shop?: Shop): Promise<Paid> {
	shop ??= await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const email = uniqueEmail();
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, card, email });
	expect(res.body.code).toBe("OK");
	const [tx] = (await api(shop).get(`/api/customer/${res.body.customerId}/transactions`).expect(200)).body.data;
	return { shop, customerId: res.body.customerId, transactionId: tx.id, email };
}

const api = (shop: Shop) => ({
	get: (path: string) => app.http().get(path).set(bearer(shop)),
	post: (path: string, body: object) => app.http().post(path).set(bearer(shop)).send(body),
});

/** The customer's webhooks of these types, once at least `atLeast` of them arrived. */
async function webhooks(customerId: number, types: string[], atLeast: number) {
	const mine = () => receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === customerId && types.includes(e.type));
	const deadline = Date.now() + 10_000;
	while (mine().length < atLeast && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	return mine();
}

async function disputesOf(shop: Shop, query = "") {
	return (await api(shop).get(`/api/disputes${query}`).expect(200)).body;
}

describe("Disputes", () => {
	test("When a charge is disputed and the dispute is lost, then the transaction is not refundable, the customer is unsubscribed, and a CHARGEBACK is recorded", async () => {
		// Arrange
		const { shop, customerId, transactionId } = await paidWith(DISPUTE_CARDS.lost);

		// Act: past the dispute's opening (3 days after the charge).
		await advanceClock(app, shop, 4);

		// Assert: opened, needing a response by its due date.
		const [opened] = (await disputesOf(shop)).data;
		expect(opened).toMatchObject({
			customerId,
			disputedTransactionId: transactionId,
			chargebackTransactionId: null,
			status: "NEEDS_RESPONSE",
			reason: "fraudulent",
			amount: 9.99,
			currency: "EUR",
			evidence: null,
			closedAt: null,
		});
		expect(opened.processorReference).toMatch(/^sbxdp_[0-9a-f]{24}$/);
		expect(opened.evidenceDueBy).toEqual(expect.any(String));
		expect((await api(shop).get(`/api/disputes/${opened.id}`).expect(200)).body).toEqual(opened);
		expect((await api(shop).get(`/api/transaction/${transactionId}`).expect(200)).body.refundStatus).toBe("DISPUTED");
		expect((await api(shop).get(`/api/refund/${transactionId}`).expect(200)).body).toEqual({
			success: false,
			message: `This transaction is not refundable ${transactionId}`,
		});
		expect((await api(shop).get(`/api/customer/${customerId}`).expect(200)).body).toMatchObject({
			status: "UNSUBSCRIBED",
			renewalActive: false,
		});
		const [openedEvent] = await webhooks(customerId, ["DISPUTE_OPENED"], 1);
		expect(openedEvent).toMatchObject({ transaction_id: transactionId, data: { dispute: { id: opened.id, status: "NEEDS_RESPONSE" } } });
		expect(openedEvent.data.transaction).toMatchObject({ id: transactionId });
		expect(await webhooks(customerId, ["CANCELLATION"], 1)).toHaveLength(1);

		// Act: past its decision (12 days after the charge).
		await advanceClock(app, shop, 13);

		// Assert: lost, charged back.
		const closed = (await api(shop).get(`/api/disputes/${opened.id}`).expect(200)).body;
		expect(closed).toMatchObject({ status: "LOST", closedAt: expect.any(String), chargebackTransactionId: expect.any(Number) });
		const chargeback = (await api(shop).get(`/api/transaction/${closed.chargebackTransactionId}`).expect(200)).body;
		expect(chargeback).toMatchObject({ type: "CHARGEBACK", amount: -9.99, status: "APPROVED", refundStatus: "NOT_REFUNDABLE" });
		expect((await api(shop).get(`/api/transaction/${transactionId}`).expect(200)).body.refundStatus).toBe("CHARGED_BACK");
		const [closedEvent] = await webhooks(customerId, ["DISPUTE_CLOSED"], 1);
		expect(closedEvent.data).toMatchObject({ dispute: { status: "LOST" }, chargeback: { id: chargeback.id, amount: -9.99 } });
		// The events API holds the same events, each once.
		const events = (await api(shop).get(`/api/events?customerId=${customerId}`).expect(200)).body.data.map((e: { type: string }) => e.type);
		expect(events.filter((t: string) => t.startsWith("DISPUTE_")).sort()).toEqual(["DISPUTE_CLOSED", "DISPUTE_OPENED"]);
		expect(await webhooks(customerId, ["DISPUTE_OPENED", "DISPUTE_UPDATED", "DISPUTE_CLOSED"], 2)).toHaveLength(2);
	});

	test("When evidence is submitted and the dispute is won, then it was under review, and the transaction is refundable again", async () => {
		// Arrange
		const { shop, customerId, transactionId } = await paidWith(DISPUTE_CARDS.wonWithEvidence);
		await advanceClock(app, shop, 4);
		const [opened] = (await disputesOf(shop)).data;

		// Act
		const submitted = await api(shop).post(`/api/disputes/${opened.id}/evidence`, {
			evidence: { product_description: "A monthly plan", customer_email_address: "buyer@example.com" },
		});

		// Assert
		expect(submitted.status).toBe(200);
		expect(submitted.body).toMatchObject({
			status: "UNDER_REVIEW",
			evidence: { product_description: "A monthly plan", customer_email_address: "buyer@example.com" },
			evidenceSubmittedAt: expect.any(String),
		});
		const [updated] = await webhooks(customerId, ["DISPUTE_UPDATED"], 1);
		expect(updated.data.dispute.status).toBe("UNDER_REVIEW");
		// Evidence is taken once.
		expect((await api(shop).post(`/api/disputes/${opened.id}/evidence`, { evidence: { uncategorized_text: "again" } })).status).toBe(409);

		// Act: past its decision.
		await advanceClock(app, shop, 13);

		// Assert: won; the charge is the merchant's again, and refundable.
		expect((await api(shop).get(`/api/disputes/${opened.id}`).expect(200)).body).toMatchObject({
			status: "WON",
			chargebackTransactionId: null,
		});
		const [closed] = await webhooks(customerId, ["DISPUTE_CLOSED"], 1);
		expect(closed.data.dispute.status).toBe("WON");
		expect(closed.data.chargeback).toBeUndefined();
		expect((await api(shop).get(`/api/transaction/${transactionId}`).expect(200)).body.refundStatus).toBe("REFUNDABLE");
		expect((await api(shop).get(`/api/refund/${transactionId}`).expect(200)).body).toEqual({
			success: true,
			message: "Refund success with amount 9.99",
		});
	});

	test("When no evidence is submitted for a dispute that needs it, then the dispute is lost", async () => {
		// Arrange
		const { shop } = await paidWith(DISPUTE_CARDS.wonWithEvidence);

		// Act
		await advanceClock(app, shop, 13);

		// Assert: opened and decided in one move of the clock.
		expect((await disputesOf(shop)).data).toEqual([expect.objectContaining({ status: "LOST" })]);
	});

	test.each([
		{ card: DISPUTE_CARDS.lost, decided: "LOST", after: "CHARGED_BACK" },
		{ card: DISPUTE_CARDS.won, decided: "WON", after: "REFUNDABLE" },
	])(
		"When a dispute is opened and $decided in one move of the clock, then DISPUTE_OPENED shows its transaction DISPUTED and DISPUTE_CLOSED shows it $after, in the webhooks and in /api/events",
		async ({ card, decided, after }) => {
			// Arrange
			const { shop, customerId, transactionId } = await paidWith(card);

			// Act
			await advanceClock(app, shop, 13);

			// Assert
			const types = ["DISPUTE_OPENED", "DISPUTE_CLOSED"];
			const shown = (
				events: { type: string; data: { dispute: { status: string }; transaction: { id: number; refundStatus: string } } }[],
			) =>
				types.map(type => {
					const event = events.find(e => e.type === type);
					return [type, event?.data.dispute.status, event?.data.transaction.id, event?.data.transaction.refundStatus];
				});
			const expected = [
				["DISPUTE_OPENED", "NEEDS_RESPONSE", transactionId, "DISPUTED"],
				["DISPUTE_CLOSED", decided, transactionId, after],
			];
			expect(shown(await webhooks(customerId, types, 2))).toEqual(expected);
			const listed = (await api(shop).get(`/api/events?customerId=${customerId}`).expect(200)).body.data;
			expect(shown(listed)).toEqual(expected);
		},
	);

	test("When the clock moves twice at once, then each dispute is opened and decided once", async () => {
		// Arrange
		const { shop, customerId } = await paidWith(DISPUTE_CARDS.won);

		// Act
		await Promise.all([advanceClock(app, shop, 13), advanceClock(app, shop, 13)]);

		// Assert
		expect((await disputesOf(shop)).data).toEqual([expect.objectContaining({ status: "WON" })]);
		await webhooks(customerId, ["DISPUTE_CLOSED"], 1);
		await new Promise(r => setTimeout(r, 500));
		const events = await webhooks(customerId, ["DISPUTE_OPENED", "DISPUTE_UPDATED", "DISPUTE_CLOSED"], 2);
		expect(events.map(e => e.type).sort()).toEqual(["DISPUTE_CLOSED", "DISPUTE_OPENED"]);
	});

	test("When an early fraud warning arrives twice at once, then the charge is refunded exactly once and the customer unsubscribed", async () => {
		// Arrange
		const { shop, customerId, transactionId } = await paidWith(DISPUTE_CARDS.earlyFraudWarning);

		// Act: two calls to the same time (the second runs once the first is done, and finds it all applied)
		const advanceTo = new Date(Date.now() + 2 * 86_400_000).toISOString();
		const clock = () => admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo }).expect(200);
		await Promise.all([clock(), clock()]);

		// Assert
		const transactions = (await api(shop).get(`/api/customer/${customerId}/transactions`).expect(200)).body.data;
		expect(transactions.map((t: { type: string; amount: number }) => [t.type, t.amount]).sort()).toEqual([
			["REFUNDED", -9.99],
			["SUBSCRIPTION_START", 9.99],
		]);
		expect((await api(shop).get(`/api/transaction/${transactionId}`).expect(200)).body.refundStatus).toBe("REFUNDED");
		expect((await api(shop).get(`/api/customer/${customerId}`).expect(200)).body.status).toBe("UNSUBSCRIBED");
		expect(await webhooks(customerId, ["REFUND"], 1)).toHaveLength(1);
		expect((await disputesOf(shop)).data).toEqual([]);
	});

	test("When a dispute list is filtered by status, then only those disputes are listed; a bad status or evidence is refused", async () => {
		// Arrange: one lost, one needing a response, on one account.
		const first = await paidWith(DISPUTE_CARDS.lost);
		await advanceClock(app, first.shop, 13);
		// Bought at the account's now, 13 days on: disputed 3 days after that.
		await paidWith(DISPUTE_CARDS.wonWithEvidence, first.shop);
		await advanceClock(app, first.shop, 17);
		const { shop } = first;

		// Act
		const needing = await disputesOf(shop, "?status=NEEDS_RESPONSE");
		const lost = await disputesOf(shop, "?status=LOST");
		const page = await disputesOf(shop, "?limit=1");

		// Assert
		expect(needing.data.map((d: { status: string }) => d.status)).toEqual(["NEEDS_RESPONSE"]);
		expect(lost.data.map((d: { status: string }) => d.status)).toEqual(["LOST"]);
		expect(page.data).toHaveLength(1);
		expect(page.nextCursor).toEqual(expect.any(String));
		expect((await disputesOf(shop, `?limit=1&cursor=${page.nextCursor}`)).data).toHaveLength(1);
		const id = needing.data[0].id;
		expect((await api(shop).get("/api/disputes?status=OPEN")).status).toBe(400);
		expect((await api(shop).post(`/api/disputes/${id}/evidence`, { evidence: {} })).status).toBe(400);
		expect((await api(shop).post(`/api/disputes/${id}/evidence`, { evidence: { notes: "x" } })).status).toBe(400);
		expect((await api(shop).post(`/api/disputes/${id}/evidence`, { evidence: { uncategorized_text: 5 } })).status).toBe(400);
		expect((await api(shop).post(`/api/disputes/${lost.data[0].id}/evidence`, { evidence: { uncategorized_text: "late" } })).status).toBe(
			409,
		);
		// Another account's dispute is not found.
		const other = await createShop(app);
		expect((await api(other).get(`/api/disputes/${id}`)).status).toBe(404);
		expect((await api(other).post(`/api/disputes/${id}/evidence`, { evidence: { uncategorized_text: "x" } })).status).toBe(404);
	});
});

describe("Protection", () => {
	test("When a dispute opens, then the card is refused at the account's next checkout with BIN_BLACKLIST, before any verification, and the block is listed", async () => {
		// Arrange
		const { shop, transactionId } = await paidWith(DISPUTE_CARDS.lost);

		const verifications = async () => {
			const ops = (await admin(app).get("/sandbox/operations?cardBin=400000&kind=verify").expect(200)).body;
			return ops.filter((op: { midId: number }) => shop.mids.includes(op.midId)).length;
		};

		// Act
		await advanceClock(app, shop, 4);
		const verifiedBefore = await verifications();
		const again = await submitCheckout(app, shop, { productId: shop.products.oneOff, card: DISPUTE_CARDS.lost, email: uniqueEmail() });
		const otherCard = await submitCheckout(app, shop, { productId: shop.products.oneOff, email: uniqueEmail() });

		// Assert
		expect(again.body.code).toBe("BIN_BLACKLIST");
		expect(await verifications()).toBe(verifiedBefore);
		expect(otherCard.body.code).toBe("OK");
		const [dispute] = (await disputesOf(shop)).data;
		const blocks = (await admin(app).get(`/accounts/${shop.accountId}/blocked-buyers`).expect(200)).body;
		expect(blocks).toEqual([
			expect.objectContaining({
				kind: "CARD",
				cardBin: "400000",
				cardLast4: "2602",
				reason: "DISPUTE",
				disputeId: dispute.id,
				transactionId,
			}),
		]);
		// The email is not blocked by default.
		expect(blocks.some((b: { kind: string }) => b.kind === "EMAIL")).toBe(false);
	});

	test("When the account turns its protection off, then a dispute leaves the customer subscribed and the card usable, and a fraud warning refunds nothing", async () => {
		// Arrange
		const shop = await createShop(app);
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, {
				disputeProtection: { unsubscribe: false, blockCard: false, refundEarlyFraudWarnings: false },
			})
			.expect(200);
		const disputed = await paidWith(DISPUTE_CARDS.lost, shop);
		const warned = await paidWith(DISPUTE_CARDS.earlyFraudWarning, shop);

		// Act
		await advanceClock(app, shop, 4);

		// Assert
		expect((await disputesOf(shop)).data).toHaveLength(1);
		expect((await api(shop).get(`/api/customer/${disputed.customerId}`).expect(200)).body.status).toBe("ACTIVE");
		expect(
			(await submitCheckout(app, shop, { productId: shop.products.oneOff, card: DISPUTE_CARDS.lost, email: uniqueEmail() })).body.code,
		).toBe("OK");
		expect((await api(shop).get(`/api/transaction/${warned.transactionId}`).expect(200)).body.refundStatus).toBe("REFUNDABLE");
		expect((await api(shop).get(`/api/customer/${warned.customerId}`).expect(200)).body.status).toBe("ACTIVE");
	});

	test("When the account blocks emails too, then the disputed buyer's email is refused with another card", async () => {
		// Arrange
		const shop = await createShop(app);
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, { disputeProtection: { blockEmail: true } })
			.expect(200);
		const { email } = await paidWith(DISPUTE_CARDS.lost, shop);

		// Act
		await advanceClock(app, shop, 4);
		const res = await submitCheckout(app, shop, { productId: shop.products.oneOff, email });

		// Assert
		expect(res.body.code).toBe("BIN_BLACKLIST");
	});
});

describe("MID health", () => {
	test("When a MID sells, declines, refunds and is disputed, then its month and last 30 days count each, with the approval rate, the chargeback ratio and a warning", async () => {
		// Arrange: four sales (one disputed and lost), a decline and a refund, spread over the shop's two MIDs, all in one
		// month of the account's time: its clock is moved to the 2nd of next month first, whatever today is.
		const shop = await createShop(app);
		const second = DateTime.now().setZone("CET").plus({ months: 1 }).set({ day: 2, hour: 9 }).startOf("hour");
		await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: second.toUTC().toISO() }).expect(200);
		const disputed = await paidWith(DISPUTE_CARDS.lost, shop);
		const sold = [];
		for (let i = 0; i < 3; i++) sold.push(await paidWith("4242424242424242", shop));
		expect((await submitCheckout(app, shop, { productId: shop.products.charge, card: "4000000000009995" })).body.code).toBe(
			"PAYMENT_DECLINED",
		);
		expect((await api(shop).get(`/api/refund/${sold[0].transactionId}?amountToRefund=4.00`).expect(200)).body.success).toBe(true);
		await admin(app)
			.post(`/accounts/${shop.accountId}/clock`, { advanceTo: second.plus({ days: 13 }).toUTC().toISO() })
			.expect(200);

		// Act
		const health = (await admin(app).get(`/accounts/${shop.accountId}/merchant-account-health`).expect(200)).body;

		// Assert: the MIDs' counts add up; the disputed MID's ratio is its disputes over its sales.
		expect(health.map((h: { midId: number }) => h.midId).sort()).toEqual([...shop.mids].sort());
		const total = (field: string) => health.reduce((sum: number, h: { month: Record<string, number> }) => sum + h.month[field], 0);
		expect([total("sales"), total("declined"), total("refunds"), total("disputes"), total("chargebacks")]).toEqual([4, 1, 1, 1, 1]);
		const disputedMid = (await api(shop).get(`/api/transaction/${disputed.transactionId}`).expect(200)).body.midId;
		const mid = health.find((h: { midId: number }) => h.midId === disputedMid);
		expect(mid.month.chargebackRatio).toBeCloseTo(1 / mid.month.sales, 6);
		expect(mid.last30Days).toMatchObject({ sales: mid.month.sales, disputes: 1, chargebacks: 1 });
		expect(mid.month.disputeAmount).toEqual({ EUR: 9.99 });
		expect(mid.warning).toBe(true);
		const approvals = health.map((h: { month: { approvalRate: number | null } }) => h.month.approvalRate);
		expect(approvals.every((rate: number | null) => rate === null || (rate > 0 && rate <= 1))).toBe(true);
		expect((await admin(app).get("/accounts/987654321/merchant-account-health")).status).toBe(404);
		// The node's Prometheus counters, labelled by MID, say the same.
		const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
		const counter = (name: string, midId: number) =>
			metrics
				.split("\n")
				.filter(line => line.startsWith(`${name}{`) && line.includes(`midId="${midId}"`))
				.reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
		for (const h of health) {
			expect(counter("billing_mid_sales", h.midId)).toBe(h.month.sales);
			expect(counter("billing_mid_disputes", h.midId)).toBe(h.month.disputes);
		}
	});
});
