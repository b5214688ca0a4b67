// The sandbox test clock is the account's now (docs/api.md#the-accounts-now), over HTTP and webhooks: a clock run does
// what falls due at its own time, in time order, and what the account bills or dates afterwards happens at the clock's
// time. Every date here is built from the next calendar dates after today (in TIME_ZONE, CET), so the tests are the
// same on any day they run.
import { DateTime } from "luxon";
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../../shared/db.mixin";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createPlan } from "../../factories/merchant";
import { clockTo as moveClock } from "../../factories/test-clock";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp();
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

const ZONE = "CET";
/** The API's form of a local date-time. */
const apiTime = (at: DateTime) => at.setZone(ZONE).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
const local = (text: string) => DateTime.fromISO(text, { zone: ZONE });
/** The next `month`/`day` at 00:00 local strictly after today. */
function next(month: number, day: number): DateTime {
	const today = DateTime.now().setZone(ZONE);
	const thisYear = DateTime.fromObject({ year: today.year, month, day }, { zone: ZONE });
	return thisYear > today ? thisYear : thisYear.plus({ years: 1 });
}

async function shopWithWebhooks(): Promise<Shop> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	return shop;
}

/** The account's test clock moved to a local date-time: the call's answer. */
const clockTo = async (shop: Shop, at: DateTime) => (await moveClock(app, shop, at.toJSDate())).body;
const api = (shop: Shop) => ({
	get: async (path: string) => (await app.http().get(`/api${path}`).set(bearer(shop)).expect(200)).body,
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
});

async function subscribe(shop: Shop, productId: number, options: { card?: string; expiry?: string } = {}): Promise<number> {
	const res = await submitCheckout(app, shop, { productId, ...options });
	expect(res.body.code).toBe("OK");
	return res.body.customerId;
}

/** MMYY of a local date's month. */
const expiryOf = (at: DateTime) => at.toFormat("MMyy");

/** The customer's webhooks of `type`, once at least `atLeast` arrived (or 10 s passed), then half a second more. */
async function webhooks(customerId: number, type: string, atLeast: number) {
	const mine = () => receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === customerId && e.type === type);
	for (const deadline = Date.now() + 10_000; mine().length < atLeast && Date.now() < deadline; ) await new Promise(r => setTimeout(r, 25));
	await new Promise(r => setTimeout(r, 500));
	return mine();
}

describe("A clock run does what falls due at its own time", () => {
	test("When a clock run crosses the card's last valid month between a renewal's due time and advanceTo, then the renewal is charged when it fell due and approved, and the card-expiry warning goes out for the next one", async () => {
		// Arrange: the account's now on the 10th of next month at noon; a monthly plan bought then, with a card valid
		// through the month of its first renewal only.
		const shop = await shopWithWebhooks();
		const start = DateTime.now().setZone(ZONE).startOf("month").plus({ months: 1, days: 9, hours: 12 });
		await clockTo(shop, start);
		const renewal = start.plus({ months: 1 });
		const customerId = await subscribe(shop, shop.products.charge, { expiry: expiryOf(renewal) });
		const bought = await api(shop).get(`/customer/${customerId}`);

		// Act: to the 3rd of the month after the renewal's: past the card's expiry, before the next renewal.
		const report = await clockTo(shop, renewal.startOf("month").plus({ months: 1, days: 2, hours: 12 }));

		// Assert: charged on the 10th, approved; the customer ACTIVE, warned that its card will have expired by the next.
		expect(bought).toMatchObject({ subscriptionTimestamp: apiTime(start), nextRenewalTimestamp: apiTime(renewal) });
		expect(report).toMatchObject({ charged: 1, declined: 0, suspended: 0, cardExpiryWarnings: 1 });
		const customer = await api(shop).get(`/customer/${customerId}`);
		expect(customer).toMatchObject({ status: "ACTIVE", attempts: 0, lastTimeBilled: apiTime(renewal) });
		expect(customer.nextRenewalTimestamp).toBe(apiTime(start.plus({ months: 2 })));
		const transactions = (await api(shop).get(`/customer/${customerId}/transactions`)).data;
		expect(transactions.map((t: { type: string; status: string; timestamp: string }) => [t.type, t.status, t.timestamp])).toEqual([
			["RENEWAL", "APPROVED", apiTime(renewal)],
			["SUBSCRIPTION_START", "APPROVED", apiTime(start)],
		]);
		expect(await webhooks(customerId, "CARD_EXPIRING", 1)).toHaveLength(1);
	});

	test("When a disputed charge's protection unsubscribes the customer between two renewals, then the renewal due before the dispute is charged and the one after it is not", async () => {
		// Arrange: a plan renewing every 2 days, paid with a card whose charges are disputed 3 days after them.
		const shop = await shopWithWebhooks();
		const everyTwoDays = await createPlan(app, shop, { amount: 3, renewal: { every: 2, unit: "day" } });
		const customerId = await subscribe(shop, everyTwoDays, { card: "4000000000002602" });
		const bought = local((await api(shop).get(`/customer/${customerId}`)).lastTimeBilled);

		// Act: ten days in one call.
		await clockTo(shop, bought.plus({ days: 10 }));

		// Assert: day 2's renewal, then day 3's dispute of the first charge unsubscribes (the account's protection): none on day 4.
		const transactions = (await api(shop).get(`/customer/${customerId}/transactions`)).data as { type: string; timestamp: string }[];
		expect(transactions.filter(t => t.type === "RENEWAL").map(t => t.timestamp)).toEqual([apiTime(bought.plus({ days: 2 }))]);
		const customer = await api(shop).get(`/customer/${customerId}`);
		expect(customer).toMatchObject({ status: "UNSUBSCRIBED", unsubscriptionTimestamp: apiTime(bought.plus({ days: 3 })) });
		const disputes = (await api(shop).get("/disputes")).data as { openedAt: string; transactionId: number }[];
		expect(disputes.map(d => d.openedAt).sort()).toEqual([apiTime(bought.plus({ days: 3 })), apiTime(bought.plus({ days: 5 }))]);
	});
});

describe("A moved clock is the account's now", () => {
	test("When a monthly plan is bought on 31 January on the clock, then it renews on 28 or 29 February and 31 March, each charged and invoiced on its day", async () => {
		// Arrange
		const shop = await shopWithWebhooks();
		const bought = next(1, 31).plus({ hours: 12 });
		await clockTo(shop, bought);
		const customerId = await subscribe(shop, shop.products.charge);

		// Act
		const report = await clockTo(shop, bought.plus({ days: 62 }));

		// Assert
		const february = bought.set({ month: 2 }).endOf("month").set({ hour: 12 }).startOf("hour");
		const march = bought.set({ month: 3, day: 31 });
		expect(report).toMatchObject({ charged: 2, declined: 0 });
		const transactions = (await api(shop).get(`/customer/${customerId}/transactions`)).data as { timestamp: string }[];
		expect(transactions.map(t => t.timestamp)).toEqual([apiTime(march), apiTime(february), apiTime(bought)]);
		expect((await api(shop).get(`/customer/${customerId}`)).nextRenewalTimestamp).toBe(apiTime(bought.set({ month: 4, day: 30 })));
		// Invoices carry their charge's date, and their numbers follow the dates.
		let invoices: { number: string; issuedAt: string; transactionId: number }[] = [];
		for (const deadline = Date.now() + 10_000; invoices.length < 3 && Date.now() < deadline; await new Promise(r => setTimeout(r, 50)))
			invoices = (await api(shop).get("/invoices")).data;
		const byNumber = [...invoices].sort((a, b) => a.number.localeCompare(b.number));
		expect(byNumber.map(i => i.issuedAt)).toEqual([apiTime(bought), apiTime(february), apiTime(march)]);
		expect(byNumber.map(i => i.number.slice(-6))).toEqual(["000001", "000002", "000003"]);
		expect(byNumber[0].number).toContain(String(bought.year));
	});

	test("When €31 a month from 1 March is upgraded to €62 on 16 March on the clock, then the quote is the summer time example: €31.96 for the rest of March, €15.98 due", async () => {
		// Arrange: docs/subscriptions.md#summer-time, in the next March (the clocks go forward on its last Sunday).
		const shop = await shopWithWebhooks();
		const thirtyOne = await createPlan(app, shop, { amount: 31 });
		const sixtyTwo = await createPlan(app, shop, { amount: 62 });
		const first = next(3, 1);
		await clockTo(shop, first);
		const customerId = await subscribe(shop, thirtyOne);

		// Act
		await clockTo(shop, first.set({ day: 16 }));
		const quote = await api(shop).post(`/customer/${customerId}/change-quote`, { productId: sixtyTwo, mode: "now_prorated" });

		// Assert
		expect(quote.status).toBe(200);
		expect(quote.body.due).toBe(15.98);
		const lines = quote.body.lines as { kind: string; amount: number; from: string; to: string }[];
		expect(lines.map(l => [l.kind, l.amount])).toEqual([
			["unused_time_credit", -15.98],
			["new_plan_charge", 31.96],
		]);
		expect(lines[1]).toMatchObject({ from: apiTime(first.set({ day: 16 })), to: apiTime(first.set({ month: 4 })) });
	});

	test("When the clock has renewed a customer, then a change quoted afterwards prorates from the clock's time in the new period", async () => {
		// Arrange: a month and five days on the clock: renewed once, five days into its second period.
		const shop = await shopWithWebhooks();
		const twice = await createPlan(app, shop, { amount: 20 });
		const customerId = await subscribe(shop, shop.products.charge);
		// The period is counted from the first charge.
		const bought = local((await api(shop).get(`/customer/${customerId}`)).lastTimeBilled);
		const now = bought.plus({ months: 1, days: 5 });
		await clockTo(shop, now);

		// Act
		const quote = await api(shop).post(`/customer/${customerId}/change-quote`, { productId: twice, mode: "now_prorated" });

		// Assert
		expect(quote.status).toBe(200);
		const charge = (quote.body.lines as { kind: string; from: string; to: string }[]).find(l => l.kind === "new_plan_charge");
		expect(charge).toMatchObject({ from: apiTime(now), to: apiTime(bought.plus({ months: 2 })) });
		expect(quote.body.due).toBeGreaterThan(0);
	});

	test("When a moved clock's account pauses, unsubscribes and refunds, then each is dated at the clock's time, and a resumeAt before it is refused", async () => {
		// Arrange
		const shop = await shopWithWebhooks();
		const customerId = await subscribe(shop, shop.products.charge);
		const other = await subscribe(shop, shop.products.charge);
		const bought = local((await api(shop).get(`/customer/${customerId}`)).subscriptionTimestamp);
		const now = bought.plus({ days: 10 });
		await clockTo(shop, now);

		// Act
		const early = await api(shop).post(`/customer/${customerId}/pause`, { resumeAt: bought.plus({ days: 5 }).toUTC().toISO() });
		const paused = await api(shop).post(`/customer/${customerId}/pause`, {});
		await api(shop)
			.post(`/unsubscribe/${other}`, {})
			.then(res => expect(res.status).toBe(200));
		const [charge] = (await api(shop).get(`/customer/${other}/transactions`)).data;
		const refund = (await app.http().get(`/api/refund/${charge.id}?amountToRefund=1.00`).set(bearer(shop)).expect(200)).body;

		// Assert
		expect(early.status).toBe(409);
		expect(paused.status).toBe(200);
		expect(paused.body.pause.pausedAt).toBe(apiTime(now));
		expect((await api(shop).get(`/customer/${other}`)).unsubscriptionTimestamp).toBe(apiTime(now));
		expect(refund.success).toBe(true);
		const refunded = (await api(shop).get(`/customer/${other}/transactions`)).data.find((t: { type: string }) => t.type === "REFUNDED");
		expect(refunded.timestamp).toBe(apiTime(now));
	});
});

describe("Clock calls at once", () => {
	test("When a clock call arrives while another moves the clock past its advanceTo, then it waits, finds the move made and answers 200 with nothing done, not 409; a call that arrives with an advanceTo already passed is 409", async () => {
		// Arrange: customers whose renewals keep the first run busy for a while.
		const shop = await createShop(app);
		const plan = await createPlan(app, shop, { name: "Weekly", amount: 5, renewal: { every: 1, unit: "week" } });
		for (let i = 0; i < 5; i++) await subscribe(shop, plan);
		const now = DateTime.now().setZone(ZONE);

		// Act: the further move first, the nearer one once it runs (its lease is on the account's clock).
		const further = moveClock(app, shop, now.plus({ days: 60 }).toJSDate()).then(res => res); // sent now: supertest sends on then
		const clocks = await MongoClient.connect(process.env.MONGO_URL!);
		try {
			const testClocks = clocks
				.db(databaseNameFor("billing", process.env.MONGO_URL!))
				.collection<{ _id: number; run?: object | null }>("test_clocks");
			for (const until = Date.now() + 10_000; Date.now() < until; await new Promise(r => setTimeout(r, 5)))
				if ((await testClocks.findOne({ _id: shop.accountId }))?.run) break;
		} finally {
			await clocks.close();
		}
		const nearer = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: now.plus({ days: 30 }).toUTC().toISO() });
		const first = (await further).body;
		const late = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: now.plus({ days: 30 }).toUTC().toISO() });

		// Assert
		expect(first.charged).toBeGreaterThan(0);
		expect([nearer.status, nearer.body]).toEqual([200, expect.objectContaining({ charged: 0, declined: 0, suspended: 0 })]);
		expect([late.status, late.body.message]).toEqual([409, "advanceTo must not be before the account's now: the clock only moves forward"]);
	});
});
