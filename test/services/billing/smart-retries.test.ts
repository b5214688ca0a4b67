// Declined renewals, through the sandbox test clock: each decline reason the
// sandbox models and what it means (hard, soft, a MID's own refusal), the
// account's retry days, recovery on a later retry, and cascading to another MID.
// The clock is moved to the customer's own due times (each try is made at its
// own, and the retry days count from the first decline's), so each test holds
// on any date whatever the month's length.

import { addDays, addPeriod, formatDateTime } from "../../../shared/time";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { clockTo, clockToRenewalOf, instantOf, nextRenewalOf } from "../../factories/test-clock";
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

const HOUR_MS = 3_600_000;
const to = (shop: Shop, at: Date) => clockTo(app, shop, at);
const plusHours = (at: Date, hours: number) => new Date(at.getTime() + hours * HOUR_MS);

interface TransactionView {
	type: string;
	status: string;
	midId: number;
	declineReason: string | null;
	declineCategory: string | null;
	timestamp: string;
}

const customer = async (shop: Shop, id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop)).expect(200)).body;
const renewals = async (shop: Shop, id: number) =>
	((await admin(app).get(`/accounts/${shop.accountId}/customers/${id}/transactions`).expect(200)).body as TransactionView[]).filter(
		t => t.type === "RENEWAL",
	);

async function subscribed(card: string): Promise<{ shop: Shop; customerId: number }> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });
	expect(res.body.code).toBe("OK");
	return { shop, customerId: res.body.customerId };
}

/** The TRANSACTION webhooks of a customer's renewals, as the merchant receives them. */
async function renewalWebhooks(customerId: number, count: number): Promise<TransactionView[]> {
	const deadline = Date.now() + 10_000;
	const mine = () =>
		receiver.requests
			.map(r => JSON.parse(r.rawBody))
			.filter(e => e.type === "TRANSACTION" && e.customerId === customerId && e.data.transaction.type === "RENEWAL")
			.map(e => e.data.transaction as TransactionView);
	while (mine().length < count && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	return mine();
}

describe("Declines by reason", () => {
	test.each([
		{ card: CARDS.renewalsLostCard, reason: "lost_card" },
		{ card: CARDS.renewalsStolenCard, reason: "stolen_card" },
		{ card: CARDS.renewalsExpiredCard, reason: "expired_card" },
	])(
		"When a renewal is declined $reason (a hard decline), then the customer is SUSPENDED at once and no retry is made",
		async ({ card, reason }) => {
			// Arrange
			const { shop, customerId } = await subscribed(card);
			const due = await nextRenewalOf(app, shop, customerId);

			// Act: the renewal, then past every retry day it would have had (1, 3, 5 and 7).
			await to(shop, due);
			await to(shop, addDays(due, 13));

			// Assert
			expect(await customer(shop, customerId)).toMatchObject({ status: "SUSPENDED", attempts: 1, renewalActive: false });
			const expected = { status: "DECLINED", declineReason: reason, declineCategory: "HARD" };
			expect(await renewals(shop, customerId)).toEqual([expect.objectContaining(expected)]);
			expect(await renewalWebhooks(customerId, 1)).toEqual([expect.objectContaining(expected)]);
		},
	);

	test.each([
		{ card: CARDS.renewalsInsufficientFunds, reason: "insufficient_funds" },
		{ card: CARDS.renewalsDoNotHonor, reason: "do_not_honor" },
	])("When a renewal is declined $reason (a soft decline), then it stays ACTIVE and is retried a day later", async ({ card, reason }) => {
		// Arrange
		const { shop, customerId } = await subscribed(card);
		const due = await nextRenewalOf(app, shop, customerId);

		// Act: the renewal, then its day-1 retry.
		await to(shop, due);
		const afterFirst = await customer(shop, customerId);
		await to(shop, addDays(due, 1));

		// Assert
		expect(afterFirst).toMatchObject({ status: "ACTIVE", attempts: 1, nextRenewalTimestamp: formatDateTime(addDays(due, 1)) });
		expect(await customer(shop, customerId)).toMatchObject({ status: "ACTIVE", attempts: 2 });
		const expected = { status: "DECLINED", declineReason: reason, declineCategory: "SOFT" };
		expect(await renewals(shop, customerId)).toEqual([expect.objectContaining(expected), expect.objectContaining(expected)]);
		expect(await renewalWebhooks(customerId, 2)).toHaveLength(2);
	});

	test("When an approved renewal is read, then it has no decline reason or category", async () => {
		const { shop, customerId } = await subscribed(CARDS.visa);

		await clockToRenewalOf(app, shop, customerId);

		expect(await renewals(shop, customerId)).toEqual([
			expect.objectContaining({ status: "APPROVED", declineReason: null, declineCategory: null }),
		]);
	});
});

describe("Retry days", () => {
	test("When an account has not set its retry days, then they are 1, 3, 5 and 7", async () => {
		const shop = await createShop(app);

		const res = await admin(app).get(`/accounts/${shop.accountId}`).expect(200);

		expect(res.body.renewalRetryDays).toEqual([1, 3, 5, 7]);
	});

	test("When an account sets its retry days, then a soft decline is retried on them, counted from the first decline, and the last suspends", async () => {
		// Arrange: retried 2 and 4 days after the first decline.
		const { shop, customerId } = await subscribed(CARDS.renewalsInsufficientFunds);
		const patched = await admin(app)
			.patch(`/accounts/${shop.accountId}`, { renewalRetryDays: [4, 2] })
			.expect(200);
		const firstDecline = await nextRenewalOf(app, shop, customerId);

		// Act: the renewal; an hour before its day-2 retry; the day-2 retry; the day-4 retry (day 6 counted from the one before).
		await to(shop, firstDecline);
		await to(shop, plusHours(addDays(firstDecline, 2), -1));
		const beforeFirstRetry = await customer(shop, customerId);
		await to(shop, addDays(firstDecline, 2));
		const afterFirstRetry = await customer(shop, customerId);
		await to(shop, addDays(firstDecline, 4));

		// Assert
		expect(patched.body.renewalRetryDays).toEqual([2, 4]);
		expect(beforeFirstRetry).toMatchObject({ status: "ACTIVE", attempts: 1 });
		expect(afterFirstRetry).toMatchObject({ status: "ACTIVE", attempts: 2 });
		expect(await customer(shop, customerId)).toMatchObject({ status: "SUSPENDED", attempts: 3 });
		expect((await renewals(shop, customerId)).map(t => t.status)).toEqual(["DECLINED", "DECLINED", "DECLINED"]);
	});

	// A retry that runs late (the hourly cycle missed its hour: an outage) keeps the next retry on its day counted from
	// the first decline. Over HTTP the test clock charges each try at its own due time, never late, so that case is
	// tested as the pure function it is: retry-state.test.ts, "When a retry that ran 6 hours late is declined…".

	test("When an account's retry days are empty, then the first soft decline suspends", async () => {
		const { shop, customerId } = await subscribed(CARDS.renewalsInsufficientFunds);
		await admin(app).patch(`/accounts/${shop.accountId}`, { renewalRetryDays: [] }).expect(200);

		await clockToRenewalOf(app, shop, customerId);

		expect(await customer(shop, customerId)).toMatchObject({ status: "SUSPENDED", attempts: 1 });
	});

	test("When retry days are set back to null, then the default applies again", async () => {
		const shop = await createShop(app);
		await admin(app)
			.patch(`/accounts/${shop.accountId}`, { renewalRetryDays: [9] })
			.expect(200);

		const res = await admin(app).patch(`/accounts/${shop.accountId}`, { renewalRetryDays: null }).expect(200);

		expect(res.body.renewalRetryDays).toEqual([1, 3, 5, 7]);
	});

	test.each([
		{ days: [0], why: "a day 0" },
		{ days: [61], why: "a day past 60" },
		{ days: [1, 1], why: "a day twice" },
		{ days: [1, 2, 3, 4, 5, 6, 7, 8, 9], why: "more than 8 days" },
		{ days: [1.5], why: "a fraction" },
		{ days: "1,3", why: "a string" },
	])("When retry days have $why, then 400 and nothing changes", async ({ days }) => {
		const shop = await createShop(app);

		const res = await admin(app).patch(`/accounts/${shop.accountId}`, { renewalRetryDays: days });

		expect(res.status).toBe(400);
		expect((await admin(app).get(`/accounts/${shop.accountId}`)).body.renewalRetryDays).toEqual([1, 3, 5, 7]);
	});
});

describe("Recovery on a retry", () => {
	test("When a soft-declined renewal is approved on a later retry, then the customer is ACTIVE with attempts 0 and the schedule keeps its day", async () => {
		// Arrange: a card that declines the merchant's first two charges.
		const { shop, customerId } = await subscribed(CARDS.renewalsDeclinedTwice);
		const before = await customer(shop, customerId);
		const due = instantOf(before.nextRenewalTimestamp);

		// Act: the renewal, then the retries on days 1 and 3.
		for (const at of [due, addDays(due, 1), addDays(due, 3)]) await to(shop, at);

		// Assert: the next renewal is two periods after the first charge (in TIME_ZONE's calendar), not one after the retry.
		expect((await renewals(shop, customerId)).map(t => t.status)).toEqual(["DECLINED", "DECLINED", "APPROVED"]);
		const after = await customer(shop, customerId);
		expect(after).toMatchObject({ status: "ACTIVE", attempts: 0, renewalActive: true });
		const twoMonths = addPeriod(instantOf(before.lastTimeBilled), { every: 2, unit: "month" });
		expect(after.nextRenewalTimestamp).toBe(formatDateTime(twoMonths));
	});
});

describe("Cascading to another MID", () => {
	test("When a MID refuses a renewal, then it is tried an hour later on another MID of the group, counted in attempts but without using up a retry day, and the customer keeps that MID", async () => {
		// Arrange: the card is refused by the MID that verified it at checkout; the shop's group has two visa MIDs.
		const { shop, customerId } = await subscribed(CARDS.renewalsRefusedByFirstMid);
		const due = await nextRenewalOf(app, shop, customerId);

		// Act: the renewal, then the try an hour later.
		await to(shop, due);
		const afterRefusal = await customer(shop, customerId);
		await to(shop, plusHours(due, 1));

		// Assert
		expect(afterRefusal).toMatchObject({ status: "ACTIVE", attempts: 1, nextRenewalTimestamp: formatDateTime(plusHours(due, 1)) });
		const [refused, approved] = await renewals(shop, customerId);
		expect(refused).toMatchObject({ status: "DECLINED", declineReason: "merchant_account_refused", declineCategory: "MERCHANT_ACCOUNT" });
		expect(approved).toMatchObject({ status: "APPROVED" });
		expect(shop.mids).toContain(refused.midId);
		expect(shop.mids).toContain(approved.midId);
		expect(approved.midId).not.toBe(refused.midId);
		expect(await customer(shop, customerId)).toMatchObject({ status: "ACTIVE", attempts: 0 });
		// The next renewal goes to the MID that approved.
		await clockToRenewalOf(app, shop, customerId);
		expect((await renewals(shop, customerId)).map(t => [t.status, t.midId])).toEqual([
			["DECLINED", refused.midId],
			["APPROVED", approved.midId],
			["APPROVED", approved.midId],
		]);
	});

	test("When no other MID of the group takes the card, then a MID's refusal is retried on the retry days like a soft decline", async () => {
		// Arrange: a product whose group has a single MID.
		const shop = await createShop(app);
		const a = admin(app);
		await a.post(`/accounts/${shop.accountId}/merchant-accounts`, { name: "Solo", group: "solo", cardTypes: ["visa"] }).expect(201);
		const productId = (
			await a
				.post(`/accounts/${shop.accountId}/products`, {
					name: "Solo",
					amount: 5,
					currency: "EUR",
					billing: "CHARGE",
					renewal: { every: 1, unit: "month" },
					merchantAccountGroup: "solo",
				})
				.expect(201)
		).body.id;
		const { customerId } = (await submitCheckout(app, shop, { productId, card: CARDS.renewalsRefusedByFirstMid })).body;
		const due = await nextRenewalOf(app, shop, customerId);

		// Act
		await to(shop, due);

		// Assert: its next try is on the first retry day, not an hour later.
		expect(await customer(shop, customerId)).toMatchObject({
			status: "ACTIVE",
			attempts: 1,
			nextRenewalTimestamp: formatDateTime(addDays(due, 1)),
		});
		expect(await renewals(shop, customerId)).toEqual([expect.objectContaining({ declineCategory: "MERCHANT_ACCOUNT" })]);
	});
});
