// GET /api/metrics, /dashboard/api/metrics and /admin/accounts/{id}/metrics (issue 38): the read of the metrics'
// month counters over HTTP, through the real services. The counters are written here through the metrics service's own
// database connection, as metrics.apply writes them (services/metrics/models.ts), so that the read is checked apart
// from the write side, whose end-to-end tests check the figures of real checkouts and renewals.
import type { Connection } from "mongoose";
import type { MetricsAnswer } from "../../../shared/contracts/metrics";
import { formatDateTime } from "../../../shared/time";
import { createShop, type Shop } from "../../factories/checkout";
import { signedIn } from "../../factories/dashboard-session";
import { admin, advanceClock, bearer, DAY_MS } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";
import { recordCommands, scans, uniqueKeysOf } from "../../setup/db-commands";

let app: TestApp;
let shop: Shop;
let other: Shop;

const get = (query: string, who: Shop = shop) => app.http().get(`/api/metrics${query}`).set(bearer(who));

/** February to April 2026 in EUR (in all, the charge product and the first MID) and March in USD (all only). */
async function writeCounters(db: Connection, merchant: Shop): Promise<void> {
	const product = `p${merchant.products.charge}`;
	const mid = `m${merchant.mids[0]}`;
	const joined = { mrr: 999, subscribers: 1, newMrr: 999, newSubscribers: 1, grossVolume: 999 };
	const month = (currency: string, text: string, days: object) => ({
		_id: `${merchant.accountId}:${currency}:${text}`,
		accountId: merchant.accountId,
		currency,
		month: text,
		days,
		applied: {},
	});
	await db.collection("metrics_months").insertMany([
		month("EUR", "2026-02", { "27": { all: joined, [product]: joined, [mid]: joined } }),
		month("EUR", "2026-03", {
			"02": { all: { ...joined, mrr: 1998, subscribers: 2, newSubscribers: 2 }, [mid]: joined },
			"10": { all: { mrr: -999, subscribers: -1, churnedMrr: 999, churnedSubscribers: 1, churnedSuspended: 1, renewalsLost: 1 } },
		}),
		month("EUR", "2026-04", { "01": { all: { refunds: 500 }, [product]: { refunds: 500 } } }),
		month("USD", "2026-03", { "15": { all: { mrr: 500, subscribers: 1, newMrr: 500, newSubscribers: 1 } } }),
	] as never[]);
	await db.collection("metrics_index").insertOne({ _id: merchant.accountId, first: { EUR: "2026-02", USD: "2026-03" } } as never);
}

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "billing", "dashboard", "payments", "metrics"] });
	[shop, other] = await Promise.all([createShop(app), createShop(app)]);
	await writeCounters((app.broker.getLocalService("metrics") as unknown as { connection: Connection }).connection, shop);
});
afterAll(() => app.stop());

describe("GET /api/metrics", () => {
	test("When a range of March is read by week, then each currency with figures has a series, by code, closing at the running sums", async () => {
		// Act
		const res = await get("?from=2026-03-01&to=2026-03-31&granularity=week").expect(200);

		// Assert
		const answer = res.body as MetricsAnswer;
		expect(answer).toMatchObject({
			from: "2026-03-01",
			to: "2026-03-31",
			granularity: "week",
			productId: null,
			midId: null,
			timeZone: "CET",
		});
		expect(answer.series.map(s => s.currency)).toEqual(["EUR", "USD"]);
		const [eur, usd] = answer.series;
		expect(eur.points.map(p => [p.from, p.to, p.mrr, p.activeSubscribers])).toEqual([
			["2026-03-01", "2026-03-01", 999, 1],
			["2026-03-02", "2026-03-08", 2997, 3],
			["2026-03-09", "2026-03-15", 1998, 2],
			["2026-03-16", "2026-03-22", 1998, 2],
			["2026-03-23", "2026-03-29", 1998, 2],
			["2026-03-30", "2026-03-31", 1998, 2],
		]);
		expect(eur.total).toMatchObject({ mrr: 1998, newMrr: 999, churnedMrr: 999, renewalsLost: 1, churnRate: 1 / 3 });
		expect(eur.total.churnedBy).toEqual({ unsubscribed: 0, suspended: 1, disputed: 0, paused: 0 });
		expect(usd.total).toMatchObject({ mrr: 500, activeSubscribers: 1, newSubscribers: 1 });
	});

	test("When a product or a MID is named, then its own counts are read, and currencies without any are left out", async () => {
		// Act
		const product = await get(`?from=2026-04-01&to=2026-04-30&granularity=month&productId=${shop.products.charge}`).expect(200);
		const mid = await get(`?from=2026-03-01&to=2026-03-31&granularity=month&midId=${shop.mids[0]}`).expect(200);

		// Assert
		expect(product.body).toMatchObject({ productId: shop.products.charge, midId: null });
		expect(product.body.series.map((s: { currency: string }) => s.currency)).toEqual(["EUR"]);
		expect(product.body.series[0].total).toMatchObject({ mrr: 999, activeSubscribers: 1, refunds: 500, netVolume: -500 });
		expect(mid.body).toMatchObject({ productId: null, midId: shop.mids[0] });
		expect(mid.body.series[0].total).toMatchObject({ mrr: 1998, activeSubscribers: 2, newSubscribers: 1 });
	});

	test("When a currency is named, then only its series answers, and one without figures answers zeros", async () => {
		// Act
		const usd = await get("?from=2026-03-01&to=2026-03-31&granularity=month&currency=USD").expect(200);
		const gbp = await get("?from=2026-03-01&to=2026-03-31&granularity=month&currency=GBP").expect(200);

		// Assert
		expect(usd.body.series.map((s: { currency: string }) => s.currency)).toEqual(["USD"]);
		expect(gbp.body.series).toHaveLength(1);
		expect(gbp.body.series[0]).toMatchObject({ currency: "GBP", total: { mrr: 0, activeSubscribers: 0, churnRate: null, arpu: null } });
	});

	test("When the range is before the first month, then no currency has figures; one asked for answers zeros", async () => {
		// Act
		const all = await get("?from=2025-01-01&to=2025-01-31").expect(200);
		const eur = await get("?from=2025-01-01&to=2025-01-31&granularity=month&currency=EUR").expect(200);

		// Assert
		expect(all.body.series).toEqual([]);
		expect(eur.body.series[0].points).toEqual([expect.objectContaining({ from: "2025-01-01", to: "2025-01-31", mrr: 0, netNewMrr: 0 })]);
	});

	test("When an account has no counters, then it answers no series, and by default the 30 days that end today, by day", async () => {
		// Act
		const res = await get("", other).expect(200);

		// Assert
		expect(res.body).toMatchObject({ granularity: "day", productId: null, midId: null, series: [] });
		const days = (Date.parse(res.body.to) - Date.parse(res.body.from)) / 86_400_000 + 1;
		expect(days).toBe(30);
		expect(Math.abs(Date.parse(res.body.to) - Date.now())).toBeLessThan(2 * 86_400_000);
	});

	test("When a sandbox account's test clock was moved ahead, then the default range ends on the clock's day, where its changes count", async () => {
		// Arrange
		const sandbox = await createShop(app);
		await advanceClock(app, sandbox, 40);

		// Act
		const res = await get("", sandbox).expect(200);

		// Assert
		expect(res.body.to).toBe(formatDateTime(new Date(Date.now() + 40 * DAY_MS)).slice(0, 10));
	});

	test("When the range holds exactly 1,096 days, both ends counted, then it is read; one day more is refused", async () => {
		// Act: 2024-01-01 to 2026-12-31 is 366 + 365 + 365 days; to 2027-01-01, one more
		const longest = await get("?from=2024-01-01&to=2026-12-31&granularity=month").expect(200);
		const tooLong = await get("?from=2024-01-01&to=2027-01-01&granularity=month");
		const fromDefault = await get("?to=2025-12-31");

		// Assert
		expect(longest.body).toMatchObject({ from: "2024-01-01", to: "2026-12-31" });
		expect(longest.body.series[0].points).toHaveLength(36);
		// The EUR counters: 27 February, 2 and 10 March 2026.
		expect(longest.body.series[0].total.mrr).toBe(999 + 1998 - 999);
		expect(tooLong.status).toBe(400);
		expect(tooLong.body.message).toBe(
			"from and to may span at most 1096 days, both included (three years); ask for the rest in another request",
		);
		expect(fromDefault.body).toMatchObject({ from: "2025-12-02", to: "2025-12-31" });
	});

	test.each([
		["?from=2026-02-30&to=2026-03-01", "from and to must be real days"],
		["?from=20260101", "from must match pattern"],
		["?from=2026-03-02&to=2026-03-01", "from must not be after to"],
		["?from=2023-01-01&to=2026-01-01", "at most 1096 days"],
		["?granularity=year", "granularity must be equal to one of the allowed values"],
		["?productId=1&midId=1", "Send productId or midId, not both"],
		["?productId=abc", "productId must be integer"],
		["?productId=0", "productId must be >= 1"],
		["?currency=eur", "currency must match pattern"],
		["?from=2026-03-01&from=2026-03-02", "from must be given once"],
		["?days=30", "days is not allowed"],
		["?accountId=1", "accountId is not allowed"],
	])("When the query is %s, then 400 BAD_REQUEST says why", async (query, message) => {
		// Act
		const res = await get(query);

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(message) });
	});

	test("When another account's product or MID is named, then 404 as an unknown one", async () => {
		// Act
		const product = await get(`?productId=${other.products.charge}`);
		const mid = await get(`?midId=${other.mids[0]}`);
		const unknown = await get("?productId=987654321");

		// Assert
		expect([product.status, mid.status, unknown.status]).toEqual([404, 404, 404]);
		expect(product.body).toEqual(unknown.body);
		expect(product.body).toMatchObject({ error: "NOT_FOUND", message: "Product not found" });
		expect(mid.body).toMatchObject({ error: "NOT_FOUND", message: "Merchant account not found" });
	});

	test("When the figures are read, then every command is answered by key: the index by the account, the months by _id", async () => {
		// Arrange
		const recording = recordCommands(app);

		// Act
		await get("?from=2026-01-01&to=2026-12-31&granularity=month").expect(200);
		await get(`?from=2026-01-01&to=2026-12-31&productId=${shop.products.charge}`).expect(200);
		recording.stop();

		// Assert
		const metrics = recording.commands.filter(c => c.collection.startsWith("metrics_"));
		expect(metrics.map(c => `${c.command} ${c.collection}`)).toEqual([
			"find metrics_index",
			"find metrics_months",
			"find metrics_index",
			"find metrics_months",
		]);
		expect(scans(recording.commands, uniqueKeysOf(app))).toEqual([]);
	});
});

describe("The dashboard's and the operators' routes", () => {
	test("When the dashboard and an operator read the same query, then they answer what /api/metrics answers", async () => {
		// Arrange
		const session = await signedIn(app, shop, "viewer");
		const query = `?from=2026-02-20&to=2026-04-05&granularity=month&midId=${shop.mids[0]}`;

		// Act
		const api = await get(query).expect(200);
		const dashboard = await session.get(`/metrics${query}`).expect(200);
		const operators = await admin(app).get(`/accounts/${shop.accountId}/metrics${query}`).expect(200);

		// Assert
		expect(dashboard.body).toEqual(api.body);
		expect(operators.body).toEqual(api.body);
		expect(api.body.series[0].points).toHaveLength(3);
	});

	test("When the dashboard names another account, then 400; an operator's unknown account, 404 as under every /admin/accounts/{id}", async () => {
		// Arrange
		const session = await signedIn(app, shop, "viewer");

		// Act
		const foreign = await session.get(`/metrics?accountId=${other.accountId}`);
		const unknown = await admin(app).get("/accounts/987654321/metrics");

		// Assert
		expect(foreign.status).toBe(400);
		expect(unknown.status).toBe(404);
	});
});

describe("Applying entries (metrics.apply, billing's relay)", () => {
	test("When the same event's entry is handed over by several relays in the same moment, then it is counted once, and the others of that moment each once", async () => {
		// Arrange: a sweep and the relays that follow writes may hand the same event over at once.
		const own = await createShop(app);
		const entry = (grossVolume: number) => ({
			accountId: own.accountId,
			currency: "EUR",
			day: "2026-05-10",
			counts: { all: { grossVolume } },
		});
		const apply = (entries: object[]) => app.broker.call("metrics.apply", { entries, released: [] });

		// Act
		await Promise.all([
			apply([{ eventId: "ev-twice", entry: entry(100) }]),
			apply([
				{ eventId: "ev-twice", entry: entry(100) },
				{ eventId: "ev-other", entry: entry(50) },
			]),
			apply([{ eventId: "ev-twice", entry: entry(100) }]),
		]);
		await apply([{ eventId: "ev-twice", entry: entry(100) }]);

		// Assert
		const res = await get("?from=2026-05-01&to=2026-05-31&granularity=month", own).expect(200);
		expect((res.body as MetricsAnswer).series.map(s => [s.currency, s.total.grossVolume])).toEqual([["EUR", 150]]);
	});
});
