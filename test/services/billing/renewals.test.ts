// Renewals through the sandbox test clock: each kind's first charge, later
// periods, retries and suspension, catch-up, and exactly-once on concurrent cycles.
import { DateTime } from "luxon";
import { MongoClient } from "mongodb";
import { createBroker } from "../../../runtime/broker";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp({ env: { RENEWAL_RETRY_DAYS: "1,2" } });
	shop = await createShop(app);
});
afterAll(() => app.stop());

const DAY = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString();
const advance = (days: number, who: Shop = shop) => admin(app).post(`/accounts/${who.accountId}/clock`, { advanceTo: inDays(days) });
const customer = async (id: number, who: Shop = shop) => (await app.http().get(`/api/customer/${id}`).set(bearer(who))).body;
const transactionsOf = async (id: number, who: Shop = shop) =>
	(await admin(app).get(`/accounts/${who.accountId}/customers/${id}/transactions`)).body as {
		type: string;
		status: string;
		amount: number;
	}[];
const local = (text: string) => DateTime.fromISO(text, { zone: "CET" });
/** Moves the shop's clock to `hours` after a local date-time of the API (the account's now only moves forward). */
const advanceAfter = (who: Shop, text: string, hours: number) =>
	admin(app)
		.post(`/accounts/${who.accountId}/clock`, { advanceTo: local(text).plus({ hours }).toUTC().toISO() })
		.expect(200);

describe("Renewals", () => {
	test("When a monthly CHARGE subscription's month has passed, then it is renewed once: a RENEWAL, the next date one calendar month on, attempts 0", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const before = await customer(customerId);

		// Act
		const res = await advance(32);
		const again = await advance(33);

		// Assert
		expect(res.status).toBe(200);
		expect(res.body.charged).toBeGreaterThanOrEqual(1);
		expect(again.body.charged).toBe(0);
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
		const after = await customer(customerId);
		expect(after).toMatchObject({ status: "ACTIVE", attempts: 0, renewalActive: true });
		expect(local(after.nextRenewalTimestamp).toISODate()).toBe(local(before.subscriptionTimestamp).plus({ months: 2 }).toISODate());
		expect(after.lastTimeBilled).not.toBe(before.lastTimeBilled);
	});

	test("When a SCHEDULE trial ends, then the first charge is made without the CVC (SUBSCRIPTION_START) and the next is a month later", async () => {
		// A shop of its own: the shared one's clock is further on already.
		const trial = await createShop(app);
		const { customerId } = (await submitCheckout(app, trial, { productId: trial.products.schedule })).body;
		const trialEnd = (await customer(customerId, trial)).nextRenewalTimestamp;

		await advance(15, trial);

		expect(await transactionsOf(customerId, trial)).toEqual([
			expect.objectContaining({ type: "SUBSCRIPTION_START", status: "APPROVED", amount: 4.99 }),
		]);
		const after = await customer(customerId, trial);
		expect(after.lastTimeBilled).not.toBeNull();
		// Charged when the trial ended, not when the clock call ended.
		expect(after.lastTimeBilled).toBe(trialEnd);
		expect(local(after.nextRenewalTimestamp).toISODate()).toBe(
			local(after.subscriptionTimestamp).plus({ days: 14 }).plus({ months: 1 }).toISODate(),
		);
	});

	test("When a PREAUTHORIZE trial ends, then the hold is captured as the first charge", async () => {
		const trial = await createShop(app);
		const { customerId } = (await submitCheckout(app, trial, { productId: trial.products.preauthorize })).body;

		await advance(8, trial);

		const types = (await transactionsOf(customerId, trial)).map(t => [t.type, t.status]);
		expect(types).toEqual([
			["PREAUTHORIZATION", "APPROVED"],
			["SUBSCRIPTION_START", "APPROVED"],
		]);
		const captures = (await admin(app).get("/sandbox/operations?kind=capture&status=APPROVED")).body;
		expect(captures.length).toBeGreaterThanOrEqual(1);
	});

	test("When renewals keep being declined, then each retry is a day apart and the last attempt suspends the customer", async () => {
		// Arrange: a card whose merchant-initiated charges decline; retried 1 and 2 days after the first decline here.
		const declining = await createShop(app);
		const { customerId } = (await submitCheckout(app, declining, { productId: declining.products.charge, card: CARDS.declinesRenewals }))
			.body;
		const read = async () => (await app.http().get(`/api/customer/${customerId}`).set(bearer(declining))).body;
		const due = (await read()).nextRenewalTimestamp as string;

		// Act / Assert: the first try when the renewal falls due, then one a day, counted from it.
		await advanceAfter(declining, due, 1);
		expect(await read()).toMatchObject({ status: "ACTIVE", attempts: 1 });
		await advanceAfter(declining, due, 12);
		expect((await read()).attempts).toBe(1);
		await advanceAfter(declining, due, 25);
		expect(await read()).toMatchObject({ status: "ACTIVE", attempts: 2 });
		await advanceAfter(declining, due, 49);

		// Assert
		expect(await read()).toMatchObject({ status: "SUSPENDED", attempts: 3, renewalActive: false, nextRenewalTimestamp: null });
		const transactions = (await admin(app).get(`/accounts/${declining.accountId}/customers/${customerId}/transactions`)).body as {
			type: string;
			status: string;
		}[];
		expect(transactions.filter(t => t.type === "RENEWAL").map(t => t.status)).toEqual(["DECLINED", "DECLINED", "DECLINED"]);
	});

	test("When three months pass at once, then each missed month is charged once and the schedule keeps its day", async () => {
		const other = await createShop(app);
		const { customerId } = (await submitCheckout(app, other, { productId: other.products.charge })).body;

		await admin(app)
			.post(`/accounts/${other.accountId}/clock`, { advanceTo: inDays(95) })
			.expect(200);

		const transactions = (await admin(app).get(`/accounts/${other.accountId}/customers/${customerId}/transactions`)).body as {
			type: string;
		}[];
		expect(transactions.filter(t => t.type === "RENEWAL")).toHaveLength(3);
		const after = (await app.http().get(`/api/customer/${customerId}`).set(bearer(other))).body;
		expect(local(after.nextRenewalTimestamp).toISODate()).toBe(local(after.subscriptionTimestamp).plus({ months: 4 }).toISODate());
	});

	test("When a customer is unsubscribed, then no renewal is charged", async () => {
		const other = await createShop(app);
		const { customerId } = (await submitCheckout(app, other, { productId: other.products.charge })).body;
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(other)).expect(200);

		await advance(40, other);

		expect((await transactionsOf(customerId, other)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
	});

	test("When a production account asks for the test clock, then 409: the request is well formed, the account is not one with a clock", async () => {
		const live = await createMerchant(app, { environment: "production" });

		const res = await admin(app).post(`/accounts/${live.accountId}/clock`, { advanceTo: inDays(2) });

		expect(res.status).toBe(409);
		expect(res.body).toEqual({ error: "CONFLICT", status: 409, message: "Only sandbox accounts have a test clock" });
	});

	test("When the clock is asked to move backwards, then 409 and nothing runs", async () => {
		const res = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: inDays(-1) });

		expect(res.status).toBe(409);
		expect(res.body).toEqual({
			error: "CONFLICT",
			status: 409,
			message: "advanceTo must not be before the account's now: the clock only moves forward",
		});
	});

	test("When the clock or a run is asked more than 731 days ahead, then 409 and nothing runs", async () => {
		const clock = await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo: inDays(800) });
		const run = await admin(app).post("/renewals/run", { at: "9999-12-31T23:59:59Z" });

		expect(clock.status).toBe(409);
		expect(clock.body).toEqual({ error: "CONFLICT", status: 409, message: "advanceTo must be at most 731 days ahead" });
		expect(run.status).toBe(409);
		expect(run.body).toEqual({ error: "CONFLICT", status: 409, message: "at must be at most 731 days ahead" });
	});

	test("When the clock moves a year ahead in one call, then a monthly subscription is renewed once for each month", async () => {
		// Arrange: a shop of its own, so no other test's customers renew.
		const yearly = await createShop(app);
		const { customerId } = (await submitCheckout(app, yearly, { productId: yearly.products.charge })).body;

		// Act: 8,784 hour slots to read, past the schedule's reading by key (a single range read).
		const res = await advance(366, yearly);

		// Assert
		expect(res.body).toMatchObject({ charged: 12, declined: 0, suspended: 0 });
		const transactions = (await admin(app).get(`/accounts/${yearly.accountId}/customers/${customerId}/transactions`)).body as {
			type: string;
		}[];
		expect(transactions.map(t => t.type)).toEqual(["SUBSCRIPTION_START", ...Array(12).fill("RENEWAL")]);
	});

	test("When an operator runs a cycle for a future time, then only sandbox customers are charged: no production customer is billed early", async () => {
		// Arrange: two scheduled first charges, in a shop whose clock never moved. No production processor exists here, so one
		// customer is made a production one by hand.
		const fresh = await createShop(app);
		const [live, sandbox] = await Promise.all(
			[1, 2].map(async () => (await submitCheckout(app, fresh, { productId: fresh.products.schedule })).body.customerId as number),
		);
		const client = await MongoClient.connect(process.env.MONGO_URL!);
		try {
			await client
				.db(databaseNameFor("billing", process.env.MONGO_URL!))
				.collection("customers")
				.updateOne({ _id: live as never }, { $set: { environment: "production" } });

			// Act
			await admin(app)
				.post("/renewals/run", { at: inDays(20) })
				.expect(200);

			// Assert
			expect(await transactionsOf(live, fresh)).toEqual([]);
			expect(await customer(live, fresh)).toMatchObject({ status: "ACTIVE", attempts: 0 });
			expect((await transactionsOf(sandbox, fresh)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
		} finally {
			await client.close();
		}
	});
});

describe("Exactly once", () => {
	test("When three cycles run at once on two billing nodes, then each of 30 due customers is charged exactly once", async () => {
		// Arrange: 30 subscriptions, and a second billing node on the same database.
		const busy = await createShop(app);
		const ids: number[] = [];
		for (let i = 0; i < 30; i++) ids.push((await submitCheckout(app, busy, { productId: busy.products.charge })).body.customerId);
		const second = createBroker(["billing", "accounts", "payments"], { nodeID: "billing-2", logger: false });
		await second.start();

		try {
			// Act
			const at = inDays(32);
			const reports = await Promise.all([
				admin(app).post("/renewals/run", { at }),
				admin(app).post("/renewals/run", { at }),
				second.call<{ charged: number }, object>("billing.runRenewals", { at }),
			]);

			// Assert
			const charged = reports.map(r => ("body" in r ? r.body.charged : r.charged));
			let renewals = 0;
			for (const id of ids) {
				const transactions = (await admin(app).get(`/accounts/${busy.accountId}/customers/${id}/transactions`)).body as { type: string }[];
				renewals += transactions.filter(t => t.type === "RENEWAL").length;
			}
			expect(renewals).toBe(30);
			expect(charged.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(30);
		} finally {
			await second.stop();
		}
	}, 60_000);

	/** What an outage can leave behind, written straight into the services' databases: the test's only way to stage it. */
	const withDatabases = async <T>(work: (db: { billing: import("mongodb").Db; payments: import("mongodb").Db }) => Promise<T>) => {
		const url = process.env.MONGO_URL!;
		const client = await MongoClient.connect(url);
		try {
			return await work({ billing: client.db(databaseNameFor("billing", url)), payments: client.db(databaseNameFor("payments", url)) });
		} finally {
			await client.close();
		}
	};
	const renewalKey = (c: { _id: number; nextRenewalTimestamp: Date; attempts: number }) =>
		`renewal:${c._id}:${c.nextRenewalTimestamp.toISOString()}:${c.attempts}`;

	test("When a renewal's attempt was recorded as ERROR (nothing moved) but its customer's move was lost, then the same attempt asked again and approved completes that transaction: APPROVED, and the merchant hears it", async () => {
		// Arrange: a due customer, and the ERROR its renewal's earlier attempt recorded before an outage cut the cycle off.
		const own = await createShop(app);
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge })).body;
		const errored = 900_000_000 + customerId;
		await withDatabases(async ({ billing }) => {
			const customers = billing.collection<{ _id: number; nextRenewalTimestamp: Date; attempts: number }>("customers");
			const due = (await customers.findOne({ _id: customerId }))!;
			const transactions = billing.collection<Record<string, unknown>>("transactions");
			const start = (await transactions.findOne({ customerId, type: "SUBSCRIPTION_START" }))!;
			await transactions.insertOne({
				...start,
				_id: errored,
				type: "RENEWAL",
				success: false,
				status: "ERROR",
				processorTransactionId: null,
				processorReference: null,
				refundStatus: "NOT_REFUNDABLE",
				refundableRemaining: 0,
				declineReason: "processor_error",
				idempotencyKey: renewalKey(due),
				outbox: [],
				relayed: [],
			});
		});

		// Act
		const res = await advance(32, own);

		// Assert: the customer moved on one period, and the transaction that shows it is the one recorded, now APPROVED.
		expect(res.body).toMatchObject({ charged: 1, declined: 0 });
		const transaction = (await app.http().get(`/api/transaction/${errored}`).set(bearer(own)).expect(200)).body;
		expect(transaction).toMatchObject({ id: errored, type: "RENEWAL", status: "APPROVED", success: true });
		expect(transaction.transactionId).toEqual(expect.any(Number));
		const periods = await withDatabases(async ({ billing }) => {
			const c = await billing.collection("customers").findOne({ _id: customerId as never });
			const approved = await billing.collection("transactions").countDocuments({ customerId, status: "APPROVED" });
			return { billed: c?.periodsBilled, approved };
		});
		expect(periods).toEqual({ billed: 2, approved: 2 });
		await eventually(async () => {
			const events = (await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(own)).expect(200)).body.data as {
				type: string;
				data: { transaction?: { id: number; status: string } };
			}[];
			expect(events.filter(e => e.data.transaction?.id === errored).map(e => [e.type, e.data.transaction?.status])).toEqual([
				["TRANSACTION", "APPROVED"],
			]);
		}, 15_000);
	});

	test("When another call still decides a renewal's key, then the cycle records nothing and moves nobody; once that call's time is up a later cycle charges it once", async () => {
		// Arrange: a due customer whose renewal's payment an earlier cycle's call (cut off, still deciding) holds.
		const own = await createShop(app);
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge })).body;
		const key = await withDatabases(async ({ billing, payments }) => {
			const due = (await billing
				.collection<{ _id: number; nextRenewalTimestamp: Date; attempts: number; midId: number; cardToken: string }>("customers")
				.findOne({ _id: customerId }))!;
			await payments.collection<{ _id: string; [field: string]: unknown }>("payment_operations").insertOne({
				_id: renewalKey(due),
				kind: "charge",
				initiator: "merchant",
				midId: due.midId,
				processor: "sandbox",
				cardToken: due.cardToken,
				amount: 999,
				currency: "EUR",
				target: null,
				reference: null,
				outcome: null,
				awaiting: null,
				decidingUntil: new Date(Date.now() + 600_000),
				createdAt: new Date(),
			});
			return renewalKey(due);
		});
		const ownCustomer = async () => (await app.http().get(`/api/customer/${customerId}`).set(bearer(own))).body;
		const before = await ownCustomer();

		// Act
		const held = await advance(32, own);

		// Assert: no transaction, and the customer still due, not counted as declined.
		expect(held.body).toMatchObject({ charged: 0, declined: 0, suspended: 0 });
		const ownTransactions = async () =>
			(await admin(app).get(`/accounts/${own.accountId}/customers/${customerId}/transactions`)).body as { type: string; status: string }[];
		expect((await ownTransactions()).map(t => [t.type, t.status])).toEqual([["SUBSCRIPTION_START", "APPROVED"]]);
		expect(await ownCustomer()).toMatchObject({ status: "ACTIVE", attempts: 0, nextRenewalTimestamp: before.nextRenewalTimestamp });

		// Act: that call's time and the cycle's lease both run out (written, instead of waiting for them).
		await withDatabases(async ({ billing, payments }) => {
			await payments.collection<{ _id: string }>("payment_operations").updateOne({ _id: key }, { $set: { decidingUntil: new Date(0) } });
			await billing.collection("customers").updateOne({ _id: customerId as never }, { $set: { renewalLease: null } });
		});
		const later = await advance(32, own);

		// Assert
		expect(later.body).toMatchObject({ charged: 1, declined: 0 });
		expect((await ownTransactions()).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
	}, 30_000);

	test("When a customer is still listed in a slot an outage left it in as well as in the slot it is due in, then the run charges it once and takes it out of both", async () => {
		// Arrange: a run cut off after listing the customer in its next slot, before taking it out of the old one, leaves
		// it in two hour slots; both fall due in the same run.
		const own = await createShop(app);
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge })).body;
		const slotKey = (at: Date) => `${Math.floor(at.getTime() / 3_600_000) * 3_600_000}#${customerId % 8}`;
		const slots = await withDatabases(async ({ billing }) => {
			const due = (await billing.collection<{ _id: number; nextRenewalTimestamp: Date }>("customers").findOne({ _id: customerId }))!;
			const stale = slotKey(new Date(due.nextRenewalTimestamp.getTime() - 3 * DAY));
			await billing
				.collection<{ _id: string; ids: number[] }>("renewal_schedule")
				.updateOne({ _id: stale }, { $addToSet: { ids: customerId } }, { upsert: true });
			return { stale, due: slotKey(due.nextRenewalTimestamp) };
		});

		// Act
		const res = await advance(32, own);

		// Assert: one renewal, counted once, and the customer listed in its next slot only.
		expect(res.body).toMatchObject({ charged: 1, declined: 0, skipped: 0 });
		const renewals = (await admin(app).get(`/accounts/${own.accountId}/customers/${customerId}/transactions`)).body as { type: string }[];
		expect(renewals.filter(t => t.type === "RENEWAL")).toHaveLength(1);
		const { listedIn, next } = await withDatabases(async ({ billing }) => ({
			listedIn: (await billing.collection<{ _id: string; ids: number[] }>("renewal_schedule").find({ ids: customerId }).toArray()).map(
				d => d._id,
			),
			next: (await billing.collection<{ _id: number; nextRenewalTimestamp: Date }>("customers").findOne({ _id: customerId }))!
				.nextRenewalTimestamp,
		}));
		expect(listedIn).toEqual([slotKey(next)]);
		expect(listedIn).not.toContain(slots.stale);
		expect(listedIn).not.toContain(slots.due);
	}, 30_000);
});
