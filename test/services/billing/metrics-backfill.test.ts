// The metrics' backfill (docs/metrics.md#backfill), an operator's command run over the REPL. Data older than the
// metrics cannot be made through any public surface (every change since counts itself), so the test makes a history
// through the API, then removes its metrics marks (`counted`, `metricsCounted`) and the counters (the metrics service's) through their own
// database connection, as they were before the metrics; the backfill must bring back what `GET /api/metrics` showed
// for every figure an older document can tell (not the renewals' tries, nor a dispute's churn cause).
import type { Connection } from "mongoose";
import { replCommands } from "../../../runtime/repl-commands";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { advanceClock, bearer, DAY_MS } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let db: Connection;
/** The metrics service's database: the counters. */
let counters: Connection;

const LOST_DISPUTE = "4000000000002602";
/** Figures an older document tells exactly, over a range that holds the whole history. */
const FIGURES = [
	"mrr",
	"activeSubscribers",
	"newMrr",
	"newSubscribers",
	"churnedMrr",
	"churnedSubscribers",
	"expansionMrr",
	"contractionMrr",
	"grossVolume",
	"refunds",
	"disputes",
	"chargebacks",
	"netVolume",
] as const;

const api = () => ({
	get: (path: string) => app.http().get(path).set(bearer(shop)),
	post: (path: string, body: object = {}) => app.http().post(path).set(bearer(shop)).send(body),
});

type Total = Record<(typeof FIGURES)[number] | "renewalsAttempted", number> & { churnedBy: Record<string, number> };

async function totals(): Promise<Total> {
	const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
	const res = await api()
		.get(`/api/metrics?from=${day(-3)}&to=${day(60)}&granularity=month&currency=EUR`)
		.expect(200);
	return res.body.series[0].total;
}

const pick = (total: Total) => Object.fromEntries(FIGURES.map(f => [f, total[f]]));

/** Whether an event of the account still waits in an outbox: its entry is applied before the event leaves it. */
async function waiting(): Promise<boolean> {
	const of = { accountId: shop.accountId, "outbox.0": { $exists: true } };
	const counts = await Promise.all(["customers", "transactions", "disputes"].map(name => db.collection(name).countDocuments(of)));
	return counts.some(n => n > 0);
}

/**
 * The totals once the relay has applied what is waiting: no event of the account left in an outbox, and the same
 * twice, 750 ms apart (three times the 250 ms the metrics service waits for the entries of a moment), matching
 * `until` if given.
 */
async function settled(until?: (total: Total) => boolean): Promise<Total> {
	const deadline = Date.now() + 15_000;
	let last = await totals();
	for (;;) {
		await new Promise(r => setTimeout(r, 750));
		const now = await totals();
		if (JSON.stringify(now) === JSON.stringify(last) && !(await waiting()) && (!until || until(now))) return now;
		if (Date.now() > deadline) throw new Error(`The metrics did not settle: ${JSON.stringify(now)}`);
		last = now;
	}
}

/** The data as it was before the metrics: no marks on the account's documents, no counters, no backfill run yet. */
async function forgetMetrics(): Promise<void> {
	const of = { accountId: shop.accountId };
	await db.collection("customers").updateMany(of, { $unset: { counted: "" } });
	await db.collection("transactions").updateMany(of, { $unset: { metricsCounted: "" } });
	await db.collection("disputes").updateMany(of, { $unset: { metricsCounted: "" } });
	// The account's index (its first month, its test clock) stays, as on a node that counted anything since the metrics.
	await counters.collection("metrics_months").deleteMany(of);
	await db.collection("metrics_backfill").deleteMany({});
}

/** The REPL's `metrics-backfill`, on the test's node as an operator's node runs it; what it printed. */
async function replBackfill(): Promise<{ customers: number; transactions: number; disputes: number; done: boolean }> {
	const printed: string[] = [];
	const log = jest.spyOn(console, "log").mockImplementation(line => void printed.push(String(line)));
	try {
		await replCommands.find(c => c.command === "metrics-backfill")!.action(app.broker, { options: {} });
	} finally {
		log.mockRestore();
	}
	return JSON.parse(printed.at(-1)!);
}

const pay = async (productId: number, card: string = CARDS.visa) => {
	const res = await submitCheckout(app, shop, { productId, card });
	expect(res.body.code).toBe("OK");
	return res.body.customerId as number;
};

let history: Total;

beforeAll(async () => {
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds", "notifications", "metrics"],
	});
	db = (app.broker.getLocalService("billing") as unknown as { connection: Connection }).connection;
	counters = (app.broker.getLocalService("metrics") as unknown as { connection: Connection }).connection;
	shop = await createShop(app);
	// A history: subscribers, an unsubscribe, a pause, a trial, a one-off, a refund, a lost dispute.
	await pay(shop.products.charge);
	const upgraded = await pay(shop.products.charge);
	await api().post(`/api/customer/${upgraded}/change`, { quantity: 3, mode: "now_without_proration" }).expect(200);
	await api()
		.post(`/api/unsubscribe/${await pay(shop.products.charge)}`)
		.expect(200);
	await api()
		.post(`/api/customer/${await pay(shop.products.charge)}/pause`)
		.expect(200);
	await pay(shop.products.schedule);
	await pay(shop.products.oneOff);
	const refunded = await pay(shop.products.charge);
	const [charge] = (await api().get(`/api/customer/${refunded}/transactions`).expect(200)).body.data;
	await app.http().get(`/api/refund/${charge.id}?amountToRefund=4.00`).set(bearer(shop)).set("Idempotency-Key", "backfill-1").expect(200);
	await pay(shop.products.charge, LOST_DISPUTE);
	// The dispute opens 3 days after its charge and is lost 12 days after it.
	await advanceClock(app, shop, 13);
	history = await settled(total => total.chargebacks > 0);
}, 60_000);
afterAll(() => app.stop());

describe("The metrics' backfill", () => {
	test("When the data predates the metrics, then the REPL's metrics-backfill counts it back to the figures the API showed", async () => {
		// Arrange
		expect(history).toMatchObject({ activeSubscribers: 3, newSubscribers: 6, churnedSubscribers: 3, refunds: 400, chargebacks: 999 });
		await forgetMetrics();
		expect((await totals()).newSubscribers).toBe(0);

		// Act
		const report = await replBackfill();

		// Assert: every older document counted once; the figures as before, but what older documents cannot tell.
		expect(report).toEqual({ customers: 6, transactions: expect.any(Number), disputes: 1, done: true });
		const after = await settled(total => total.chargebacks > 0 && total.newSubscribers > 0);
		expect(pick(after)).toEqual({ ...pick(history), expansionMrr: 0, newMrr: history.newMrr + history.expansionMrr });
		// The dispute's protection unsubscribed its customer: the document says unsubscribed, not by whom.
		expect(after.churnedBy).toEqual({ unsubscribed: 2, suspended: 0, disputed: 0, paused: 1 });
	});

	test("When the backfill runs again after its end, then it counts nothing and the figures stay", async () => {
		// Arrange
		const before = await settled();

		// Act
		const report = await replBackfill();

		// Assert
		expect(report).toEqual({ customers: 0, transactions: 0, disputes: 0, done: true });
		expect(await settled()).toEqual(before);
	});

	test("When a run stops after a page and two nodes' runs then race, then each document is counted once and the figures come back", async () => {
		// Arrange
		await forgetMetrics();
		const expected = await (async () => {
			await replBackfill();
			return settled(total => total.chargebacks > 0 && total.newSubscribers > 0);
		})();
		await forgetMetrics();

		// Act: one page of two ids, as a run that crashed after it; then two runs at once.
		const first = await app.broker.call<{ done: boolean }, object>("billing.backfillMetrics", { pages: 1, pageSize: 2 });
		const raced = await Promise.all([
			app.broker.call<{ customers: number; done: boolean }, object>("billing.backfillMetrics", {}),
			app.broker.call<{ customers: number; done: boolean }, object>("billing.backfillMetrics", {}),
		]);

		// Assert
		expect(first.done).toBe(false);
		expect(raced.map(r => r.done)).toEqual([true, true]);
		expect(await settled(total => total.chargebacks > 0 && total.newSubscribers === expected.newSubscribers)).toEqual(expected);
	});

	test("When an older customer changes before the backfill, then the change counts its movement and the backfill the customer's start", async () => {
		// Arrange
		const expected = await settled();
		await forgetMetrics();
		const [active] = (await api().get("/api/customers?status=ACTIVE").expect(200)).body.data.filter(
			(c: { productId: number; quantity: number }) => c.productId === shop.products.charge && c.quantity === 1,
		);

		// Act: a seat more, counted at once as an expansion from the state it had; then the backfill.
		await api().post(`/api/customer/${active.id}/change`, { quantity: 2, mode: "now_without_proration" }).expect(200);
		await replBackfill();

		// Assert
		const after = await settled(total => total.newSubscribers === expected.newSubscribers && total.expansionMrr > 0);
		expect(pick(after)).toEqual({ ...pick(expected), mrr: expected.mrr + 999, expansionMrr: 999 });
	});
});
