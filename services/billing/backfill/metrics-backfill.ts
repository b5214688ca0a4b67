// The metrics' backfill (docs/metrics.md#backfill): an operator's command,
// run once, that counts what existed before the metrics: customers without
// `counted` (or with a `baseline` an update left), transactions and disputes
// without `metricsCounted`. It walks each collection by `_id`, a page of ids
// at a time, by key up to the ids allocated when it began (an operator's
// one-off, never a hot path: it reads every record once), and keeps how far
// it got in `metrics_backfill`, so a run after a crash goes on from there and a
// run after the end does nothing. Each older record gets, in one update
// conditional on its mark's absence, the mark and METRICS_ONLY events carrying
// its entries (listed in the outbox schedule first), so the relay applies them
// once, however often the command runs, on one node or two at once.
import { raw } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { type CustomerHistory, customerBackfillEntries } from "../entries/backfill-entries";
import { productOr } from "../entries/customer-entry";
import { disputeEntry, transactionEntry } from "../entries/metrics-entries";
import { contributionOf, type MetricsProduct, subscriptionState } from "../entries/subscription-state";
import { customerTransactionIds } from "../lists/pages";
import { type OutboxKind, outboxEvent, scheduleEvents } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import { readByIds } from "../outbox/relay-records";
import type { CustomerDoc } from "../records/customer";
import { BACKFILLED, type Backfilled, type MetricsEntry } from "../records/metrics";
import { METRICS_ONLY, type OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { TransactionStatus, TransactionType } from "../states";

type BackfillDeps = Pick<BillingDeps, "db" | "now" | "outbox" | "productOf">;

export interface BackfillOptions {
	/** Stop after this many pages (in all collections); the next run goes on from there. Absent: to the end. */
	pages?: number;
	/** Ids per page (default 100). */
	pageSize?: number;
	/** Each page's records that got events: hand them to the relay. */
	onPage?(toRelay: RelayTargets): void;
}

export interface BackfillReport {
	/** Records this run counted (marked with events), per collection. */
	customers: number;
	transactions: number;
	disputes: number;
	/** Every collection was walked to its end, by this run or an earlier one. */
	done: boolean;
}

const DEFAULT_PAGE_SIZE = 100;

/** The events carrying the entries, listed in the outbox schedule: write them in the update that follows. */
async function listed(deps: BackfillDeps, kind: OutboxKind, docId: number, entries: MetricsEntry[]): Promise<OutboxEvent[]> {
	const events = entries.map(entry => outboxEvent(deps, METRICS_ONLY, { metrics: entry }));
	if (events.length)
		await scheduleEvents(
			deps,
			events.map(event => ({ kind, docId, event })),
		);
	return events;
}

const pushed = (events: OutboxEvent[]) => (events.length ? { $push: { outbox: { $each: events } } } : {});

/** Its first charge and the try that suspended it, from its transactions (read by key through its bag). */
async function historyOf(deps: BackfillDeps, customer: CustomerDoc): Promise<CustomerHistory> {
	const transactions = [
		...(await readByIds<TransactionDoc>(deps.db.transactions, await customerTransactionIds(deps, customer._id))).values(),
	];
	const times = (type: TransactionType, status: TransactionStatus) =>
		transactions
			.filter(tx => tx.type === type && tx.status === status)
			.map(tx => tx.timestamp.getTime())
			.sort((a, b) => a - b);
	const first = times(TransactionType.SubscriptionStart, TransactionStatus.Approved)[0];
	const last = times(TransactionType.Renewal, TransactionStatus.Declined).at(-1);
	return { firstChargeAt: first === undefined ? null : new Date(first), lastDeclineAt: last === undefined ? null : new Date(last) };
}

/** An older customer: its `counted` set (or its baseline removed) with its entries' events; whether it got any. */
async function backfillCustomer(deps: BackfillDeps, customer: CustomerDoc): Promise<boolean> {
	const baseline = customer.counted?.baseline;
	if (customer.counted && !baseline) return false;
	const productId = baseline?.productId ?? customer.productId;
	const product: MetricsProduct = productOr(await deps.productOf(customer.accountId, productId).catch(() => null), customer, productId);
	const record = baseline ?? contributionOf(subscriptionState(customer, product));
	const history = record.standing === "none" ? { firstChargeAt: null, lastDeclineAt: null } : await historyOf(deps, customer);
	const events = await listed(deps, "c", customer._id, customerBackfillEntries(customer, record, product, history));
	const written = baseline
		? await deps.db.customers.updateOne(
				{ _id: customer._id, "counted.baseline": { $exists: true } },
				{ $unset: { "counted.baseline": "" }, ...pushed(events) },
			)
		: await deps.db.customers.updateOne(
				{ _id: customer._id, counted: { $exists: false } },
				{ $set: { counted: record }, ...pushed(events) },
			);
	return written.modifiedCount === 1 && events.length > 0;
}

const unmarked = { metricsCounted: { $exists: false } };

async function backfillTransaction(deps: BackfillDeps, tx: TransactionDoc): Promise<boolean> {
	const events = await listed(
		deps,
		"t",
		tx._id,
		[transactionEntry(tx, tx.timestamp)].filter(e => e !== null),
	);
	const written = await deps.db.transactions.updateOne({ _id: tx._id, ...unmarked }, { $set: { metricsCounted: true }, ...pushed(events) });
	return written.modifiedCount === 1 && events.length > 0;
}

/** Each collection's page: its older records counted; the ids of those that got events. */
const PAGES: Record<Backfilled, (deps: BackfillDeps, ids: number[]) => Promise<number[]>> = {
	async customers(deps, ids) {
		const customers = await deps.db.customers.find({ _id: { $in: ids } }).lean<CustomerDoc[]>();
		const counted = await Promise.all(customers.map(customer => backfillCustomer(deps, customer)));
		return customers.filter((_, i) => counted[i]).map(c => c._id);
	},
	async transactions(deps, ids) {
		const transactions = await deps.db.transactions.find({ _id: { $in: ids }, ...unmarked }).lean<TransactionDoc[]>();
		const counted = await Promise.all(transactions.map(tx => backfillTransaction(deps, tx)));
		return transactions.filter((_, i) => counted[i]).map(tx => tx._id);
	},
	async disputes(deps, ids) {
		const disputes = await deps.db.disputes.find({ _id: { $in: ids }, ...unmarked }).lean();
		const charges = await readByIds<TransactionDoc>(
			deps.db.transactions,
			disputes.map(d => d.transactionId),
		);
		const counted = await Promise.all(
			disputes.map(async dispute => {
				const charge = charges.get(dispute.transactionId);
				const entry = charge ? disputeEntry(charge, dispute.amount, dispute.openedAt) : null;
				const events = await listed(deps, "d", dispute._id, entry ? [entry] : []);
				const written = await deps.db.disputes.updateOne(
					{ _id: dispute._id, ...unmarked },
					{ $set: { metricsCounted: true }, ...pushed(events) },
				);
				return written.modifiedCount === 1 && events.length > 0;
			}),
		);
		return disputes.filter((_, i) => counted[i]).map(d => d._id);
	},
};

const TARGET: Record<Backfilled, keyof RelayTargets> = { customers: "customers", transactions: "transactions", disputes: "disputes" };

/** Counts what existed before the metrics, from where an earlier run got to; `pages` stops it early. */
export async function backfillMetrics(deps: BackfillDeps, options: BackfillOptions = {}): Promise<BackfillReport> {
	const report: BackfillReport = { customers: 0, transactions: 0, disputes: 0, done: false };
	const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
	let pagesLeft = options.pages ?? Number.POSITIVE_INFINITY;
	const progress = raw(deps.db.metricsBackfill);
	for (const collection of BACKFILLED) {
		const at = await deps.db.metricsBackfill.findById(collection).lean();
		if (at?.done) continue;
		// Records written since the metrics carry their marks: the walk ends at the ids allocated now.
		const bound = await deps.db.ids[collection].bound();
		let after = at?.after ?? 0;
		while (after + 1 < bound) {
			if (pagesLeft-- <= 0) return report;
			const last = Math.min(after + pageSize, bound - 1);
			const ids = Array.from({ length: last - after }, (_, i) => after + 1 + i);
			const counted = await PAGES[collection](deps, ids);
			report[collection] += counted.length;
			if (counted.length) options.onPage?.({ [TARGET[collection]]: counted });
			after = last;
			await progress.updateOne({ _id: collection } as never, { $max: { after } }, { upsert: true });
		}
		await progress.updateOne({ _id: collection } as never, { $max: { after }, $set: { done: true } }, { upsert: true });
	}
	report.done = true;
	return report;
}
