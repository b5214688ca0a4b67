// A scripted month of a sandbox shop over HTTP with the test clock (docs/metrics.md): checkouts, a trial, an upgrade
// and a downgrade of seats, a pause and its resume, a refund, a dispute lost, renewals approved, declined and
// recovered by a retry, and a suspension; each day's figures from GET /api/metrics checked against the figures
// written here by hand. Changes made after the clock moved count on the clock's day; renewals, retries and the
// sandbox's dispute notices on the day they fell due (the account's now: account-time.ts); the checkouts on the day they were made.

import type { MetricsAnswer, MetricsFigures, MetricsPoint } from "../../../shared/contracts/metrics";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, DAY_MS } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds", "notifications", "metrics"],
	});
	shop = await createShop(app);
});
afterAll(() => app.stop());

const TIME_ZONE = "CET";
/** The local day (TIME_ZONE) of a time. */
const dayOf = (at: number) => new Intl.DateTimeFormat("en-CA", { timeZone: TIME_ZONE }).format(new Date(at));
/** The day of a local date-time the API answered (`2026-12-27T23:30:00.000`). */
const dayOfLocal = (local: string) => local.slice(0, 10);

const api = () => ({
	get: (path: string) => app.http().get(`/api${path}`).set(bearer(shop)),
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
});
const clockTo = (at: number) =>
	admin(app)
		.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(at).toISOString() })
		.expect(200);
const customer = async (id: number) => (await api().get(`/customer/${id}`).expect(200)).body;

async function subscribe(productId: number, card: string): Promise<number> {
	const { body } = await submitCheckout(app, shop, { productId, card });
	expect(body.code).toBe("OK");
	return body.customerId;
}

type Figures = Partial<Omit<MetricsPoint, "from" | "to" | "churnedBy">> & { churnedBy?: Partial<MetricsPoint["churnedBy"]> };

/** The figures written by hand, by day; a day's MRR and subscribers are the running sums of the days' changes. */
class Expected {
	private readonly days = new Map<string, Figures & { mrrChange: number; subscribersChange: number }>();

	add(day: string, figures: Figures & { mrrChange?: number; subscribersChange?: number }): void {
		const was = this.days.get(day) ?? { mrrChange: 0, subscribersChange: 0 };
		const sum = { ...was } as Record<string, unknown>;
		for (const [key, value] of Object.entries(figures)) {
			if (key === "churnedBy") sum.churnedBy = { ...(was.churnedBy ?? {}), ...(value as object) };
			else sum[key] = ((sum[key] as number | undefined) ?? 0) + (value as number);
		}
		this.days.set(day, sum as Figures & { mrrChange: number; subscribersChange: number });
	}

	/** The day's figures as the API answers them (every count not written here is 0). */
	point(day: string, closing: { mrr: number; activeSubscribers: number }) {
		const { mrrChange: _m, subscribersChange: _s, churnedBy, ...figures } = this.days.get(day) ?? { mrrChange: 0, subscribersChange: 0 };
		const zero = { unsubscribed: 0, suspended: 0, disputed: 0, paused: 0 };
		return { ...figures, ...closing, churnedBy: { ...zero, ...churnedBy } };
	}

	/** Each day's closing MRR and subscribers, from the first day. */
	closing(days: string[]): Map<string, { mrr: number; activeSubscribers: number }> {
		let mrr = 0;
		let activeSubscribers = 0;
		return new Map(
			days.map(day => {
				mrr += this.days.get(day)?.mrrChange ?? 0;
				activeSubscribers += this.days.get(day)?.subscribersChange ?? 0;
				return [day, { mrr, activeSubscribers }];
			}),
		);
	}
}

/** Only the fields `expected` names, of the API's point: each is checked, including the zeros. */
function picked(point: MetricsFigures, expected: object): object {
	return Object.fromEntries(Object.keys(expected).map(key => [key, point[key as keyof MetricsFigures]]));
}

const MOVEMENT_FIELDS = [
	"newMrr",
	"expansionMrr",
	"contractionMrr",
	"churnedMrr",
	"reactivatedMrr",
	"newSubscribers",
	"churnedSubscribers",
	"reactivatedSubscribers",
	"grossVolume",
	"refunds",
	"disputes",
	"chargebacks",
	"renewalsAttempted",
	"renewalsApprovedFirstTry",
	"renewalsRecoveredByRetries",
	"renewalsRecoveredByCardUpdate",
	"renewalsLost",
] as const;

async function metricsOf(from: string, to: string): Promise<MetricsAnswer> {
	// The relay applies each change's entry a moment after it: wait until the figures stop moving.
	let last = "";
	for (let i = 0; i < 100; i++) {
		const { body } = await api().get(`/metrics?from=${from}&to=${to}&granularity=day`).expect(200);
		const now = JSON.stringify(body);
		if (now === last) return body;
		last = now;
		await new Promise(resolve => setTimeout(resolve, 300));
	}
	throw new Error("The metrics kept moving");
}

describe("A scripted month of metrics", () => {
	test("When a month of checkouts, changes, a pause, a refund, a dispute, renewals, declines and a recovery is made with the test clock, then every day's figures are those computed by hand", async () => {
		const expected = new Expected();
		const C = shop.products.charge; // €9.99 a month
		const T0 = Date.now();
		const onDay = (k: number) => T0 + k * DAY_MS + 60_000;

		// Day 0 (now, before the clock moves): five subscribers at €9.99, a trial, a one-off of €25.00.
		const a = await subscribe(C, CARDS.visa);
		const b = await subscribe(C, CARDS.renewalsDeclinedTwice);
		const e = await subscribe(C, CARDS.renewalsLostCard);
		const g = await subscribe(C, CARDS.visa);
		const i = await subscribe(C, CARDS.disputedLost);
		const s = await subscribe(shop.products.schedule, CARDS.visa); // €4.99 a month after 14 days
		const f = await subscribe(shop.products.oneOff, CARDS.visa);
		for (const id of [a, b, e, g, i, s, f]) {
			const day = dayOfLocal((await customer(id)).subscriptionTimestamp);
			const recurring = id !== s && id !== f;
			expected.add(day, {
				grossVolume: id === f ? 2500 : id === s ? 0 : 999,
				...(recurring ? { newMrr: 999, newSubscribers: 1, mrrChange: 999, subscribersChange: 1 } : {}),
			});
		}

		// Day 2: A goes to 3 seats from now (no proration: nothing charged); F gets €5.00 back.
		await clockTo(onDay(2));
		await api().post(`/customer/${a}/change`, { quantity: 3, mode: "now_without_proration" }).expect(200);
		const [fCharge] = (await api().get(`/customer/${f}/transactions`).expect(200)).body.data;
		await app.http().get(`/api/refund/${fCharge.id}?amountToRefund=5.00`).set(bearer(shop)).expect(200);
		expected.add(dayOf(onDay(2)), { expansionMrr: 1998, mrrChange: 1998, refunds: 500 });

		// Day 3: I's charge is disputed (3 days after it); the protection unsubscribes I.
		await clockTo(onDay(3) + 2 * 3_600_000);
		const disputed = (await api().get("/disputes").expect(200)).body.data;
		expect(disputed).toHaveLength(1);
		const openedDay = dayOfLocal(disputed[0].openedAt);
		expected.add(openedDay, {
			disputes: 999,
			churnedMrr: 999,
			churnedSubscribers: 1,
			churnedBy: { disputed: 1 },
			mrrChange: -999,
			subscribersChange: -1,
		});

		// Day 4: G is paused; day 6: resumed; day 8: A goes down to 2 seats.
		await clockTo(onDay(4));
		await api().post(`/customer/${g}/pause`, {}).expect(200);
		expected.add(dayOf(onDay(4)), {
			churnedMrr: 999,
			churnedSubscribers: 1,
			churnedBy: { paused: 1 },
			mrrChange: -999,
			subscribersChange: -1,
		});
		await clockTo(onDay(6));
		await api().post(`/customer/${g}/resume`, {}).expect(200);
		expected.add(dayOf(onDay(6)), { reactivatedMrr: 999, reactivatedSubscribers: 1, mrrChange: 999, subscribersChange: 1 });
		await clockTo(onDay(8));
		await api().post(`/customer/${a}/change`, { quantity: 2, mode: "now_without_proration" }).expect(200);
		expected.add(dayOf(onDay(8)), { contractionMrr: 999, mrrChange: -999 });

		// Day 15: I's dispute was lost 12 days after its charge; S's trial ended on day 14 with its first charge.
		const sFirst = dayOfLocal((await customer(s)).nextRenewalTimestamp);
		await clockTo(onDay(15));
		const lost = (await api().get("/disputes").expect(200)).body.data[0];
		expect(lost.status).toBe("LOST");
		expected.add(dayOfLocal(lost.closedAt), { chargebacks: 999 });
		expected.add(sFirst, {
			grossVolume: 499,
			renewalsAttempted: 1,
			renewalsApprovedFirstTry: 1,
			newMrr: 499,
			newSubscribers: 1,
			mrrChange: 499,
			subscribersChange: 1,
		});

		// A month on: A's renewal of 2 seats and G's are approved; B's is declined twice, then approved on its second
		// retry (3 days after the first decline); E's card is lost: suspended at the first try.
		const due = async (id: number) => Date.parse(`${(await customer(id)).nextRenewalTimestamp}Z`);
		const renewalDay = async (id: number) => dayOfLocal((await customer(id)).nextRenewalTimestamp);
		const [aDay, bDay, eDay, gDay] = [await renewalDay(a), await renewalDay(b), await renewalDay(e), await renewalDay(g)];
		const latest = Math.max(await due(a), await due(b), await due(e), await due(g));
		await clockTo(latest + 3_600_000);
		// B's retries, each at the time its customer says, until one is approved: counted on the day it fell due.
		let retried = "";
		for (let tries = 0; tries < 4 && (await customer(b)).attempts > 0; tries++) {
			const next = (await customer(b)).nextRenewalTimestamp;
			retried = dayOfLocal(next);
			await clockTo(Date.parse(`${next}Z`) + 3 * 3_600_000);
		}
		expected.add(aDay, { grossVolume: 1998, renewalsAttempted: 1, renewalsApprovedFirstTry: 1 });
		expected.add(gDay, { grossVolume: 999, renewalsAttempted: 1, renewalsApprovedFirstTry: 1 });
		expected.add(bDay, { renewalsAttempted: 1 });
		expected.add(retried, { grossVolume: 999, renewalsRecoveredByRetries: 1 });
		expect(await customer(b)).toMatchObject({ status: "ACTIVE", attempts: 0 });
		expect((await customer(e)).status).toBe("SUSPENDED");
		expected.add(eDay, {
			renewalsAttempted: 1,
			renewalsLost: 1,
			churnedMrr: 999,
			churnedSubscribers: 1,
			churnedBy: { suspended: 1 },
			mrrChange: -999,
			subscribersChange: -1,
		});

		// Act
		const from = dayOf(T0);
		const to = dayOf(latest + 5 * DAY_MS);
		const answer = await metricsOf(from, to);

		// Assert: one EUR series, each day as written above
		expect(answer.series.map(series => series.currency)).toEqual(["EUR"]);
		const [{ points, total }] = answer.series;
		const days = points.map(point => point.from);
		const closings = expected.closing(days);
		for (const point of points) {
			const want = expected.point(point.from, closings.get(point.from)!);
			const fields = { ...Object.fromEntries(MOVEMENT_FIELDS.map(field => [field, 0])), ...want };
			expect({ day: point.from, ...picked(point, fields) }).toEqual({ day: point.from, ...fields });
		}
		// The whole range: 4 subscribers at the end (A's 2 seats, B, G and S), €44.95 of MRR.
		expect(picked(total, { mrr: 0, activeSubscribers: 0, grossVolume: 0, refunds: 0, chargebacks: 0, netVolume: 0 })).toEqual({
			mrr: 1998 + 999 + 999 + 499,
			activeSubscribers: 4,
			grossVolume: 5 * 999 + 2500 + 499 + 1998 + 999 + 999,
			refunds: 500,
			chargebacks: 999,
			netVolume: 5 * 999 + 2500 + 499 + 1998 + 999 + 999 - 500 - 999,
		});
		expect(picked(total, { renewalsAttempted: 0, renewalsEnteredRecovery: 0, recoveryRate: 0, churnRate: 0 })).toEqual({
			renewalsAttempted: 5,
			renewalsEnteredRecovery: 2,
			recoveryRate: 0.5,
			// 3 churned (I disputed, G paused, E suspended) of 0 at the start + 6 new + 1 reactivated.
			churnRate: 3 / 7,
		});
	});
});
