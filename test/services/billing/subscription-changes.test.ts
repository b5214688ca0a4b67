// Subscriptions that change in place (issue 36), over HTTP: quotes, changes now (prorated or not) and at the period's
// end, seats, an interval change, credit spent by the renewal, refusals that change nothing, and their events. The
// wall clock is set to April 2027 (30 days, no clock change, CEST), as in docs/subscriptions.md's examples.
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createPlan } from "../../factories/merchant";
import { setWallClock } from "../../factories/wall-clock";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;
const product: Record<string, number> = {};

/** Local CEST time in April 2027 (UTC+2). */
const april = (day: number, hour = 0, minute = 0) => Date.UTC(2027, 3, day, hour - 2, minute);

beforeAll(async () => {
	setWallClock(april(1));
	app = await startApp();
	receiver = await startWebhookReceiver();
});
// A shop per test: its test clock is its account's now, which only moves forward.
beforeEach(async () => {
	setWallClock(april(1));
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const create = (body: object) => createPlan(app, shop, body);
	product.ten = await create({ amount: 10 });
	product.twenty = await create({ amount: 20 });
	product.twelve = await create({ amount: 12 });
	product.yearly = await create({ amount: 100, renewal: { every: 1, unit: "year" } });
	product.dollars = await create({ amount: 20, currency: "USD" });
	product.inactive = await create({ amount: 20 });
	await admin(app).patch(`/accounts/${shop.accountId}/products/${product.inactive}`, { active: false }).expect(200);
});
afterAll(async () => {
	jest.useRealTimers();
	await receiver.stop();
	await app.stop();
});

const api = () => ({
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
	get: (path: string) => app.http().get(`/api${path}`).set(bearer(shop)),
	delete: (path: string) => app.http().delete(`/api${path}`).set(bearer(shop)),
});
const subscribe = async (productId: number, card: string = CARDS.visa) => {
	setWallClock(april(1));
	const res = await submitCheckout(app, shop, { productId, card });
	expect(res.body.code).toBe("OK");
	return res.body.customerId as number;
};
const customer = async (id: number) => (await api().get(`/customer/${id}`).expect(200)).body;
const transactions = async (id: number) => (await api().get(`/customer/${id}/transactions`).expect(200)).body.data;
const renewAt = (at: number) =>
	admin(app)
		.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(at).toISOString() })
		.expect(200);

describe("Subscription changes", () => {
	test("When €10 a month is upgraded to €20 on 16 April with its quote, then €5.00 is charged once as SUBSCRIPTION_CHANGE, and the quote cannot be used again", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(16));

		const quote = await api().post(`/customer/${id}/change-quote`, { productId: product.twenty, mode: "now_prorated" }).expect(200);
		setWallClock(april(16, 0, 10));
		const done = await api()
			.post(`/customer/${id}/change`, { productId: product.twenty, mode: "now_prorated", quoteId: quote.body.quoteId })
			.expect(200);
		const again = await api().post(`/customer/${id}/change`, { mode: "now_prorated", quoteId: quote.body.quoteId });

		expect(quote.body).toMatchObject({ due: 5, charge: 5, creditAdded: 0, currency: "EUR", nextRenewal: { amount: 20 } });
		expect(quote.body.lines.map((l: { kind: string; amount: number }) => [l.kind, l.amount])).toEqual([
			["unused_time_credit", -5],
			["new_plan_charge", 10],
		]);
		expect(done.body.transaction).toMatchObject({ type: "SUBSCRIPTION_CHANGE", amount: 5, status: "APPROVED", productId: product.twenty });
		expect(done.body.customer).toMatchObject({ productId: product.twenty, quantity: 1, credit: 0, pendingChange: null });
		expect(again.status).toBe(409);
		expect((await transactions(id)).filter((t: { type: string }) => t.type === "SUBSCRIPTION_CHANGE")).toHaveLength(1);
		const events = await eventually(() => {
			const found = receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === id && e.type === "SUBSCRIPTION_CHANGED");
			expect(found).toHaveLength(1);
			return found;
		});
		expect(events[0].data.change).toMatchObject({ from: { productId: product.ten }, to: { productId: product.twenty }, charged: 5 });
		expect(events[0].data.transaction).toMatchObject({ type: "SUBSCRIPTION_CHANGE" });
		const listed = (await api().get("/events?type=SUBSCRIPTION_CHANGED").expect(200)).body;
		expect(JSON.stringify(listed)).toContain(events[0].id);
	});

	test("When €20 is downgraded to €10 on 16 April without a quote, then €5.00 becomes credit, and the May renewal is paid €5.00 by credit and €5.00 by card", async () => {
		const id = await subscribe(product.twenty);
		setWallClock(april(16));

		const done = await api().post(`/customer/${id}/change`, { productId: product.ten, mode: "now_prorated" }).expect(200);
		await renewAt(april(30, 23, 30) + 3_600_000);

		expect(done.body.change).toMatchObject({ due: 0, creditAdded: 5, creditAfter: 5 });
		expect(done.body.transaction).toBeNull();
		expect(done.body.customer.credit).toBe(5);
		const renewal = (await transactions(id)).find((t: { type: string }) => t.type === "RENEWAL");
		expect(renewal).toMatchObject({ amount: 5, creditApplied: 5, status: "APPROVED", productId: product.ten });
		expect((await customer(id)).credit).toBe(0);
	});

	test("When a customer with €5.00 of credit unsubscribes and the merchant asks for its credit back, then €5.00 is refunded to its card once, and the credit is 0", async () => {
		const id = await subscribe(product.twenty);
		setWallClock(april(16));
		await api().post(`/customer/${id}/change`, { productId: product.ten, mode: "now_prorated" }).expect(200);
		const whileSubscribed = await api().post(`/customer/${id}/credit-refund`, {});

		await api().post(`/unsubscribe/${id}`, {}).expect(200);
		const refunded = await api().post(`/customer/${id}/credit-refund`, {}).expect(200);
		const again = await api().post(`/customer/${id}/credit-refund`, {});

		expect(whileSubscribed.status).toBe(409);
		const start = (await transactions(id)).find((t: { type: string }) => t.type === "SUBSCRIPTION_START");
		expect(refunded.body.refunds).toEqual([{ transactionId: start.id, amount: 5, refundTransactionId: expect.any(Number), refused: null }]);
		expect(refunded.body.customer).toMatchObject({ status: "UNSUBSCRIBED", credit: 0 });
		expect(again.status).toBe(409);
		expect(again.body.message).toBe("This customer has no credit");
		const refunds = (await transactions(id)).filter((t: { type: string }) => t.type === "REFUNDED");
		expect(refunds.map((t: { amount: number; id: number }) => [t.amount, t.id])).toEqual([
			[-5, refunded.body.refunds[0].refundTransactionId],
		]);
	});

	test("When 1 seat of €12 becomes 5 on 11 April, then €32.00 is charged; back to 2 seats on 21 April, the credit is what those seats were paid", async () => {
		const id = await subscribe(product.twelve);
		setWallClock(april(11));

		const up = await api().post(`/customer/${id}/change`, { quantity: 5, mode: "now_prorated" }).expect(200);
		setWallClock(april(21));
		const down = await api().post(`/customer/${id}/change-quote`, { quantity: 2, mode: "now_prorated" }).expect(200);

		expect(up.body.transaction).toMatchObject({ amount: 32 });
		expect(up.body.customer).toMatchObject({ quantity: 5 });
		// April is worth 12 × 10/30 + 60 × 10/30 + 24 × 10/30 = 32.00; 44.00 was paid.
		expect(down.body).toMatchObject({ due: 0, creditAdded: 12, nextRenewal: { amount: 24, quantity: 2 } });
	});

	test("When a change is made without proration, then nothing is charged and May costs the new price", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(11));

		const done = await api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "now_without_proration" }).expect(200);

		expect(done.body.change).toMatchObject({ due: 0, charge: 0, creditAdded: 0, nextRenewal: { amount: 20 } });
		expect(done.body.transaction).toBeNull();
	});

	test("When a change waits for the period's end, then it shows on the customer, can be cancelled, and once scheduled again the renewal applies it", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(10));

		await api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "at_period_end" }).expect(200);
		const scheduled = await customer(id);
		await api().delete(`/customer/${id}/pending-change`).expect(200);
		const cancelled = await customer(id);
		const none = await api().delete(`/customer/${id}/pending-change`);
		await api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "at_period_end" }).expect(200);
		await renewAt(april(30, 23, 30) + 3_600_000);

		expect(scheduled).toMatchObject({ productId: product.ten, pendingChange: { productId: product.twenty, quantity: 1 } });
		expect(cancelled.pendingChange).toBeNull();
		expect(none.status).toBe(404);
		expect((await transactions(id)).find((t: { type: string }) => t.type === "RENEWAL")).toMatchObject({
			amount: 20,
			productId: product.twenty,
		});
		expect(await customer(id)).toMatchObject({ productId: product.twenty, pendingChange: null });
		const types = receiver.requests
			.map(r => JSON.parse(r.rawBody))
			.filter(e => e.customerId === id)
			.map(e => e.type);
		await eventually(() =>
			expect(types).toEqual(expect.arrayContaining(["SUBSCRIPTION_CHANGE_SCHEDULED", "SUBSCRIPTION_CHANGE_CANCELLED"])),
		);
	});

	test("When a downgrade's prices exclude 20 % tax, then its lines' gross add up to a negative total, due is 0 and the rest is creditAdded, alike in the quote, the change's answer and SUBSCRIPTION_CHANGED", async () => {
		const taxed = await createShop(app);
		await admin(app)
			.patch(`/accounts/${taxed.accountId}`, { webhookUrl: receiver.url, invoicing: { taxRateBps: 2000, pricesIncludeTax: false } })
			.expect(200);
		const [twenty, ten] = [await createPlan(app, taxed, { amount: 20 }), await createPlan(app, taxed, { amount: 10 })];
		setWallClock(april(1));
		const id = (await submitCheckout(app, taxed, { productId: twenty })).body.customerId as number;
		setWallClock(april(16));
		const post = (path: string, body: object) => app.http().post(`/api/customer/${id}${path}`).set(bearer(taxed)).send(body);

		const quote = (await post("/change-quote", { productId: ten, mode: "now_prorated" }).expect(200)).body;
		const done = (await post("/change", { mode: "now_prorated", quoteId: quote.quoteId }).expect(200)).body;

		// 15 of April's 30 days: −€10.00 of €20, +€5.00 of €10, each with 20 % added; €6.00 comes back as credit.
		const sums = { total: -6, due: 0, creditAdded: 6, creditUsed: 0, creditAfter: 6 };
		expect(quote.lines.map((l: { kind: string; amount: number; gross: number }) => [l.kind, l.amount, l.gross])).toEqual([
			["unused_time_credit", -10, -12],
			["new_plan_charge", 5, 6],
		]);
		expect(quote).toMatchObject({ ...sums, charge: 0 });
		// The change's answer is the quote applied, without the quote's own customerId and expiresAt.
		expect(done.change).toEqual({ ...quote, customerId: undefined, expiresAt: undefined });
		expect(done.customer.credit).toBe(6);
		const [event] = await eventually(() => {
			const found = receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === id && e.type === "SUBSCRIPTION_CHANGED");
			expect(found).toHaveLength(1);
			return found;
		});
		expect(event.data.change).toMatchObject({ ...sums, charged: 0, quoteId: quote.quoteId });
	});

	test("When a change waiting for the period's end is applied by the renewal, then no SUBSCRIPTION_CHANGED is sent: the renewal's TRANSACTION shows the new plan", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(10));
		await api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "at_period_end" }).expect(200);

		await renewAt(april(30, 23, 30) + 3_600_000);
		// A later event of the same customer: once it arrives, every event written before it on the customer has too.
		await api().post(`/unsubscribe/${id}`, {}).expect(200);

		const events = await eventually(() => {
			const found = receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === id);
			expect(found.map(e => e.type)).toContain("CANCELLATION");
			return found;
		});
		expect(events.map(e => e.type).filter(type => type.startsWith("SUBSCRIPTION_CHANGE"))).toEqual(["SUBSCRIPTION_CHANGE_SCHEDULED"]);
		const scheduled = events.find(e => e.type === "SUBSCRIPTION_CHANGE_SCHEDULED");
		expect(scheduled.data.change).toMatchObject({ to: { productId: product.twenty }, effectiveAt: "2027-05-01T00:00:00.000" });
		const renewal = events.find(e => e.type === "TRANSACTION" && e.data.transaction.type === "RENEWAL");
		expect(renewal.data.transaction).toMatchObject({ amount: 20, productId: product.twenty, status: "APPROVED" });
	});

	test("When €10 a month changes to €100 a year on 16 April, then €95.00 is charged and the next renewal is 16 April 2028", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(16));

		const done = await api().post(`/customer/${id}/change`, { productId: product.yearly, mode: "now_prorated" }).expect(200);

		expect(done.body.change).toMatchObject({ intervalChange: true, due: 95, nextRenewal: { amount: 100, at: "2028-04-16T00:00:00.000" } });
		expect((await customer(id)).nextRenewalTimestamp).toBe("2028-04-16T00:00:00.000");
	});

	test("When a quote has expired, is forged or is another customer's, then the change is refused and nothing changes", async () => {
		const id = await subscribe(product.ten);
		const other = await subscribe(product.ten);
		setWallClock(april(16));
		const quote = (await api().post(`/customer/${id}/change-quote`, { productId: product.twenty, mode: "now_prorated" }).expect(200)).body;

		const otherCustomers = await api().post(`/customer/${other}/change`, { mode: "now_prorated", quoteId: quote.quoteId });
		const forged = await api().post(`/customer/${id}/change`, { mode: "now_prorated", quoteId: `q_${"0".repeat(32)}` });
		setWallClock(april(16, 0, 16));
		const expired = await api().post(`/customer/${id}/change`, { mode: "now_prorated", quoteId: quote.quoteId });

		expect([otherCustomers.status, forged.status, expired.status]).toEqual([404, 404, 409]);
		expect(expired.body.message).toContain("expired");
		expect((await customer(id)).productId).toBe(product.ten);
		expect(await transactions(id)).toHaveLength(1);
	});

	test("When the input is bad, then each refusal is a documented 4xx and nothing changes", async () => {
		const id = await subscribe(product.ten);
		const gone = await subscribe(product.ten);
		await api().post(`/unsubscribe/${gone}`, {}).expect(200);
		const stranger = await createShop(app);
		setWallClock(april(16));
		const change = (path: number, body: object) => api().post(`/customer/${path}/change`, body);

		const answers = [
			await change(id, { productId: product.dollars, mode: "now_prorated" }),
			await change(id, { productId: product.inactive, mode: "now_prorated" }),
			await change(id, { productId: shop.products.oneOff, mode: "now_prorated" }),
			await change(id, { productId: stranger.products.charge, mode: "now_prorated" }),
			await change(gone, { productId: product.twenty, mode: "now_prorated" }),
			await change(id, { quantity: "2", mode: "now_prorated" }),
			await change(id, { mode: "now_prorated" }),
			await change(id, { productId: product.twenty, mode: "later" }),
			await change(id, { productId: product.ten, mode: "now_prorated" }),
			await app.http().post(`/api/customer/${id}/change`).set(bearer(stranger)).send({ productId: product.twenty, mode: "now_prorated" }),
		];

		expect(answers.map(a => a.status)).toEqual([409, 409, 409, 404, 409, 400, 400, 400, 409, 404]);
		expect((await customer(id)).productId).toBe(product.ten);
		expect(await transactions(id)).toHaveLength(1);
	});

	test("When the card declines the upgrade's charge, then it answers 402 with the reason and nothing changes", async () => {
		const id = await subscribe(product.ten, CARDS.declinesRenewals);
		setWallClock(april(16));

		const res = await api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "now_prorated" });

		expect(res.status).toBe(402);
		expect(res.body).toMatchObject({ error: "PAYMENT_DECLINED", status: 402 });
		expect(res.body.message).toMatch(/^The charge was declined: .+; nothing changed \(transaction \d+\)$/);
		expect(await customer(id)).toMatchObject({ productId: product.ten, credit: 0 });
		expect((await transactions(id)).map((t: { type: string; status: string }) => [t.type, t.status])).toContainEqual([
			"SUBSCRIPTION_CHANGE",
			"DECLINED",
		]);
	});

	test("When a change without a quote is sent twice with one Idempotency-Key, then it is charged and applied once and the repeat gets the first answer; the key with another body is refused", async () => {
		const id = await subscribe(product.ten);
		setWallClock(april(16));
		const send = (body: object, key: string) => api().post(`/customer/${id}/change`, body).set("Idempotency-Key", key);
		const key = `chg-${id}`;

		const first = await send({ productId: product.twenty, mode: "now_prorated" }, key).expect(200);
		setWallClock(april(16, 1));
		const repeat = await send({ productId: product.twenty, mode: "now_prorated" }, key).expect(200);
		const other = await send({ productId: product.twelve, mode: "now_prorated" }, key);

		expect(first.body.change).toMatchObject({ charge: 5 });
		expect(repeat.body).toEqual(first.body);
		expect(other.status).toBe(409);
		expect(other.body.message).toMatch(/must be the quote's/);
		expect((await transactions(id)).filter((t: { type: string }) => t.type === "SUBSCRIPTION_CHANGE")).toHaveLength(1);
		expect(await customer(id)).toMatchObject({ productId: product.twenty });
	});

	test("When a declined change is sent again with its Idempotency-Key, then the processor is asked with the same key and the answer is the same decline", async () => {
		const id = await subscribe(product.ten, CARDS.declinesRenewals);
		setWallClock(april(16));
		const send = () =>
			api().post(`/customer/${id}/change`, { productId: product.twenty, mode: "now_prorated" }).set("Idempotency-Key", `declined-${id}`);

		const first = await send();
		const repeat = await send();

		expect([first.status, repeat.status]).toEqual([402, 402]);
		expect(repeat.body.message).toEqual(first.body.message);
		expect((await transactions(id)).filter((t: { type: string }) => t.type === "SUBSCRIPTION_CHANGE")).toHaveLength(1);
		expect(await customer(id)).toMatchObject({ productId: product.ten });
	});

	test("When a subscription resumed to renew on 31 July changes, then its renewals stay on month ends: 31 August, 30 September", async () => {
		// Subscribed 1 March, paused at once (31 days left), resumed 30 June: it renews 31 July at the same hour.
		setWallClock(Date.UTC(2027, 2, 1, 10));
		const checkout = await submitCheckout(app, shop, { productId: product.ten });
		const id = checkout.body.customerId as number;
		await app.http().post(`/api/customer/${id}/pause`).set(bearer(shop)).expect(200);
		setWallClock(Date.UTC(2027, 5, 30, 10));
		await app.http().post(`/api/customer/${id}/resume`).set(bearer(shop)).expect(200);
		expect((await customer(id)).nextRenewalTimestamp).toBe("2027-07-31T11:00:00.000");
		setWallClock(Date.UTC(2027, 6, 10, 10));
		await api().post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated" }).expect(200);

		await renewAt(Date.UTC(2027, 7, 1));
		const august = (await customer(id)).nextRenewalTimestamp;
		await renewAt(Date.UTC(2027, 8, 1));
		const september = (await customer(id)).nextRenewalTimestamp;

		expect([august, september]).toEqual(["2027-08-31T11:00:00.000", "2027-09-30T11:00:00.000"]);
	});

	test("When a monthly subscription changes to yearly and its card expires before the new renewal, then CARD_EXPIRING is sent 30 days before that renewal", async () => {
		// A card valid until January 2028: May 2027's renewal is fine, April 2028's is not.
		setWallClock(april(1));
		const checkout = await submitCheckout(app, shop, { productId: product.ten, expiry: "0128" });
		const id = checkout.body.customerId as number;
		setWallClock(april(16));
		await api().post(`/customer/${id}/change`, { productId: product.yearly, mode: "now_prorated" }).expect(200);

		await renewAt(Date.UTC(2028, 2, 20));

		const warned = await eventually(() => {
			const found = receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === id && e.type === "CARD_EXPIRING");
			expect(found).toHaveLength(1);
			return found;
		});
		expect(warned[0].data).toBeDefined();
	});
});
