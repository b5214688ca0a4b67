// Card update sessions over HTTP (docs/recovery.md#card-update): the merchant's
// server creates one for a customer, the frame submits the new card; a customer
// in recovery is charged what it owes on it. Webhooks reach a real receiver.
// Renewals come from the sandbox test clock, moved to the customers' own due
// times (the account's now: a charge on a card update is made at it).
import { addDays, addPeriod, formatDateTime } from "../../../shared/time";
import {
	CARDS,
	cardUpdateSession,
	createShop,
	newSession,
	type Shop,
	submitCardUpdate,
	submitCheckout,
	uniqueEmail,
} from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { clockTo, clockToRenewalOf, instantOf } from "../../factories/test-clock";
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

const MONTH = { every: 1, unit: "month" } as const;
const customer = async (shop: Shop, id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop)).expect(200)).body;
const transactions = async (shop: Shop, id: number) =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${id}/transactions`).expect(200)).body as {
		type: string;
		status: string;
		paymentMethod: string;
		amount: number;
	}[];

async function shopWithWebhooks(): Promise<Shop> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	return shop;
}

async function subscribed(shop: Shop, card: string = CARDS.visa, email?: string): Promise<number> {
	const res = await submitCheckout(app, shop, { productId: shop.products.charge, card, email });
	expect(res.body.code).toBe("OK");
	return res.body.customerId;
}

async function eventsOf(customerId: number, type: string, atLeast = 0) {
	const mine = () => receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === customerId && e.type === type);
	const deadline = Date.now() + 10_000;
	while (mine().length < atLeast && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	await new Promise(r => setTimeout(r, 300));
	return mine();
}

async function updateSession(shop: Shop, customerId: number): Promise<string> {
	const res = await cardUpdateSession(app, shop, customerId).expect(200);
	return res.text;
}

describe("Card update sessions", () => {
	test("When the merchant asks for a customer's card update session, then it is a session id bound to the domain", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);

		const res = await cardUpdateSession(app, shop, customerId);

		expect(res.status).toBe(200);
		expect(res.text).toMatch(/^[0-9a-f-]{36}$/);
	});

	test("When the customer is unknown or another account's, then 404, as for an unknown one", async () => {
		const [shop, other] = [await createShop(app), await createShop(app)];
		const theirs = await subscribed(other);

		const unknown = await cardUpdateSession(app, shop, 987654321);
		const foreign = await cardUpdateSession(app, shop, theirs);

		expect(unknown.status).toBe(404);
		expect(foreign.status).toBe(404);
		expect(foreign.body).toEqual(unknown.body);
	});

	test("When the customer is unsubscribed, then 409 and no session", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		const res = await cardUpdateSession(app, shop, customerId);

		expect(res.status).toBe(409);
	});

	test("When the customer is unsubscribed after its session was made, then the update is CUSTOMER_NOT_UPDATABLE and nothing changes", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);
		const sessionId = await updateSession(shop, customerId);
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		const res = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });

		expect(res.body.code).toBe("CUSTOMER_NOT_UPDATABLE");
		expect(await customer(shop, customerId)).toMatchObject({ status: "UNSUBSCRIBED", cardType: "visa" });
	});

	test("When a card update session is used for a checkout, or a checkout session for a card update, then SESSION_NOT_FOUND", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);

		const checkout = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId: await updateSession(shop, customerId) });
		const update = await submitCardUpdate(app, await newSession(app, shop));

		expect(checkout.body.code).toBe("SESSION_NOT_FOUND");
		expect(update.body.code).toBe("SESSION_NOT_FOUND");
	});
});

describe("A new card for an active customer", () => {
	test("When the card is updated, then the answer says the card was updated (not a payment), the customer shows the new card, nothing is charged, and PAYMENT_METHOD_UPDATED arrives", async () => {
		// Arrange
		const shop = await shopWithWebhooks();
		const customerId = await subscribed(shop);

		// Act
		const res = await submitCardUpdate(app, await updateSession(shop, customerId), { card: CARDS.mastercard, expiry: "0931" });

		// Assert
		expect(res.body).toEqual({ code: "OK", message: "Card updated", customerId, recovered: false });
		expect(await customer(shop, customerId)).toMatchObject({
			status: "ACTIVE",
			cardBin: "555555",
			cardType: "mastercard",
			cardExpiredTime: "0931",
		});
		expect(await transactions(shop, customerId)).toHaveLength(1);
		const [event] = await eventsOf(customerId, "PAYMENT_METHOD_UPDATED", 1);
		expect(event.data.customer).toMatchObject({ id: customerId, cardType: "mastercard" });
		expect(await eventsOf(customerId, "REACTIVATION")).toEqual([]);
	});

	test("When the next renewal comes, then it is charged on the new card", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop, CARDS.renewalsLostCard);
		await submitCardUpdate(app, await updateSession(shop, customerId), { card: CARDS.visa });

		await clockToRenewalOf(app, shop, customerId);

		expect((await transactions(shop, customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
	});

	test("When the session was used once, then a second update with it is SESSION_USED", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);
		const sessionId = await updateSession(shop, customerId);
		await submitCardUpdate(app, sessionId);

		const again = await submitCardUpdate(app, sessionId, { card: CARDS.visa });

		expect(again.body.code).toBe("SESSION_USED");
	});

	test("When the new card is blacklisted or fails verification, then the customer keeps the old card", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop);
		await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "555555" }).expect(201);
		const sessionId = await updateSession(shop, customerId);

		const blocked = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });
		const unverified = await submitCardUpdate(app, sessionId, { card: CARDS.failsVerification });

		expect(blocked.body.code).toBe("BIN_BLACKLIST");
		expect(unverified.body.code).toBe("CREDITCARD_VALIDATION");
		expect(await customer(shop, customerId)).toMatchObject({ cardBin: "424242" });
	});

	test("When the new card already has this product for this email, then ALREADY_SUBSCRIBED and nothing changes", async () => {
		const shop = await createShop(app);
		const email = uniqueEmail();
		const first = await subscribed(shop, CARDS.visa, email);
		await subscribed(shop, CARDS.mastercard, email);

		const res = await submitCardUpdate(app, await updateSession(shop, first), { card: CARDS.mastercard });

		expect(res.body.code).toBe("ALREADY_SUBSCRIBED");
		expect(await customer(shop, first)).toMatchObject({ cardType: "visa" });
	});
});

describe("Recovery on update", () => {
	test("When a SUSPENDED customer gives a card that is approved, then the renewal owed is charged (the answer says both), it is ACTIVE from now, and TRANSACTION and REACTIVATION arrive", async () => {
		// Arrange: a hard decline suspended it; the account's now is the clock's time, the renewal's due time.
		const shop = await shopWithWebhooks();
		const customerId = await subscribed(shop, CARDS.renewalsLostCard);
		const now = await clockToRenewalOf(app, shop, customerId);
		expect(await customer(shop, customerId)).toMatchObject({ status: "SUSPENDED" });

		// Act
		const res = await submitCardUpdate(app, await updateSession(shop, customerId), { card: CARDS.visa });

		// Assert
		expect(res.body).toEqual({ code: "OK", message: "Card updated; the payment owed was accepted", customerId, recovered: true });
		const after = await customer(shop, customerId);
		expect(after).toMatchObject({ status: "ACTIVE", attempts: 0, renewalActive: true, cardBin: "424242" });
		// A new first period from the account's now: the next renewal is a period after it.
		expect(after).toMatchObject({ lastTimeBilled: formatDateTime(now), nextRenewalTimestamp: formatDateTime(addPeriod(now, MONTH)) });
		expect((await transactions(shop, customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
			["RENEWAL", "APPROVED"],
		]);
		expect(await eventsOf(customerId, "REACTIVATION", 1)).toHaveLength(1);
		expect(await eventsOf(customerId, "PAYMENT_METHOD_UPDATED", 1)).toHaveLength(1);
		expect(await eventsOf(customerId, "TRANSACTION", 3)).toHaveLength(3);
	});

	test("When a SUSPENDED customer with 3 seats gives a card, then the renewal owed is what its renewal bills: 3 × the price", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop, CARDS.renewalsLostCard);
		await app
			.http()
			.post(`/api/customer/${customerId}/change`)
			.set(bearer(shop))
			.send({ quantity: 3, mode: "now_without_proration" })
			.expect(200);
		await clockToRenewalOf(app, shop, customerId);
		expect(await customer(shop, customerId)).toMatchObject({ status: "SUSPENDED", quantity: 3 });

		const res = await submitCardUpdate(app, await updateSession(shop, customerId), { card: CARDS.visa });

		expect(res.body).toMatchObject({ code: "OK", recovered: true });
		const renewals = (await transactions(shop, customerId)).filter(t => t.type === "RENEWAL");
		expect(renewals.map(t => [t.status, t.amount])).toEqual([
			["DECLINED", 29.97],
			["APPROVED", 29.97],
		]);
		expect(await customer(shop, customerId)).toMatchObject({ status: "ACTIVE", quantity: 3 });
	});

	test("When the charge owed is declined on the new card, then PAYMENT_DECLINED, the customer stays as it was, and the session can be used again", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop, CARDS.renewalsLostCard);
		await clockToRenewalOf(app, shop, customerId);
		const sessionId = await updateSession(shop, customerId);

		const declined = await submitCardUpdate(app, sessionId, { card: CARDS.insufficientFunds });
		const retried = await submitCardUpdate(app, sessionId, { card: CARDS.visa });

		expect(declined.body.code).toBe("PAYMENT_DECLINED");
		expect(retried.body).toMatchObject({ code: "OK", recovered: true });
		expect((await transactions(shop, customerId)).map(t => t.status)).toEqual(["APPROVED", "DECLINED", "DECLINED", "APPROVED"]);
	});

	test("When a retrying customer gives a new card, then the renewal owed is charged and the schedule keeps its day", async () => {
		const shop = await createShop(app);
		const customerId = await subscribed(shop, CARDS.renewalsInsufficientFunds);
		const before = await customer(shop, customerId);
		const declined = await clockToRenewalOf(app, shop, customerId);
		expect(await customer(shop, customerId)).toMatchObject({ status: "ACTIVE", attempts: 1 });

		const res = await submitCardUpdate(app, await updateSession(shop, customerId), { card: CARDS.visa });

		expect(res.body).toMatchObject({ code: "OK", recovered: true });
		const after = await customer(shop, customerId);
		expect(after).toMatchObject({ status: "ACTIVE", attempts: 0 });
		// Two periods after the first charge (in TIME_ZONE's calendar), not one after the update.
		const twoMonths = addPeriod(instantOf(before.lastTimeBilled), { every: 2, unit: "month" });
		expect(after.nextRenewalTimestamp).toBe(formatDateTime(twoMonths));
		// The retry that was listed does not charge again: past every retry day (1, 3, 5 and 7), before the next renewal.
		await clockTo(app, shop, addDays(declined, 8));
		expect((await transactions(shop, customerId)).filter(t => t.status === "APPROVED")).toHaveLength(2);
	});

	test("When an update and the customer's retry run at the same time, then the period is charged at most once", async () => {
		// Arrange: customers retrying, each with a card the merchant's charges decline.
		const shop = await createShop(app);
		const customers = [];
		for (let i = 0; i < 4; i++) customers.push(await subscribed(shop, CARDS.renewalsInsufficientFunds));
		const lastDue = await clockToRenewalOf(app, shop, ...customers);
		for (const id of customers) expect(await customer(shop, id)).toMatchObject({ status: "ACTIVE", attempts: 1 });
		const sessions = await Promise.all(customers.map(id => updateSession(shop, id)));

		// Act: the cycle of their day-1 retries and the updates together.
		const [cycle, ...updates] = await Promise.all([
			clockTo(app, shop, addDays(lastDue, 1)),
			...sessions.map(sessionId => submitCardUpdate(app, sessionId, { card: CARDS.visa })),
		]);

		// Assert
		expect(cycle.status).toBe(200);
		for (const [i, id] of customers.entries()) {
			const approved = (await transactions(shop, id)).filter(t => t.type === "RENEWAL" && t.status === "APPROVED");
			expect(["OK", "TRY_AGAIN"]).toContain(updates[i].body.code);
			expect(approved.length).toBeLessThanOrEqual(1);
			if (updates[i].body.code === "OK") expect(approved).toHaveLength(1);
		}
	});
});
