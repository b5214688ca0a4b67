// POST /api/customer/{id}/pause and /resume (docs/subscriptions.md#pause-and-resume), over HTTP, with the sandbox
// test clock and a webhook receiver.
import { CARDS, cardUpdateSession, createShop, type Shop, submitCardUpdate, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createMerchant, DAY_MS } from "../../factories/merchant";
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

const pause = (id: number | string, body?: object, who: Shop = shop) => {
	const request = app.http().post(`/api/customer/${id}/pause`).set(bearer(who));
	return body === undefined ? request : request.send(body);
};
const resume = (id: number | string, who: Shop = shop) => app.http().post(`/api/customer/${id}/resume`).set(bearer(who));
const customer = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop))).body;
const transactionsOf = async (id: number) =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${id}/transactions`)).body as { type: string; status: string }[];
const clockTo = async (at: number) =>
	(
		await admin(app)
			.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(at).toISOString() })
			.expect(200)
	).body;
/** A local date-time of the API (TIME_ZONE) as epoch ms, within the zone's offset (two hours at most). */
const roughly = (local: string) => Date.parse(`${local}Z`);
const HOUR_MS = 3_600_000;

async function subscribed(productId = shop.products.charge, card: string = CARDS.visa): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card });
	expect(body.code).toBe("OK");
	return body.customerId;
}

/** Waits until the receiver holds events of these types for this customer. */
async function eventsOf(customerId: number, types: string[]): Promise<Envelope[]> {
	const deadline = Date.now() + 10_000;
	const mine = () => receiver.requests.map(r => JSON.parse(r.rawBody) as Envelope).filter(e => e.customerId === customerId);
	while (!types.every(t => mine().some(e => e.type === t)) && Date.now() < deadline) await new Promise(r => setTimeout(r, 25));
	return mine();
}

describe("Pause and resume", () => {
	test("When a customer with a change waiting for the period's end is paused, then 409 and nothing changes; once it is cancelled, paused and resumed, a prorated change charges for the time that was left", async () => {
		// Arrange: a second seat at the period's end.
		const id = await subscribed();
		const change = (body: object) => app.http().post(`/api/customer/${id}/change`).set(bearer(shop)).send(body);
		expect((await change({ quantity: 2, mode: "at_period_end" })).status).toBe(200);
		const scheduled = await customer(id);

		// Act
		const refused = await pause(id);

		// Assert: refused, the change still waits
		expect(refused.status).toBe(409);
		expect(refused.body.message).toBe(
			"The customer has a change waiting for the period's end; cancel it (DELETE /api/customer/{id}/pending-change) before pausing",
		);
		expect(await customer(id)).toEqual(scheduled);

		// Act: cancel, pause, resume, then the second seat now.
		await app.http().delete(`/api/customer/${id}/pending-change`).set(bearer(shop)).expect(200);
		expect((await pause(id)).status).toBe(200);
		const resumed = await resume(id);
		const now = await change({ quantity: 2, mode: "now_prorated" });

		// Assert: the period the resume restarted ends at the kept renewal, nearly all of it left: nearly a seat's price.
		expect(Math.abs(roughly(resumed.body.nextRenewalTimestamp) - roughly(scheduled.nextRenewalTimestamp))).toBeLessThan(60_000);
		expect(now.status).toBe(200);
		expect(now.body.transaction).toMatchObject({ type: "SUBSCRIPTION_CHANGE", status: "APPROVED" });
		expect(now.body.transaction.amount).toBeGreaterThan(9.9);
		expect(now.body.transaction.amount).toBeLessThanOrEqual(9.99);
		expect(await customer(id)).toMatchObject({ status: "ACTIVE", quantity: 2, pendingChange: null });
	});

	test("When a customer is paused without a resume date, then nothing renews while the clock moves months; resumed, it keeps the time it had left and is charged then", async () => {
		// Arrange
		const id = await subscribed();
		const before = await customer(id);

		// Act
		const paused = await pause(id);
		const moved = await clockTo(Date.now() + 100 * DAY_MS);

		// Assert: paused, nothing charged
		expect(paused.status).toBe(200);
		expect(paused.body).toMatchObject({
			id,
			status: "PAUSED",
			renewalActive: false,
			nextRenewalTimestamp: null,
			pause: { resumeAt: null },
		});
		expect(paused.body.pause.pausedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
		expect(moved.resumed).toBe(0);
		expect(await transactionsOf(id)).toHaveLength(1);
		expect(await customer(id)).toMatchObject({ status: "PAUSED" });

		// Act: resumed at the account's now, 100 days after the pause: the next renewal keeps the time that was left
		const resumed = await resume(id);

		// Assert (local date-times: an hour apart more or less across a change of summer time)
		expect(resumed.status).toBe(200);
		expect(resumed.body).toMatchObject({ id, status: "ACTIVE", renewalActive: true, pause: null });
		const next = roughly(resumed.body.nextRenewalTimestamp);
		expect(Math.abs(next - (roughly(before.nextRenewalTimestamp) + 100 * DAY_MS))).toBeLessThan(HOUR_MS + 60_000);

		// Charged when its time comes, once, and not before
		await clockTo(next - DAY_MS);
		expect(await transactionsOf(id)).toHaveLength(1);
		await clockTo(next + 3 * HOUR_MS);
		const after = await transactionsOf(id);
		expect(after.map(t => t.type)).toEqual(["SUBSCRIPTION_START", "RENEWAL"]);
		expect(await customer(id)).toMatchObject({ status: "ACTIVE", attempts: 0 });

		// The merchant heard of both, and can list them
		const events = await eventsOf(id, ["SUBSCRIPTION_PAUSED", "SUBSCRIPTION_RESUMED"]);
		const pausedEvent = events.find(e => e.type === "SUBSCRIPTION_PAUSED") as unknown as { data: Record<string, unknown> };
		expect(pausedEvent.data).toMatchObject({ pause: { pausedAt: paused.body.pause.pausedAt, resumeAt: null } });
		const resumedEvent = events.find(e => e.type === "SUBSCRIPTION_RESUMED") as unknown as { data: Record<string, unknown> };
		expect(resumedEvent.data).toMatchObject({ resume: { nextRenewalTimestamp: resumed.body.nextRenewalTimestamp } });
		const listed = await app.http().get(`/api/events?customerId=${id}&type=SUBSCRIPTION_PAUSED`).set(bearer(shop));
		expect(listed.body.data.map((e: Envelope) => e.type)).toEqual(["SUBSCRIPTION_PAUSED"]);
	});

	test("When a customer is paused with a resume date, then the test clock resumes it at that date with the time it had left, and charges it then", async () => {
		// Arrange
		const id = await subscribed();
		const before = await customer(id);
		const resumeAt = Date.now() + 60 * DAY_MS;

		// Act
		const paused = await pause(id, { resumeAt: new Date(resumeAt).toISOString() });
		const early = await clockTo(resumeAt - HOUR_MS);

		// Assert: still paused just before
		expect(paused.status).toBe(200);
		expect(paused.body.pause.resumeAt).toEqual(expect.any(String));
		expect(early.resumed).toBe(0);
		expect((await customer(id)).status).toBe("PAUSED");
		expect(await transactionsOf(id)).toHaveLength(1);

		// Act: the clock passes the resume date
		const passed = await clockTo(resumeAt + HOUR_MS);

		// Assert: resumed at resumeAt, next renewal = resumeAt + the time that was left at the pause
		expect(passed.resumed).toBe(1);
		const after = await customer(id);
		expect(after).toMatchObject({ status: "ACTIVE", renewalActive: true, pause: null });
		const left = roughly(before.nextRenewalTimestamp) - roughly(paused.body.pause.pausedAt);
		const next = roughly(after.nextRenewalTimestamp);
		expect(Math.abs(next - (roughly(paused.body.pause.resumeAt) + left))).toBeLessThan(2 * HOUR_MS);
		expect(await transactionsOf(id)).toHaveLength(1);

		await clockTo(next + 3 * HOUR_MS);
		expect((await transactionsOf(id)).map(t => t.type)).toEqual(["SUBSCRIPTION_START", "RENEWAL"]);
		const events = await eventsOf(id, ["SUBSCRIPTION_RESUMED"]);
		expect(events.filter(e => e.type === "SUBSCRIPTION_RESUMED")).toHaveLength(1);
	});

	test("When a SCHEDULE trial is paused, then the trial's time left is kept: its first charge comes that long after the resume", async () => {
		const id = await subscribed(shop.products.schedule);
		const before = await customer(id);

		await pause(id).expect(200);
		await clockTo(Date.now() + 30 * DAY_MS);
		const resumed = (await resume(id).expect(200)).body;

		// Resumed at the account's now, 30 days on (local date-times: an hour off across a change of summer time).
		const shift = roughly(resumed.nextRenewalTimestamp) - roughly(before.nextRenewalTimestamp);
		expect(Math.abs(shift - 30 * DAY_MS)).toBeLessThan(HOUR_MS + 60_000);
		expect(await transactionsOf(id)).toHaveLength(0);
		await clockTo(roughly(resumed.nextRenewalTimestamp) + 3 * HOUR_MS);
		expect((await transactionsOf(id)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
	});

	test("When a paused customer is unsubscribed, then it is UNSUBSCRIBED with a CANCELLATION, and its resume date never resumes it", async () => {
		const id = await subscribed();
		await pause(id, { resumeAt: new Date(Date.now() + 10 * DAY_MS).toISOString() }).expect(200);

		const res = await app.http().post(`/api/unsubscribe/${id}`).set(bearer(shop));
		const moved = await clockTo(Date.now() + 80 * DAY_MS);

		expect(res.body).toEqual({ success: true, message: `Customer ${id} unsubscribed` });
		expect(moved.resumed).toBe(0);
		expect(await customer(id)).toMatchObject({ status: "UNSUBSCRIBED", pause: null, renewalActive: false, nextRenewalTimestamp: null });
		expect(await transactionsOf(id)).toHaveLength(1);
		expect((await eventsOf(id, ["CANCELLATION"])).map(e => e.type)).toContain("CANCELLATION");
		expect((await resume(id)).status).toBe(409);
	});

	test("When a paused customer updates its card, then the card changes, nothing is charged, and it stays PAUSED", async () => {
		const id = await subscribed();
		await pause(id).expect(200);

		const session = (await cardUpdateSession(app, shop, id)).text;
		const updated = await submitCardUpdate(app, session, { card: CARDS.mastercard });

		expect(updated.body.code).toBe("OK");
		expect(await customer(id)).toMatchObject({ status: "PAUSED", cardType: "mastercard", nextRenewalTimestamp: null });
		expect((await transactionsOf(id)).map(t => t.type)).toEqual(["SUBSCRIPTION_START"]);
		expect((await resume(id)).body.status).toBe("ACTIVE");
	});
});

describe("Refusals change nothing", () => {
	test.each([
		// A value of another JSON type is named by its type (never coerced); a string by its format (docs/api.md).
		["resumeAt as a number", { resumeAt: 123 }, "resumeAt must be string"],
		["resumeAt null", { resumeAt: null }, "resumeAt must be string"],
		["resumeAt not a date-time", { resumeAt: "tomorrow" }, 'resumeAt must match format "date-time"'],
		["an unknown field", { reason: "holiday" }, "reason is not allowed"],
	])("When the body has %s, then 400 with the documented message", async (_, body, message) => {
		const id = await subscribed();
		const before = await customer(id);

		const res = await pause(id, body);

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message });
		expect(await customer(id)).toEqual(before);
	});

	test("When the id is not an integer or resume gets a body, then 400", async () => {
		expect((await pause("x1")).status).toBe(400);
		expect((await app.http().post("/api/customer/1/resume").set(bearer(shop)).send({ at: "x" })).status).toBe(400);
	});

	test.each([
		["in the past", -DAY_MS, "resumeAt must be in the future"],
		["more than 366 days ahead", 367 * DAY_MS, "resumeAt must be at most 366 days ahead"],
	])("When resumeAt is %s, then 409 and the customer stays ACTIVE", async (_, offset, message) => {
		const id = await subscribed();
		const before = await customer(id);

		const res = await pause(id, { resumeAt: new Date(Date.now() + offset).toISOString() });

		expect(res.status).toBe(409);
		expect(res.body).toEqual({ error: "CONFLICT", status: 409, message });
		expect(await customer(id)).toEqual(before);
	});

	test("When the customer is another account's or unknown, then 404 and nothing changes", async () => {
		const id = await subscribed();
		const other = await createMerchant(app);

		const foreign = await app.http().post(`/api/customer/${id}/pause`).set(bearer(other));
		const foreignResume = await app.http().post(`/api/customer/${id}/resume`).set(bearer(other));
		const missing = await pause(987654321);

		expect(foreign.status).toBe(404);
		expect(foreign.body).toEqual({ error: "NOT_FOUND", status: 404, message: "Customer not found" });
		expect(foreignResume.status).toBe(404);
		expect(missing.status).toBe(404);
		expect((await customer(id)).status).toBe("ACTIVE");
	});

	test("When the customer is unsubscribed, SUSPENDED, in recovery, in a PREAUTHORIZE trial, one-off, already paused or not paused, then 409 and nothing changes", async () => {
		const unsubscribed = await subscribed();
		await app.http().post(`/api/unsubscribe/${unsubscribed}`).set(bearer(shop)).expect(200);
		const suspended = await subscribed(shop.products.charge, CARDS.renewalsLostCard);
		const retrying = await subscribed(shop.products.charge, CARDS.renewalsInsufficientFunds);
		await clockTo(Date.now() + 32 * DAY_MS);
		const held = await subscribed(shop.products.preauthorize);
		const oneOff = await subscribed(shop.products.oneOff);
		const paused = await subscribed();
		await pause(paused).expect(200);
		const active = await subscribed();
		expect((await customer(suspended)).status).toBe("SUSPENDED");
		expect((await customer(retrying)).attempts).toBeGreaterThan(0);

		const cases: [number, () => Promise<{ status: number; body: { message: string } }>, string][] = [
			[unsubscribed, () => pause(unsubscribed), "Only an ACTIVE customer"],
			[suspended, () => pause(suspended), "SUSPENDED"],
			[retrying, () => pause(retrying), "being retried"],
			[held, () => pause(held), "authorization"],
			[oneOff, () => pause(oneOff), "does not renew"],
			[paused, () => pause(paused), "already PAUSED"],
			[active, () => resume(active), "not PAUSED"],
			[suspended, () => resume(suspended), "not PAUSED"],
		];
		for (const [id, act, message] of cases) {
			const before = await customer(id);
			const res = await act();
			expect({ id, status: res.status }).toEqual({ id, status: 409 });
			expect(res.body.message).toContain(message);
			expect(await customer(id)).toEqual(before);
		}
		const events = await app.http().get(`/api/events?type=SUBSCRIPTION_PAUSED&limit=100`).set(bearer(shop));
		expect(events.body.data.filter((e: Envelope) => [unsubscribed, suspended, retrying, held, oneOff].includes(e.customerId))).toEqual([]);
	});
});
