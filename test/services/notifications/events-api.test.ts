// GET /api/events and /api/events/{id} (issue 17): every event of the
// account as its webhook carries it, oldest first, and a merchant whose
// endpoint was down catches up with `after` and applies each event once.
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { bearer } from "../../factories/merchant";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";
import { eventually, setWebhookUrl } from "./webhook-events";

let app: TestApp;
let receiver: WebhookReceiver;
let shop: Shop;
let other: Shop;

beforeAll(async () => {
	// Webhook retries after tens of ms, so a receiver that comes back is served at once.
	app = await startApp({ env: { WEBHOOK_RETRY_BASE_MS: "50" } });
	receiver = await startWebhookReceiver();
	[shop, other] = await Promise.all([createShop(app), createShop(app)]);
	await setWebhookUrl(app, shop, receiver.url);
});
afterAll(async () => {
	await receiver.stop();
	await app.stop();
});

const get = (path: string, who: Shop = shop) => app.http().get(`/api${path}`).set(bearer(who));

async function checkout(who: Shop = shop): Promise<number> {
	const res = await submitCheckout(app, who, { productId: who.products.charge });
	if (typeof res.body.customerId !== "number") throw new Error(`checkout answered ${res.status} ${res.text}`);
	return res.body.customerId;
}

/** The events after `after` (all when undefined), page by page, until nextCursor is null. */
async function catchUp(after: string | undefined, limit: number, filters = ""): Promise<Envelope[]> {
	const events: Envelope[] = [];
	let query = after ? `after=${after}` : "";
	for (;;) {
		const res = await get(`/events?limit=${limit}${filters}${query ? `&${query}` : ""}`).expect(200);
		events.push(...res.body.data);
		if (res.body.nextCursor === null) return events;
		query = `cursor=${res.body.nextCursor}`;
	}
}

/** The webhooks the receiver accepted, by event id, as sent. */
const received = () => new Map(receiver.requests.map(r => [JSON.parse(r.rawBody).id as string, r.rawBody]));

describe("GET /api/events", () => {
	let customerId: number;

	beforeAll(async () => {
		customerId = await checkout();
		await checkout();
		await eventually(() => expect(received().size).toBeGreaterThanOrEqual(6));
	});

	test("When a merchant lists its events, then each is the envelope its webhook carried, oldest first", async () => {
		// Act
		const events = await catchUp(undefined, 100);

		// Assert
		const sent = received();
		expect(events.length).toBe(sent.size);
		for (const event of events) expect(JSON.stringify(event)).toBe(sent.get(event.id));
		expect(events.map(e => e.type)).toEqual(["CONVERSION", "TRANSACTION", "INVOICE_ISSUED", "CONVERSION", "TRANSACTION", "INVOICE_ISSUED"]);
		expect(events[0].customerId).toBe(customerId);
	});

	test("When filtered by type or customer, or one is read by id, then only those, as listed", async () => {
		const all = await catchUp(undefined, 100);

		const conversions = await catchUp(undefined, 1, "&type=CONVERSION");
		const ofCustomer = await catchUp(undefined, 100, `&customerId=${customerId}`);
		const one = await get(`/events/${all[1].id.toUpperCase()}`).expect(200);

		expect(conversions).toEqual(all.filter(e => e.type === "CONVERSION"));
		expect(ofCustomer).toEqual(all.filter(e => e.customerId === customerId));
		expect(one.body).toEqual(all[1]);
	});

	test("When another account asks, then it sees none of them, and an unknown id reads as an empty 200 like an unknown customer", async () => {
		const [event] = await catchUp(undefined, 1);

		const theirs = await get("/events", other).expect(200);
		const byId = await get(`/events/${event.id}`, other).expect(200);
		const after = await get(`/events?after=${event.id}`, other);
		const unknown = await get("/events/00000000-0000-4000-8000-000000000000").expect(200);

		expect(theirs.body).toEqual({ data: [], nextCursor: null });
		expect(byId.text).toBe("");
		expect(after.status).toBe(400);
		expect(after.body.message).toContain("after names no event of this account");
		expect(unknown.text).toBe("");
	});

	test("When the parameters are bad, then 400 BAD_REQUEST", async () => {
		const responses = await Promise.all([
			get("/events?limit=0"),
			get("/events?type=SOMETHING"),
			get("/events?after=zzz"),
			get("/events?customerId=abc"),
			get("/events/not-an-id"),
		]);
		const [first] = await catchUp(undefined, 1);
		const page = await get("/events?limit=1").expect(200);
		const both = await get(`/events?after=${first.id}&cursor=${page.body.nextCursor}`);

		expect(responses.map(r => r.status)).toEqual([400, 400, 400, 400, 400]);
		expect(both.status).toBe(400);
		expect(both.body.message).toBe("either cursor or after, not both");
	});
});

describe("Each customer's events in their own order", () => {
	test("When buyers check out at once and one is refunded, then each customer's events are listed as they happened: its CONVERSION before its TRANSACTION, createdAt never going back", async () => {
		// Arrange: concurrent checkouts, so the relay hands over several customers' events at once.
		const customers = await Promise.all(Array.from({ length: 6 }, () => checkout()));
		const [charge] = (await get(`/customer/${customers[0]}/transactions`).expect(200)).body.data;
		await get(`/refund/${charge.id}?amountToRefund=1`).expect(200);
		for (const customerId of customers) {
			const expected = customerId === customers[0] ? 5 : 3;
			await eventually(async () => expect(await catchUp(undefined, 100, `&customerId=${customerId}`)).toHaveLength(expected));
		}

		// Act
		const all = await catchUp(undefined, 100);

		// Assert: in the account's list and in each customer's, as they happened.
		for (const customerId of customers) {
			const own = await catchUp(undefined, 100, `&customerId=${customerId}`);
			expect(all.filter(e => e.customerId === customerId)).toEqual(own);
			expect(own.slice(0, 2).map(e => e.type)).toEqual(["CONVERSION", "TRANSACTION"]);
			const times = own.map(e => e.createdAt);
			expect(times).toEqual([...times].sort());
		}
	});
});

describe("Catching up after an outage", () => {
	test("When the webhook endpoint is down for a while, then /api/events after the last processed event gives every missed event exactly once", async () => {
		// Arrange: the merchant processed everything so far.
		await checkout();
		await eventually(async () => expect(received().size).toBe((await catchUp(undefined, 100)).length));
		const processed = await catchUp(undefined, 100);
		const lastProcessed = processed[processed.length - 1].id;
		await receiver.stop();
		const missedCustomers = [await checkout(), await checkout()];
		await get(`/refund/${(await get(`/customer/${missedCustomers[0]}/transactions`)).body.data[0].id}`).expect(200);
		await app.http().post(`/api/unsubscribe/${missedCustomers[1]}`).set(bearer(shop)).expect(200);

		// Act: catch up two at a time, while more checkouts happen.
		const during = Promise.all([checkout(), checkout()]);
		const caughtUp = await catchUp(lastProcessed, 2);
		// Their events are taken in a moment after the checkouts answer (the outbox relay).
		for (const customerId of await during) {
			await eventually(async () => expect(await catchUp(undefined, 100, `&customerId=${customerId}`)).toHaveLength(3));
		}
		const rest = await catchUp(caughtUp[caughtUp.length - 1]?.id ?? lastProcessed, 2);

		// Assert: each event once, none processed before, and every one the endpoint gets once it is back.
		const applied = [...caughtUp, ...rest];
		const ids = applied.map(e => e.id);
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids.some(id => processed.some(p => p.id === id))).toBe(false);
		expect(applied.map(e => e.type)).toEqual(expect.arrayContaining(["REFUND", "CANCELLATION"]));
		await receiver.start();
		await eventually(() => expect(received().size).toBe(processed.length + applied.length), 20_000);
		const sent = received();
		for (const event of applied) expect(JSON.stringify(event)).toBe(sent.get(event.id));
		expect(await catchUp(ids[ids.length - 1], 2)).toEqual([]);
	});
});
