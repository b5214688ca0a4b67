// Every metric read from GET /api/metrics equals the same metric recomputed from the lists of customers,
// transactions and disputes (issue 38): random short histories of one sandbox account on the real services, with
// products in EUR and JPY (monthly, yearly, every two weeks, trials, a one-off; tax added or included), coupons,
// checkouts with test cards (approved, declined, declining renewals, recovering on a retry, hard-declined, disputed),
// changes of plan and seats, pauses, resumes, unsubscribes, coupons attached and removed, partial refunds, and the
// test clock's renewal runs. The model (test/factories/metrics-ledger.ts) reads only the public lists.
//
// Compared, per currency, in all its products and in each product, over a range covering the whole history (the
// total): closing MRR and active subscribers, new subscribers, net new MRR (= closing MRR: the range opens before the
// account existed), gross volume, refunds, chargebacks, net volume, disputes opened, renewals attempted, approved at
// first try, recovered by retries, recovered by card update (none: no card update is made) and lost; and, in all
// products, churned − reactivated subscribers = new − active.
//
// Left out, because the lists cannot show them:
// - new, expansion, contraction, churned and reactivated MRR one by one: each is the customer's MRR at the moment of
//   a change, and the lists show only the customer as it is now (the seats, plan and coupon it had before are gone);
//   only their sum, net new MRR, is recomputable;
// - churned and reactivated subscribers apart, and churn by cause: a pause then a resume, or a suspension then an
//   unsubscribe, leaves only the last status in the customers' list and nothing in the transactions;
// - the day points: a sandbox account whose test clock was moved counts at the clock's time, which no list shows
//   (transactions carry the real time they were made), so only the range's total is compared;
// - churn rate, ARPU and recovery rate: ratios of the figures above, computed by the read (metrics-series tests).
//
// PROPERTY_RUNS sets the runs (default 6), PROPERTY_SEED the seed.
import fc from "fast-check";
import type { MetricsAnswer, MetricsFigures } from "../../../shared/contracts/metrics";
import { formatDateTime } from "../../../shared/time";
import { CARDS, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createMerchant, DAY_MS, type TestMerchant } from "../../factories/merchant";
import { comparable, ledgerFigures, minor, readLedger } from "../../factories/metrics-ledger";
import { startApp, type TestApp } from "../../setup/app";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 6);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);

let app: TestApp;

beforeAll(async () => {
	app = await startApp();
});
afterAll(() => app.stop());

const PRODUCTS = {
	eurMonthly: { amount: 9.99, currency: "EUR", billing: "CHARGE", renewal: { every: 1, unit: "month" } },
	eurYearly: { amount: 100, currency: "EUR", billing: "CHARGE", renewal: { every: 1, unit: "year" }, taxRateBps: 700 },
	eurTrial: { amount: 4.99, currency: "EUR", billing: "SCHEDULE", trialDays: 3, renewal: { every: 1, unit: "month" } },
	eurHold: { amount: 19.99, currency: "EUR", billing: "PREAUTHORIZE", trialDays: 2, renewal: { every: 1, unit: "month" } },
	eurOneOff: { amount: 25, currency: "EUR", billing: "CHARGE", renewal: null },
	jpyMonthly: { amount: 1200, currency: "JPY", billing: "CHARGE", renewal: { every: 1, unit: "month" } },
	jpyBiweekly: { amount: 500, currency: "JPY", billing: "CHARGE", renewal: { every: 2, unit: "week" }, taxRateBps: 0 },
} as const;
type ProductKey = keyof typeof PRODUCTS;

const COUPONS = {
	twentyTwice: { percentOff: 20, duration: "repeating", durationInPeriods: 2 },
	twoEurosForever: { amountOff: 2, currency: "EUR", duration: "forever" },
	halfOnce: { percentOff: 50, duration: "once" },
} as const;
type CouponKey = keyof typeof COUPONS;

const CHECKOUT_CARDS = {
	approved: CARDS.visa,
	declined: CARDS.insufficientFunds,
	declinesRenewals: CARDS.declinesRenewals,
	renewalsSoftDecline: CARDS.renewalsInsufficientFunds,
	renewalsHardDecline: CARDS.renewalsLostCard,
	recoversOnRetry: CARDS.renewalsDeclinedTwice,
	disputedLost: CARDS.disputedLost,
	disputedWon: "4000000000002628",
} as const;
type CardKey = keyof typeof CHECKOUT_CARDS;

type Op =
	| { kind: "checkout"; product: ProductKey; card: CardKey; coupon: CouponKey | null }
	| { kind: "change"; pick: number; product: ProductKey | null; quantity: number; mode: string }
	| { kind: "pause" | "resume" | "unsubscribe" | "removeCoupon"; pick: number }
	| { kind: "attachCoupon"; pick: number; coupon: CouponKey }
	| { kind: "refund"; pick: number; part: number | null }
	| { kind: "clock"; days: number };

const keys = <T extends object>(o: T) => Object.keys(o) as (keyof T)[];
const pick = fc.nat(99);
const checkoutArb: fc.Arbitrary<Op> = fc.record({
	kind: fc.constant("checkout" as const),
	product: fc.constantFrom(...keys(PRODUCTS)),
	card: fc.constantFrom(...keys(CHECKOUT_CARDS)),
	coupon: fc.option(fc.constantFrom(...keys(COUPONS)), { freq: 3, nil: null }),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
	{ weight: 2, arbitrary: checkoutArb },
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("change" as const),
			pick,
			product: fc.option(fc.constantFrom(...keys(PRODUCTS)), { freq: 2, nil: null }),
			quantity: fc.integer({ min: 1, max: 3 }),
			mode: fc.constantFrom("now_prorated", "now_without_proration", "at_period_end"),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constantFrom("pause" as const, "resume" as const, "unsubscribe" as const, "removeCoupon" as const),
			pick,
		}),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("attachCoupon" as const), pick, coupon: fc.constantFrom(...keys(COUPONS)) }) },
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("refund" as const), pick, part: fc.option(fc.integer({ min: 1, max: 500 })) }) },
	{ weight: 3, arbitrary: fc.record({ kind: fc.constant("clock" as const), days: fc.integer({ min: 1, max: 40 }) }) },
);
/** A few checkouts first, so that the operations after them have customers to act on. */
const historyArb = fc
	.tuple(fc.array(checkoutArb, { minLength: 2, maxLength: 4 }), fc.array(opArb, { minLength: 2, maxLength: 7 }))
	.map(([checkouts, ops]) => [...checkouts, ...ops]);
const taxArb = fc.record({ taxRateBps: fc.constantFrom(0, 2000), pricesIncludeTax: fc.boolean() });

interface Shop extends TestMerchant {
	products: Record<ProductKey, number>;
	coupons: Record<CouponKey, number>;
	customers: number[];
	/** How far the test clock was moved, in days from when the run began. */
	clockDays: number;
	began: number;
}

async function openShop(tax: { taxRateBps: number; pricesIncludeTax: boolean }): Promise<Shop> {
	const merchant = await createMerchant(app);
	const a = admin(app);
	await a.patch(`/accounts/${merchant.accountId}`, { invoicing: tax }).expect(200);
	for (const name of ["MID A", "MID B"])
		await a.post(`/accounts/${merchant.accountId}/merchant-accounts`, { name, group: "default", cardTypes: ["visa"] }).expect(201);
	const products = {} as Record<ProductKey, number>;
	for (const key of keys(PRODUCTS)) {
		const body = { name: key, merchantAccountGroup: "default", allowMultipleSubscriptions: true, ...PRODUCTS[key] };
		products[key] = (await a.post(`/accounts/${merchant.accountId}/products`, body).expect(201)).body.id;
	}
	const coupons = {} as Record<CouponKey, number>;
	for (const key of keys(COUPONS))
		coupons[key] = (
			await a.post(`/accounts/${merchant.accountId}/coupons`, { code: `${key}${merchant.accountId}`, ...COUPONS[key] }).expect(201)
		).body.id;
	return { ...merchant, products, coupons, customers: [], clockDays: 0, began: Date.now() };
}

/** Applies one operation as a merchant (or an operator's clock) would; refusals are part of the history, never a 5xx. */
async function apply(shop: Shop, op: Op): Promise<void> {
	const api = (method: "get" | "post" | "delete", path: string, body?: object) => {
		const req = app.http()[method](path).set(bearer(shop));
		return body ? req.send(body) : req;
	};
	const customer = "pick" in op && shop.customers.length ? shop.customers[op.pick % shop.customers.length] : null;
	let status = 200;
	if (op.kind === "checkout") {
		const extra = op.coupon ? { promotionCode: `${op.coupon}${shop.accountId}` } : {};
		const res = await submitCheckout(app, shop, { productId: shop.products[op.product], card: CHECKOUT_CARDS[op.card], extra });
		status = res.status;
		if (res.body.customerId) shop.customers.push(res.body.customerId);
	} else if (op.kind === "clock") {
		shop.clockDays += op.days;
		const advanceTo = new Date(shop.began + shop.clockDays * DAY_MS).toISOString();
		status = (await admin(app).post(`/accounts/${shop.accountId}/clock`, { advanceTo })).status;
	} else if (customer === null) {
		return;
	} else if (op.kind === "change") {
		const body = { ...(op.product ? { productId: shop.products[op.product] } : {}), quantity: op.quantity, mode: op.mode };
		status = (await api("post", `/api/customer/${customer}/change`, body)).status;
	} else if (op.kind === "pause" || op.kind === "resume") {
		status = (await api("post", `/api/customer/${customer}/${op.kind}`)).status;
	} else if (op.kind === "unsubscribe") {
		status = (await api("post", `/api/unsubscribe/${customer}`)).status;
	} else if (op.kind === "attachCoupon") {
		status = (await api("post", `/api/customer/${customer}/coupon`, { couponId: shop.coupons[op.coupon] })).status;
	} else if (op.kind === "removeCoupon") {
		status = (await api("delete", `/api/customer/${customer}/coupon`)).status;
	} else if (op.kind === "refund") {
		const charges = (await api("get", `/api/customer/${customer}/transactions?status=APPROVED`)).body.data ?? [];
		const charge = charges.find((tx: { refundStatus: string }) => tx.refundStatus === "REFUNDABLE");
		if (!charge) return;
		const { currency } = PRODUCTS[keys(shop.products).find(k => shop.products[k] === charge.productId)!];
		const part = op.part === null ? null : Math.min(op.part, minor(charge.amount, currency)) / 10 ** (currency === "JPY" ? 0 : 2);
		const amount = part === null ? "" : `?amountToRefund=${part}`;
		status = (await api("get", `/api/refund/${charge.id}${amount}`)).status;
	}
	if (status >= 500) throw new Error(`${JSON.stringify(op)} answered ${status}`);
}

const dayOf = (ms: number) => formatDateTime(new Date(ms)).slice(0, 10);

/** The metrics' total over the whole history (today to past the clock), per currency, in all products or one. */
async function metricsTotal(shop: Shop, productId?: number): Promise<Record<string, MetricsFigures>> {
	const from = dayOf(shop.began - 2 * DAY_MS);
	const to = dayOf(shop.began + (shop.clockDays + 2) * DAY_MS);
	const product = productId === undefined ? "" : `&productId=${productId}`;
	const res = await app.http().get(`/api/metrics?from=${from}&to=${to}&granularity=month${product}`).set(bearer(shop)).expect(200);
	return Object.fromEntries((res.body as MetricsAnswer).series.map(s => [s.currency, s.total]));
}

/** The metrics once the relay has applied every entry: the same answer on three reads in a row. */
async function settledMetrics(shop: Shop): Promise<Record<string, MetricsFigures>> {
	let last = "";
	let same = 0;
	for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise(r => setTimeout(r, 300))) {
		const now = JSON.stringify(await metricsTotal(shop));
		same = now === last ? same + 1 : 0;
		last = now;
		if (same === 2) break;
	}
	return JSON.parse(last);
}

test("When random histories run on several products and currencies, then every figure of GET /api/metrics equals the one recomputed from the lists of customers, transactions and disputes", async () => {
	await fc.assert(
		fc.asyncProperty(taxArb, historyArb, async (tax, ops) => {
			// Arrange
			const shop = await openShop(tax);

			// Act
			for (const op of ops) await apply(shop, op);
			const all = await settledMetrics(shop);
			const ledger = await readLedger(app, shop);

			// Assert: per currency, in all products, then in each product.
			const ids = new Set(ledger.transactions.map(tx => tx.id));
			expect([...ledger.transactionsOf.values()].flat().filter(tx => !ids.has(tx.id))).toEqual([]);
			for (const currency of ["EUR", "JPY"]) {
				const expected = ledgerFigures(ledger, currency);
				expect({ currency, ...comparable(all[currency]) }).toEqual({ currency, ...expected });
				const got = all[currency];
				expect((got?.churnedSubscribers ?? 0) - (got?.reactivatedSubscribers ?? 0)).toBe(
					expected.newSubscribers - expected.activeSubscribers,
				);
			}
			for (const key of keys(PRODUCTS)) {
				const productId = shop.products[key];
				const { currency } = PRODUCTS[key];
				const byProduct = await metricsTotal(shop, productId);
				expect({ product: key, ...comparable(byProduct[currency]) }).toEqual({
					product: key,
					...ledgerFigures(ledger, currency, productId),
				});
			}
		}),
		{ numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: false, interruptAfterTimeLimit: 240_000 },
	);
}, 600_000);
