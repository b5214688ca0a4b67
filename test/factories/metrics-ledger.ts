// The subscription metrics recomputed from the public lists only (docs/metrics.md): the customers as
// `GET /api/customers` shows them, each one's transactions (`GET /api/customer/{id}/transactions`), the disputes
// (`GET /api/disputes`), the products and the account's tax settings. A simple model written for the tests, on
// purpose apart from services/billing/entries/: what it cannot see in the lists it does not claim (see
// test/services/billing/metrics-ledger.property.test.ts's header for the figures left out and why).
import type { MetricsAnswer, MetricsFigures } from "../../shared/contracts/metrics";
import { formatDateTime } from "../../shared/time";
import type { TestApp } from "../setup/app";
import { admin, bearer, DAY_MS, type TestMerchant } from "./merchant";

export interface ProductView {
	id: number;
	currency: string;
	amount: number;
	renewal: { every: number; unit: "day" | "week" | "month" | "year" } | null;
	taxRateBps: number | null;
}

export interface CustomerView {
	id: number;
	status: string;
	productId: number;
	quantity?: number;
	coupon: {
		percentOff: number | null;
		amountOff: number | null;
		currency: string | null;
		periodsLeft: number | null;
	} | null;
}

export interface TransactionView {
	id: number;
	type: string;
	status: string;
	amount: number;
	productId: number;
	authentication: object | null;
}

export interface DisputeView {
	id: number;
	disputedTransactionId: number;
	amount: number;
	currency: string;
}

export interface Ledger {
	products: Map<number, ProductView>;
	tax: { taxRateBps: number; pricesIncludeTax: boolean };
	customers: CustomerView[];
	/** Per customer, its transactions, oldest first. */
	transactionsOf: Map<number, TransactionView[]>;
	/** Every transaction of the account (`GET /api/transactions`). */
	transactions: TransactionView[];
	disputes: DisputeView[];
}

/** The figures of `GET /api/metrics`'s total this model recomputes. */
export interface LedgerFigures {
	mrr: number;
	activeSubscribers: number;
	newSubscribers: number;
	/** new + expansion − contraction − churned + reactivated: over a range opening at zero, the closing MRR. */
	netNewMrr: number;
	grossVolume: number;
	refunds: number;
	chargebacks: number;
	netVolume: number;
	disputes: number;
	renewalsAttempted: number;
	renewalsApprovedFirstTry: number;
	renewalsRecoveredByRetries: number;
	renewalsRecoveredByCardUpdate: number;
	renewalsLost: number;
}

/** The figures this model recomputes, in the order they are compared. */
export const LEDGER_FIGURES: (keyof LedgerFigures)[] = [
	"mrr",
	"activeSubscribers",
	"newSubscribers",
	"netNewMrr",
	"grossVolume",
	"refunds",
	"chargebacks",
	"netVolume",
	"disputes",
	"renewalsAttempted",
	"renewalsApprovedFirstTry",
	"renewalsRecoveredByRetries",
	"renewalsRecoveredByCardUpdate",
	"renewalsLost",
];

/** Those figures of an answer's total (or of the model's), 0 when absent: what a test compares. */
export const comparable = (figures: Partial<Record<keyof LedgerFigures, unknown>> | undefined): Record<string, unknown> =>
	Object.fromEntries(LEDGER_FIGURES.map(f => [f, figures?.[f] ?? 0]));

const DIGITS: Record<string, number> = { EUR: 2, USD: 2, JPY: 0 };

/** A decimal amount of the API in minor units of `currency`. */
export const minor = (amount: number, currency: string) => Math.round(Math.abs(amount) * 10 ** DIGITS[currency]);

/** Every item of a list, page by page. */
export async function allPages<T>(app: TestApp, merchant: TestMerchant, path: string): Promise<T[]> {
	const items: T[] = [];
	let cursor: string | null = null;
	do {
		const query: string = `${path}${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
		const res = await app.http().get(query).set(bearer(merchant)).expect(200);
		items.push(...res.body.data);
		cursor = res.body.nextCursor;
	} while (cursor);
	return items;
}

/** The lists, read as a merchant (and the products and tax settings as an operator). */
export async function readLedger(app: TestApp, merchant: TestMerchant): Promise<Ledger> {
	const [products, account, customers, transactions, disputes] = await Promise.all([
		admin(app).get(`/accounts/${merchant.accountId}/products`).expect(200),
		admin(app).get(`/accounts/${merchant.accountId}`).expect(200),
		allPages<CustomerView>(app, merchant, "/api/customers"),
		allPages<TransactionView>(app, merchant, "/api/transactions"),
		allPages<DisputeView>(app, merchant, "/api/disputes"),
	]);
	const transactionsOf = new Map<number, TransactionView[]>();
	for (const customer of customers) {
		const own = await allPages<TransactionView>(app, merchant, `/api/customer/${customer.id}/transactions`);
		transactionsOf.set(
			customer.id,
			own.sort((a, b) => a.id - b.id),
		);
	}
	return {
		products: new Map((products.body as ProductView[]).map(p => [p.id, p])),
		tax: account.body.invoicing,
		customers,
		transactionsOf,
		transactions,
		disputes,
	};
}

/** n / d rounded half away from zero (n ≥ 0, d > 0). */
const roundHalf = (n: bigint, d: bigint) => Number((2n * n + d) / (2n * d));

const PER_YEAR = { day: 365n, week: 52n, month: 12n, year: 1n } as const;

/** What the customer's next charge bills, net of tax, as a month's worth (docs/metrics.md#mrr). */
export function mrrOf(ledger: Ledger, customer: CustomerView): number {
	const product = ledger.products.get(customer.productId)!;
	if (!product.renewal) return 0;
	const list = minor(product.amount, product.currency) * (customer.quantity ?? 1);
	const coupon = customer.coupon;
	const inForce =
		coupon !== null &&
		(coupon.periodsLeft === null || coupon.periodsLeft > 0) &&
		(coupon.currency === null || coupon.currency === product.currency);
	let discount = 0;
	if (inForce && coupon.percentOff !== null) discount = Math.min(Math.floor((list * coupon.percentOff + 50) / 100), list);
	else if (inForce && coupon.amountOff !== null) discount = Math.min(minor(coupon.amountOff, product.currency), list);
	const rate = BigInt(product.taxRateBps ?? ledger.tax.taxRateBps);
	const afterDiscount = BigInt(list - discount);
	const net = ledger.tax.pricesIncludeTax ? roundHalf(afterDiscount * 10_000n, 10_000n + rate) : Number(afterDiscount);
	return roundHalf(BigInt(net) * PER_YEAR[product.renewal.unit], 12n * BigInt(product.renewal.every));
}

const approved = (tx: TransactionView) => tx.status === "APPROVED";

/** A try the renewal cycle made: a later period (`RENEWAL`), or a first charge at a trial's end (no buyer, so no authentication). */
const cycleTry = (tx: TransactionView) =>
	(tx.type === "RENEWAL" || (tx.type === "SUBSCRIPTION_START" && tx.authentication === null)) && tx.status !== "ERROR";

/** A customer is a subscriber once a first charge was approved, while ACTIVE on a product that renews. */
function standing(ledger: Ledger, customer: CustomerView) {
	const own = ledger.transactionsOf.get(customer.id) ?? [];
	const start = own.find(tx => tx.type === "SUBSCRIPTION_START" && approved(tx));
	const renews = ledger.products.get(customer.productId)?.renewal != null;
	return { start, subscriber: customer.status === "ACTIVE" && renews && start !== undefined };
}

/**
 * The renewal figures of one customer: its cycle's tries, oldest first, grouped by period (a try after a declined one
 * is its period's retry); lost when its last try, of a later period (`RENEWAL`: it was a subscriber), was declined and
 * the customer then lapsed (suspended, or unsubscribed while retried).
 */
function renewalsOf(customer: CustomerView, own: TransactionView[], inScope: (tx: TransactionView) => boolean) {
	const figures = { attempted: 0, firstTry: 0, retries: 0, lost: 0 };
	const tries = own.filter(cycleTry);
	tries.forEach((tx, i) => {
		const first = i === 0 || approved(tries[i - 1]);
		if (!inScope(tx)) return;
		if (first) figures.attempted++;
		if (first && approved(tx)) figures.firstTry++;
		if (!first && approved(tx)) figures.retries++;
	});
	const last = tries[tries.length - 1];
	if (last && !approved(last) && last.type === "RENEWAL" && inScope(last) && ["SUSPENDED", "UNSUBSCRIBED"].includes(customer.status))
		figures.lost++;
	return figures;
}

/** The figures of one currency, in all its products or in one (`productId`). */
export function ledgerFigures(ledger: Ledger, currency: string, productId?: number): LedgerFigures {
	const productOf = (id: number) => ledger.products.get(id)!;
	const inScope = (id: number) => productOf(id).currency === currency && (productId === undefined || id === productId);
	const txInScope = (tx: TransactionView) => inScope(tx.productId);
	const figures: LedgerFigures = {
		mrr: 0,
		activeSubscribers: 0,
		newSubscribers: 0,
		netNewMrr: 0,
		grossVolume: 0,
		refunds: 0,
		chargebacks: 0,
		netVolume: 0,
		disputes: 0,
		renewalsAttempted: 0,
		renewalsApprovedFirstTry: 0,
		renewalsRecoveredByRetries: 0,
		renewalsRecoveredByCardUpdate: 0,
		renewalsLost: 0,
	};
	for (const customer of ledger.customers) {
		const { start, subscriber } = standing(ledger, customer);
		if (subscriber && inScope(customer.productId)) {
			figures.mrr += mrrOf(ledger, customer);
			figures.activeSubscribers++;
		}
		// New where its first charge was made, on a product that renews then.
		if (start && productOf(start.productId).renewal && txInScope(start)) figures.newSubscribers++;
		const renewals = renewalsOf(customer, ledger.transactionsOf.get(customer.id) ?? [], txInScope);
		figures.renewalsAttempted += renewals.attempted;
		figures.renewalsApprovedFirstTry += renewals.firstTry;
		figures.renewalsRecoveredByRetries += renewals.retries;
		figures.renewalsLost += renewals.lost;
	}
	for (const tx of ledger.transactions.filter(t => approved(t) && txInScope(t))) {
		const amount = minor(tx.amount, currency);
		if (["SUBSCRIPTION_START", "RENEWAL", "SUBSCRIPTION_CHANGE", "FINAL_USAGE"].includes(tx.type)) figures.grossVolume += amount;
		if (tx.type === "REFUNDED") figures.refunds += amount;
		if (tx.type === "CHARGEBACK") figures.chargebacks += amount;
	}
	const byId = new Map(ledger.transactions.map(tx => [tx.id, tx]));
	for (const dispute of ledger.disputes) {
		const charge = byId.get(dispute.disputedTransactionId);
		if (charge && txInScope(charge)) figures.disputes += minor(dispute.amount, dispute.currency);
	}
	figures.netNewMrr = figures.mrr;
	figures.netVolume = figures.grossVolume - figures.refunds - figures.chargebacks;
	return figures;
}

const dayOf = (ms: number) => formatDateTime(new Date(ms)).slice(0, 10);

/** The EUR total of GET /api/metrics from `from` (ms) to the day of a test clock `clockDays` ahead. */
export async function metricsTotal(
	app: TestApp,
	merchant: TestMerchant,
	from: number,
	clockDays: number,
): Promise<MetricsFigures | undefined> {
	const query = `from=${dayOf(from)}&to=${dayOf(Date.now() + (clockDays + 1) * DAY_MS)}&granularity=month&currency=EUR`;
	const res = await app.http().get(`/api/metrics?${query}`).set(bearer(merchant)).expect(200);
	return (res.body as MetricsAnswer).series[0]?.total;
}

/**
 * The metrics against the lists once the relay's sweeps are done: read until they agree or 60 s pass (an entry not
 * applied yet is applied by the next sweep; one counted twice never comes back down), then compared.
 */
export async function expectMetricsMatchLists(app: TestApp, merchant: TestMerchant, clockDays: number): Promise<LedgerFigures> {
	const from = Date.now() - 2 * DAY_MS;
	let got: Record<string, unknown> = {};
	let expected: Record<string, unknown> = {};
	for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise(r => setTimeout(r, 500))) {
		got = comparable(await metricsTotal(app, merchant, from, clockDays));
		expected = comparable(ledgerFigures(await readLedger(app, merchant), "EUR"));
		if (JSON.stringify(got) === JSON.stringify(expected)) break;
	}
	expect(got).toEqual(expected);
	return expected as unknown as LedgerFigures;
}
