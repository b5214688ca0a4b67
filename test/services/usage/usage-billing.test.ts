// Usage billing over HTTP (docs/usage.md): meters made on the admin API, a month of events on every aggregation,
// each price kind billed at the renewal with the base fee in one charge, checked against amounts computed by hand
// here; late events billed as an adjustment on the next renewal; and the refusals of bad input, which count nothing.

import UsageService from "../../../services/usage/usage.service";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createPlan } from "../../factories/merchant";
import { clockTo, clockToRenewalOf } from "../../factories/test-clock";
import { setWallClock } from "../../factories/wall-clock";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let receiver: WebhookReceiver;

// A fixed start, so every period has the same length whatever day CI runs on (a 30-day April).
const START = Date.UTC(2027, 3, 1, 8, 0);

beforeAll(async () => {
	setWallClock(START);
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "invoicing", "notifications", "metrics", "usage"],
	});
	receiver = await startWebhookReceiver();
});
afterAll(async () => {
	jest.useRealTimers();
	await receiver.stop();
	await app.stop();
});

const METERS = [
	{ code: "calls", name: "API calls", aggregation: "count" },
	{ code: "tokens", name: "Tokens", aggregation: "sum", property: "tokens" },
	{ code: "users", name: "Active users", aggregation: "unique_count", property: "user" },
	{ code: "storage", name: "Storage (GB)", aggregation: "max", property: "gb" },
	{ code: "level", name: "Level", aggregation: "latest", property: "gb", filters: { region: "eu" } },
];

const PRICES = [
	{ meter: "calls", model: "per_unit", unitAmount: "0.2" },
	{ meter: "tokens", model: "package", packageSize: 1000, unitAmount: "50" },
	{
		meter: "users",
		model: "graduated",
		tiers: [
			{ upTo: 2, unitAmount: "0" },
			{ upTo: null, unitAmount: "300", flatAmount: 100 },
		],
	},
	{
		meter: "storage",
		model: "volume",
		tiers: [
			{ upTo: 10, unitAmount: "100" },
			{ upTo: null, unitAmount: "80" },
		],
	},
	{ meter: "level", model: "per_unit", unitAmount: "10", minimumAmount: 500 },
];

async function meteredShop(): Promise<{ shop: Shop; productId: number }> {
	const shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	for (const meter of METERS) await admin(app).post(`/accounts/${shop.accountId}/meters`, meter).expect(201);
	const productId = await createPlan(app, shop, { name: "Metered", amount: 9.99, usagePrices: PRICES });
	return { shop, productId };
}

async function subscribe(shop: Shop, productId: number): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card: CARDS.visa });
	expect(body.code).toBe("OK");
	return body.customerId;
}

const send = (shop: Shop, events: object[]) => app.http().post("/api/usage").set(bearer(shop)).send({ events });

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000).toISOString();

describe("Usage billed in arrears", () => {
	test("When a month of events on every aggregation is sent, then the renewal charges the base fee and each meter's price in one charge, as computed by hand, and its invoice shows one line per meter", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		const t = new Date(START);
		const calls = Array.from({ length: 2345 }, (_, i) => ({ id: `call-${i}`, customerId, meter: "calls", timestamp: at(t, i % 60) }));
		const others = [
			...[1500, 2000, 600.5].map((tokens, i) => ({
				id: `tok-${i}`,
				customerId,
				meter: "tokens",
				timestamp: at(t, i),
				properties: { tokens },
			})),
			...["a", "b", "c", "a", "d"].map((user, i) => ({
				id: `u-${i}`,
				customerId,
				meter: "users",
				timestamp: at(t, i),
				properties: { user },
			})),
			...[3, 12.5, 7].map((gb, i) => ({ id: `s-${i}`, customerId, meter: "storage", timestamp: at(t, i), properties: { gb } })),
			// The latest by timestamp is 2 (sent before 9, which is older); the US one is filtered out.
			{ id: "l-1", customerId, meter: "level", timestamp: at(t, 1), properties: { gb: 4, region: "eu" } },
			{ id: "l-3", customerId, meter: "level", timestamp: at(t, 3), properties: { gb: 2, region: "eu" } },
			{ id: "l-2", customerId, meter: "level", timestamp: at(t, 2), properties: { gb: 9, region: "eu" } },
			{ id: "l-us", customerId, meter: "level", timestamp: at(t, 4), properties: { gb: 99, region: "us" } },
		];

		// Act
		const first = await send(shop, calls.slice(0, 1000)).expect(200);
		const retried = await send(shop, calls.slice(0, 1000)).expect(200);
		await send(shop, calls.slice(1000, 2000)).expect(200);
		await send(shop, calls.slice(2000)).expect(200);
		const rest = await send(shop, others).expect(200);
		const preview = await app.http().get(`/api/customer/${customerId}/usage`).set(bearer(shop)).expect(200);
		await clockToRenewalOf(app, shop, customerId);

		// Assert: every call counted once, the retry all duplicates, the filtered one refused
		expect(first.body).toMatchObject({ accepted: 1000, duplicates: 0, refused: 0 });
		expect(retried.body).toMatchObject({ accepted: 0, duplicates: 1000, refused: 0 });
		expect(rest.body.refused).toBe(1);
		expect(rest.body.results.at(-1)).toMatchObject({ id: "l-us", status: "refused", reason: "FILTERED_OUT" });
		// By hand, in cents: calls 2,345 × 0.2 = 469; tokens 4,100.5 → 5 packages × 50 = 250; users 4 → 2 × 0 + 2 × 300
		// + 100 = 700; storage max 12.5 GB → volume's second tier, 12.5 × 80 = 1,000; level latest 2 × 10 = 20 → minimum 500.
		const byMeter = Object.fromEntries(preview.body.meters.map((m: { meter: string; amount: number }) => [m.meter, m.amount]));
		expect(byMeter).toEqual({ calls: 4.69, tokens: 2.5, users: 7, storage: 10, level: 5 });
		expect(preview.body.amount).toBe(29.19);
		const transactions = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data;
		const renewal = transactions.find((tx: { type: string }) => tx.type === "RENEWAL");
		expect(renewal).toMatchObject({ status: "APPROVED", amount: 39.18 });
		const invoice = await invoiceOf(shop, renewal.id);
		expect(invoice.lines.map((line: { kind: string; gross: number }) => [line.kind, line.gross])).toEqual([
			["plan", 9.99],
			["usage", 4.69],
			["usage", 2.5],
			["usage", 7],
			["usage", 10],
			["usage", 5],
		]);
		expect(invoice.lines[3].description).toBe("Active users: 4 units (1–2: 2 × 0 EUR; 3+: 2 × 3 EUR + 1 EUR)");
		expect(invoice.total).toBe(39.18);
		const renewalEvent = await webhookOf(customerId, e => e.data.transaction?.type === "RENEWAL");
		expect(renewalEvent.data.transaction).toMatchObject({ id: renewal.id, amount: 39.18 });
		// The metrics: the renewal's usage is usage volume within gross volume; MRR is the base fee alone (in cents).
		const total = await metricsTotal(shop, ({ grossVolume }) => grossVolume === 999 + 3918);
		expect(total).toMatchObject({ grossVolume: 999 + 3918, usageVolume: 2919, mrr: 999 });
	});

	test("When events come late for a billed period, then those within the grace window are billed as an adjustment on the next renewal, and later ones are refused", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		await send(shop, [
			{ id: "tok-a", customerId, meter: "tokens", timestamp: at(new Date(START), 1), properties: { tokens: 4500 } },
		]).expect(200);
		const renewedAt = await clockToRenewalOf(app, shop, customerId);
		const late = (id: string, tokens: number) => ({
			id,
			customerId,
			meter: "tokens",
			timestamp: at(renewedAt, -3600),
			properties: { tokens },
		});

		// Act
		const inGrace = await send(shop, [late("tok-late", 1000)]).expect(200);
		const future = await send(shop, [
			{ id: "tok-f", customerId, meter: "tokens", timestamp: at(renewedAt, 600), properties: { tokens: 1 } },
		]);
		await clockTo(app, shop, new Date(renewedAt.getTime() + 73 * 3_600_000));
		const afterGrace = await send(shop, [late("tok-too-late", 1000)]).expect(200);
		await clockToRenewalOf(app, shop, customerId);

		// Assert: 4,500 tokens billed 5 packages; with the late 1,000, 5,500 is 6: the adjustment is one package, 50 cents
		expect(inGrace.body.results[0]).toEqual({ id: "tok-late", status: "accepted" });
		expect(future.body.results[0]).toMatchObject({ status: "refused", reason: "TIMESTAMP_IN_FUTURE" });
		expect(afterGrace.body.results[0]).toMatchObject({ status: "refused", reason: "PERIOD_CLOSED" });
		const renewals = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data
			.filter((tx: { type: string }) => tx.type === "RENEWAL")
			.reverse();
		// The first: base 9.99, 5 packages 2.50, level's minimum 5. The second: base 9.99, no usage but level's minimum 5, and 0.50.
		expect(renewals.map((tx: { amount: number }) => tx.amount)).toEqual([17.49, 15.49]);
	});

	test("When a metered subscription is unsubscribed mid-period, then its usage so far is charged at once as FINAL_USAGE with no base fee and invoiced, and later events are refused", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		const t = new Date(START);
		await send(shop, [
			...Array.from({ length: 10 }, (_, i) => ({ id: `c-${i}`, customerId, meter: "calls", timestamp: at(t, i) })),
			{ id: "tok", customerId, meter: "tokens", timestamp: at(t, 1), properties: { tokens: 1200 } },
		]).expect(200);

		// Act
		const unsubscribed = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);
		const again = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);
		const after = await send(shop, [{ id: "after", customerId, meter: "calls", timestamp: at(t, 30) }]).expect(200);

		// Assert: 10 calls × 0.2 = 2; 1,200 tokens → 2 packages × 50 = 100; level's minimum 500: 602 cents, no base fee
		expect(unsubscribed.body.success).toBe(true);
		expect(again.body.success).toBe(true);
		const final = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data.filter(
			(tx: { type: string }) => tx.type === "FINAL_USAGE",
		);
		expect(final).toEqual([expect.objectContaining({ status: "APPROVED", amount: 6.02, refundStatus: "REFUNDABLE" })]);
		const invoice = await invoiceOf(shop, final[0].id);
		expect(invoice.lines.map((line: { kind: string; gross: number }) => [line.kind, line.gross])).toEqual([
			["usage", 0.02],
			["usage", 1],
			["usage", 0],
			["usage", 0],
			["usage", 5],
		]);
		expect(after.body.results[0]).toMatchObject({ status: "refused", reason: "SUBSCRIPTION_ENDED" });
	});

	test("When the usage service is down as a metered subscription is unsubscribed, then the unsubscribe answers, and the renewal cycle charges the final usage once the service is back", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		await send(shop, [{ id: "tok", customerId, meter: "tokens", timestamp: at(new Date(START), 1), properties: { tokens: 3000 } }]).expect(
			200,
		);
		await app.broker.destroyService(app.broker.getLocalService("usage")!);

		// Act
		const unsubscribed = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop));
		const during = await finalUsages(shop, customerId);
		app.broker.createService(UsageService);
		await app.broker.waitForServices(["usage"]);
		await clockTo(app, shop, new Date(START + 3_600_000));

		// Assert: 3,000 tokens → 3 packages, 150; level's minimum 500
		expect(unsubscribed.body.success).toBe(true);
		expect(during).toEqual([]);
		expect(await finalUsages(shop, customerId)).toEqual([expect.objectContaining({ status: "APPROVED", amount: 6.5 })]);
	});

	test("When a metered subscription's cancellation at the period's end comes, then the period's usage is charged as FINAL_USAGE instead of a renewal", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		await send(shop, [{ id: "tok", customerId, meter: "tokens", timestamp: at(new Date(START), 1), properties: { tokens: 999 } }]).expect(
			200,
		);
		await app.http().post(`/api/customer/${customerId}/cancel-at-period-end`).set(bearer(shop)).send({}).expect(200);

		// Act
		await clockToRenewalOf(app, shop, customerId);

		// Assert: 999 tokens → one package, 50; level's minimum 500
		const types = (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data.map(
			(tx: { type: string; amount: number }) => [tx.type, tx.amount],
		);
		expect(types).toEqual([
			["FINAL_USAGE", 5.5],
			["SUBSCRIPTION_START", 9.99],
		]);
	});

	test("When usage prices do not fit the product, then a new one is refused 400 and a change 409, unless it sends usagePrices, renewal and billing together", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const product = (body: object) =>
			admin(app).post(`/accounts/${shop.accountId}/products`, {
				name: "X",
				amount: 1,
				currency: "EUR",
				merchantAccountGroup: "default",
				...body,
			});
		const patch = (body: object) => admin(app).patch(`/accounts/${shop.accountId}/products/${productId}`, body);
		const calls = [{ meter: "calls", model: "per_unit", unitAmount: "1" }];

		// Act
		const answers = [
			await product({ billing: "PREAUTHORIZE", trialDays: 7, renewal: { every: 1, unit: "month" }, usagePrices: calls }),
			await product({ billing: "CHARGE", renewal: null, usagePrices: calls }),
			await product({
				billing: "CHARGE",
				renewal: { every: 1, unit: "month" },
				usagePrices: [{ meter: "nope", model: "per_unit", unitAmount: "1" }],
			}),
			await product({ billing: "CHARGE", renewal: { every: 1, unit: "month" }, usagePrices: [...calls, ...calls] }),
			await product({
				billing: "CHARGE",
				renewal: { every: 1, unit: "month" },
				usagePrices: [{ meter: "calls", model: "per_unit", unitAmount: "1", packageSize: 2 }],
			}),
			await patch({ renewal: null }),
			await patch({ renewal: null, billing: "CHARGE", usagePrices: calls }),
		];

		// Assert
		expect(answers.map(res => [res.status, res.body.error ?? null])).toEqual([
			[400, "BAD_REQUEST"],
			[400, "BAD_REQUEST"],
			[400, "BAD_REQUEST"],
			[400, "BAD_REQUEST"],
			[400, "BAD_REQUEST"],
			[409, "CONFLICT"],
			[400, "BAD_REQUEST"],
		]);
	});

	test("When a customer's events are listed, then they come newest received first, a page at a time, each once, with their period and status", async () => {
		// Arrange: three batches, the second repeating part of the first (duplicates list nothing).
		const { shop, productId } = await meteredShop();
		const customerId = await subscribe(shop, productId);
		const event = (i: number) => ({ id: `e-${i}`, customerId, meter: "calls", timestamp: at(new Date(START), i) });
		await send(
			shop,
			Array.from({ length: 20 }, (_, i) => event(i)),
		).expect(200);
		await send(
			shop,
			Array.from({ length: 20 }, (_, i) => event(i + 10)),
		).expect(200);
		await send(
			shop,
			Array.from({ length: 15 }, (_, i) => event(i + 30)),
		).expect(200);

		// Act
		const pages = [];
		let cursor: string | null = null;
		do {
			const res: { body: { data: { id: string; period: number; status: string; late: boolean }[]; nextCursor: string | null } } = await app
				.http()
				.get(`/api/customer/${customerId}/usage-events?limit=20${cursor ? `&cursor=${cursor}` : ""}`)
				.set(bearer(shop))
				.expect(200);
			pages.push(res.body.data);
			cursor = res.body.nextCursor;
		} while (cursor && pages.length < 10);

		// Assert: 45 distinct events, the last batch's first.
		const ids = pages.flat().map(e => e.id);
		expect(pages.map(p => p.length).slice(0, 3)).toEqual([20, 20, 5]);
		expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => `e-${44 - i}`));
		expect(pages[0][0]).toMatchObject({ period: 1, status: "counted", late: false });
	});

	test("When a batch holds bad events, then each is refused with its reason and counts nothing, and a batch of 1,001 is refused whole", async () => {
		// Arrange
		const { shop, productId } = await meteredShop();
		const other = await meteredShop();
		const customerId = await subscribe(shop, productId);
		const foreign = await subscribe(other.shop, other.productId);
		const base = { customerId, timestamp: new Date(START).toISOString() };

		// Act
		const mixed = await send(shop, [
			{ ...base, id: "ok", meter: "calls" },
			{ ...base, id: "no-meter", meter: "nope" },
			{ ...base, id: "foreign", meter: "calls", customerId: foreign },
			{ ...base, id: "text-sum", meter: "tokens", properties: { tokens: "12" } },
			{ ...base, id: "negative", meter: "tokens", properties: { tokens: -1 } },
			{ ...base, id: "too-big", meter: "calls", properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
			{ ...base, id: "missing", meter: "users" },
			{ ...base, id: 7, meter: "calls" },
			{ ...base, id: "ok", meter: "calls" },
		]).expect(200);
		const tooMany = await send(
			shop,
			Array.from({ length: 1001 }, (_, i) => ({ ...base, id: `m-${i}`, meter: "calls" })),
		);
		const usage = await app.http().get(`/api/customer/${customerId}/usage`).set(bearer(shop)).expect(200);
		const foreignUsage = await app.http().get(`/api/customer/${foreign}/usage`).set(bearer(shop));

		// Assert
		expect(mixed.body.results.map((r: { status: string; reason?: string }) => r.reason ?? r.status)).toEqual([
			"accepted",
			"UNKNOWN_METER",
			"UNKNOWN_CUSTOMER",
			"INVALID_PROPERTY",
			"INVALID_PROPERTY",
			"PROPERTIES_TOO_LARGE",
			"MISSING_PROPERTY",
			"INVALID_EVENT",
			"duplicate",
		]);
		expect(tooMany.status).toBe(400);
		expect(usage.body.meters.find((m: { meter: string }) => m.meter === "calls").quantity).toBe(1);
		expect(foreignUsage.status).toBe(404);
	});
});

/** The account's metrics over the clock's months, read until `ready` (the relay hands the entries over after the answer). */
async function metricsTotal(shop: Shop, ready: (total: { grossVolume: number }) => boolean) {
	const range = "from=2027-03-01&to=2027-07-31&granularity=month";
	for (let i = 0; i < 200; i++) {
		const { body } = await app.http().get(`/api/metrics?${range}`).set(bearer(shop)).expect(200);
		const total = body.series[0]?.total;
		if (total && ready(total)) return total;
		await new Promise(r => setTimeout(r, 50));
	}
	throw new Error("the metrics never counted the renewal");
}

async function finalUsages(shop: Shop, customerId: number) {
	return (await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data.filter(
		(tx: { type: string }) => tx.type === "FINAL_USAGE",
	);
}

async function invoiceOf(shop: Shop, transactionId: number) {
	for (let i = 0; i < 200; i++) {
		const res = await app.http().get(`/api/invoice/${transactionId}`).set(bearer(shop));
		if (res.status === 200) return res.body;
		await new Promise(r => setTimeout(r, 50));
	}
	const list = await app.http().get("/api/invoices").set(bearer(shop));
	throw new Error(`no invoice for transaction ${transactionId}: ${JSON.stringify(list.body)}`);
}

async function webhookOf(customerId: number, match: (e: Envelope) => boolean): Promise<Envelope> {
	for (let i = 0; i < 200; i++) {
		const found = receiver.requests.map(r => JSON.parse(r.rawBody) as Envelope).find(e => e.customerId === customerId && match(e));
		if (found) return found;
		await new Promise(r => setTimeout(r, 50));
	}
	throw new Error(`no webhook for customer ${customerId}`);
}
