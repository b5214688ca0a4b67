// POST and DELETE /api/customer/{id}/cancel-at-period-end (docs/subscriptions.md#cancel-at-the-periods-end), over
// HTTP, with the sandbox test clock, a webhook receiver and the metrics read back.
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { clockTo, clockToRenewalOf, instantOf, nextRenewalOf } from "../../factories/test-clock";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "notifications", "metrics"] });
	receiver = await startWebhookReceiver();
});
// A shop per test: a test clock is its account's now, and only moves forward.
beforeEach(async () => {
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
});
afterAll(async () => {
	await receiver.stop();
	await app.stop();
});

const path = (id: number | string) => `/api/customer/${id}/cancel-at-period-end`;
const schedule = (id: number | string, body?: object, who: Shop = shop) => {
	const request = app.http().post(path(id)).set(bearer(who));
	return body === undefined ? request : request.send(body);
};
const undo = (id: number | string, who: Shop = shop) => app.http().delete(path(id)).set(bearer(who));
const customer = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop)).expect(200)).body;
const transactionsOf = async (id: number) =>
	(await app.http().get(`/api/customer/${id}/transactions`).set(bearer(shop)).expect(200)).body.data as {
		type: string;
		status: string;
		refundStatus: string;
	}[];

async function subscribed(productId = shop.products.charge, card: string = CARDS.visa): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card });
	expect(body.code).toBe("OK");
	return body.customerId;
}

/** The customer's webhooks in the order they were written (deliveries may arrive out of it). */
const mine = (customerId: number) =>
	receiver.requests
		.map(r => JSON.parse(r.rawBody) as Envelope)
		.filter(e => e.customerId === customerId && e.accountId === shop.accountId)
		.sort((a, b) => a.createdAt.localeCompare(b.createdAt));

/** Waits until the receiver holds `count` events of each type for this customer; answers them all. */
async function eventsOf(customerId: number, types: Record<string, number>): Promise<Envelope[]> {
	const deadline = Date.now() + 10_000;
	const enough = () => Object.entries(types).every(([type, n]) => mine(customerId).filter(e => e.type === type).length >= n);
	while (!enough() && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	return mine(customerId);
}

const typesOf = (events: Envelope[]) => events.map(e => e.type).filter(t => t !== "TRANSACTION" && t !== "CONVERSION");

describe("Cancel at the period's end", () => {
	test("When a cancellation is scheduled, repeated, undone and scheduled again, then the customer stays ACTIVE with cancelAt its period's end, and each change sends its one event", async () => {
		// Arrange
		const id = await subscribed();
		const before = await customer(id);

		// Act
		const scheduled = await schedule(id, { reason: "too_expensive", comment: "Found a cheaper plan" });
		const repeated = await schedule(id, { reason: "other" });
		const undone = await undo(id);
		const undoneAgain = await undo(id);
		const again = await schedule(id);

		// Assert: the answers
		expect(scheduled.status).toBe(200);
		expect(scheduled.body).toEqual({ ...before, cancelAt: before.nextRenewalTimestamp });
		expect(repeated.status).toBe(200);
		expect(repeated.body).toEqual(scheduled.body);
		expect(undone.status).toBe(200);
		expect(undone.body).toEqual(before);
		expect(undoneAgain.status).toBe(200);
		expect(undoneAgain.body).toEqual(before);
		expect(again.body).toEqual({ ...before, cancelAt: before.nextRenewalTimestamp });

		// Assert: one event per change, in order, each with the cancellation as it was then
		const events = await eventsOf(id, { CANCELLATION_SCHEDULED: 2, CANCELLATION_UNDONE: 1 });
		expect(typesOf(events)).toEqual(["CANCELLATION_SCHEDULED", "CANCELLATION_UNDONE", "CANCELLATION_SCHEDULED"]);
		const [first, dropped, second] = events.filter(e => e.type.startsWith("CANCELLATION_"));
		const cancelAt = before.nextRenewalTimestamp;
		expect(first.data).toMatchObject({
			customer: { id, status: "ACTIVE", cancelAt },
			cancellation: { cancelAt, reason: "too_expensive", comment: "Found a cheaper plan" },
		});
		expect((first.data as { by?: string }).by).toBeUndefined();
		expect(dropped.data).toMatchObject({ customer: { cancelAt: null }, cancellation: { cancelAt, reason: "too_expensive" } });
		expect(second.data).toMatchObject({ cancellation: { cancelAt, reason: null, comment: null } });
	});

	test("When the test clock reaches the period's end of a scheduled cancellation, then the customer is UNSUBSCRIBED at cancelAt with one CANCELLATION, nothing is charged, and the metrics count the churn on that day", async () => {
		// Arrange
		const id = await subscribed();
		const { body } = await schedule(id, { reason: "not_using" }).expect(200);
		const cancelAt = body.cancelAt as string;

		// Act
		const at = await nextRenewalOf(app, shop, id);
		const report = (await clockTo(app, shop, new Date(at.getTime() + 3_600_000))).body;
		const later = (await clockTo(app, shop, new Date(at.getTime() + 40 * 86_400_000))).body;

		// Assert: ended, not charged, and the schedule forgot it
		expect(report).toMatchObject({ charged: 0, declined: 0, ended: 1 });
		expect(later).toMatchObject({ charged: 0, ended: 0 });
		expect(await customer(id)).toMatchObject({
			status: "UNSUBSCRIBED",
			renewalActive: false,
			nextRenewalTimestamp: null,
			unsubscriptionTimestamp: cancelAt,
			cancelAt: null,
		});
		expect((await transactionsOf(id)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
		const events = await eventsOf(id, { CANCELLATION: 1 });
		expect(typesOf(events)).toEqual(["CANCELLATION_SCHEDULED", "CANCELLATION"]);
		expect(events.find(e => e.type === "CANCELLATION")!.data).toMatchObject({
			customer: { status: "UNSUBSCRIBED", unsubscriptionTimestamp: cancelAt },
			cancellation: { cancelAt, reason: "not_using", comment: null },
		});

		// Assert: the churn is on cancelAt's day (the account's zone, CET here), not on the day it was scheduled
		const day = instantOf(cancelAt).toLocaleDateString("sv-SE", { timeZone: "CET" });
		const figures = async (from: string, to: string) => {
			const res = await app.http().get(`/api/metrics?from=${from}&to=${to}&granularity=day`).set(bearer(shop)).expect(200);
			return res.body.series[0]?.total as { churnedBy: Record<string, number> } | undefined;
		};
		const deadline = Date.now() + 10_000;
		while ((await figures(day, day))?.churnedBy.unsubscribed !== 1 && Date.now() < deadline) await new Promise(r => setTimeout(r, 50));
		expect((await figures(day, day))?.churnedBy.unsubscribed).toBe(1);
		const dayBefore = new Date(instantOf(cancelAt).getTime() - 86_400_000).toLocaleDateString("sv-SE", { timeZone: "CET" });
		const today = new Date().toLocaleDateString("sv-SE", { timeZone: "CET" });
		expect((await figures(today, dayBefore))?.churnedBy.unsubscribed).toBe(0);
	});

	test("When a trial is cancelled at its period's end, then nothing is charged: a scheduled first charge never runs, and a held card's authorization is voided", async () => {
		// Arrange
		const scheduledTrial = await subscribed(shop.products.schedule);
		const heldTrial = await subscribed(shop.products.preauthorize);

		// Act
		await schedule(scheduledTrial).expect(200);
		await schedule(heldTrial).expect(200);
		await clockToRenewalOf(app, shop, scheduledTrial, heldTrial);

		// Assert
		expect(await customer(heldTrial)).toMatchObject({ status: "UNSUBSCRIBED", cancelAt: null });
		expect(await customer(scheduledTrial)).toMatchObject({ status: "UNSUBSCRIBED", cancelAt: null });
		expect(await transactionsOf(scheduledTrial)).toEqual([]);
		expect((await transactionsOf(heldTrial)).map(t => [t.type, t.refundStatus])).toEqual([["PREAUTHORIZATION", "VOIDED"]]);
	});

	test("When a scheduled cancellation meets a pause, a change or an unsubscribe, then the pause and the change are refused, and the unsubscribe ends it at once with one CANCELLATION", async () => {
		// Arrange
		const id = await subscribed();
		await schedule(id).expect(200);
		const scheduled = await customer(id);

		// Act
		const paused = await app.http().post(`/api/customer/${id}/pause`).set(bearer(shop));
		const quoted = await app.http().post(`/api/customer/${id}/change-quote`).set(bearer(shop)).send({ quantity: 2, mode: "now_prorated" });
		const changed = await app.http().post(`/api/customer/${id}/change`).set(bearer(shop)).send({ quantity: 2, mode: "at_period_end" });

		// Assert: refused, nothing moved
		expect([paused.status, quoted.status, changed.status]).toEqual([409, 409, 409]);
		expect(paused.body.message).toBe("The subscription is cancelled at the period's end: undo the cancellation before pausing it");
		expect(changed.body.message).toBe(
			"The subscription is cancelled at the period's end: undo the cancellation (DELETE …/cancel-at-period-end) before changing it",
		);
		expect(await customer(id)).toEqual(scheduled);

		// Act: unsubscribed now, then the period's end passes
		await app.http().post(`/api/unsubscribe/${id}`).set(bearer(shop)).expect(200);
		const ended = await customer(id);
		const report = (await clockTo(app, shop, new Date(instantOf(scheduled.cancelAt).getTime() + 3_600_000))).body;

		// Assert
		expect(ended).toMatchObject({ status: "UNSUBSCRIBED", cancelAt: null });
		expect(report).toMatchObject({ charged: 0, ended: 0 });
		await eventsOf(id, { CANCELLATION: 1 });
		await new Promise(r => setTimeout(r, 300));
		expect(typesOf(mine(id))).toEqual(["CANCELLATION_SCHEDULED", "CANCELLATION"]);
		expect(await undo(id).then(r => r.status)).toBe(409);
	});

	test.each([
		["PAUSED", "The customer is PAUSED: no period runs out while paused; resume it, or unsubscribe it"],
		[
			"a change waiting",
			"The customer has a change waiting for the period's end; cancel it (DELETE /api/customer/{id}/pending-change) first",
		],
		["in recovery", "The customer's renewal was declined and is being retried: its period is over already; unsubscribe it instead"],
		["UNSUBSCRIBED", "Only an ACTIVE customer whose product renews has a period's end to cancel at"],
		["a one-off purchase", "Only an ACTIVE customer whose product renews has a period's end to cancel at"],
	])("When the customer is %s, then scheduling answers 409 and changes nothing", async (state, message) => {
		// Arrange
		const id = await subscribed(
			state === "a one-off purchase" ? shop.products.oneOff : shop.products.charge,
			state === "in recovery" ? CARDS.declinesRenewals : CARDS.visa,
		);
		if (state === "PAUSED") await app.http().post(`/api/customer/${id}/pause`).set(bearer(shop)).expect(200);
		if (state === "a change waiting")
			await app.http().post(`/api/customer/${id}/change`).set(bearer(shop)).send({ quantity: 2, mode: "at_period_end" }).expect(200);
		if (state === "in recovery") await clockToRenewalOf(app, shop, id);
		if (state === "UNSUBSCRIBED") await app.http().post(`/api/unsubscribe/${id}`).set(bearer(shop)).expect(200);
		const before = await customer(id);
		if (state === "in recovery") expect(before.attempts).toBe(1);

		// Act
		const res = await schedule(id);

		// Assert
		expect(res.status).toBe(409);
		expect(res.body.message).toBe(message);
		expect(await customer(id)).toEqual(before);
	});

	test("When the customer is unknown or another account's, or the request names `by` itself, then 404 or 400 and nothing is scheduled", async () => {
		// Arrange
		const id = await subscribed();
		const other = await createShop(app);

		// Act
		const unknown = await schedule(999_999_999);
		const theirs = await schedule(id, undefined, other);
		const undoTheirs = await undo(id, other);
		const posing = await schedule(id, { by: "buyer" });
		const tooLong = await schedule(id, { reason: "x".repeat(101) });
		const notText = await schedule(id, { comment: 42 });

		// Assert
		expect([unknown.status, theirs.status, undoTheirs.status]).toEqual([404, 404, 404]);
		expect(theirs.body.message).toBe("Customer not found");
		expect([posing.status, tooLong.status, notText.status]).toEqual([400, 400, 400]);
		expect(await customer(id)).toMatchObject({ status: "ACTIVE", cancelAt: null });
	});
});
