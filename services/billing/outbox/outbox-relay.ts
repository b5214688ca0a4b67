// Hands the events waiting in customers', transactions' and disputes' outboxes to the
// notifications service. An event leaves the outbox only after notifications
// has stored it, so a crash at any point re-sends rather than loses it;
// notifications dedupes on the event id. Every billing node relays: the
// documents a change just wrote, by id, right after the change (kick with
// targets), and on a timer (a sweep) whatever a crashed node or a failed relay
// left behind, found by key in the outbox schedule (outbox.ts).
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import type { Schedule } from "../../../shared/schedule";
import { formatDateTime } from "../../../shared/time";
import type { BillingDb, CustomerDoc, DisputeDoc, OutboxEvent, TransactionDoc } from "../models";
import { toCustomerView, toDisputeView, toTransactionView } from "../views";
import { listingEntry, OUTBOX_SLOT_MS, type OutboxListing, parseListing } from "./outbox";

export interface OutboxRelayDeps {
	db: BillingDb;
	outbox: Schedule<string>;
	/** Stores the events in notifications (notifications.enqueueAll). */
	enqueueAll(events: WebhookEvent[]): Promise<unknown>;
	now: () => Date;
	logger: { warn(...args: unknown[]): void };
}

/** The documents a change wrote events on; the relay reads them by id instead of searching, or takes them as written. */
export interface RelayTargets {
	customers?: number[];
	transactions?: number[];
	disputes?: number[];
	/** Documents as the change's own writes answered them (after its last write): not read again. */
	written?: { customers?: CustomerDoc[]; transactions?: TransactionDoc[] };
}

/** Events per enqueueAll (notifications takes up to 1000). */
const ENQUEUE_BATCH = 500;
const SWEEP_INTERVAL_MS = 5000;
/**
 * The sweep leaves the newest slots to the relays that follow each change (a
 * relay takes milliseconds; relaying twice is harmless, notifications dedupes).
 * An event a relay missed goes out within this + a slot + SWEEP_INTERVAL_MS: 8 s.
 */
const SWEEP_DELAY_MS = 2 * OUTBOX_SLOT_MS;
/**
 * A listing whose event is in neither the outbox nor `relayed` is for a write
 * that has not landed (or never will: it failed). It is dropped after this long,
 * far beyond any write's time in flight.
 */
const ABANDON_AFTER_MS = 10 * 60_000;

const byId = <Doc extends { _id: number }>(docs: Doc[]) => new Map(docs.map(doc => [doc._id, doc]));

/** Documents by id, one command per collection (those already at hand are not read again). */
async function readByIds<Doc extends { _id: number }>(
	model: { find(filter: object): { lean(): Promise<unknown> } },
	ids: Iterable<number>,
	known: Map<number, Doc> = new Map(),
): Promise<Map<number, Doc>> {
	const missing = [...new Set(ids)].filter(id => !known.has(id));
	if (missing.length === 0) return known;
	const docs = (await model.find({ _id: { $in: missing } }).lean()) as Doc[];
	return new Map([...known, ...byId(docs)]);
}

/** The envelope the merchant receives (shared/contracts/notifications.ts) around an event's data. */
function envelope(
	event: OutboxEvent,
	about: Pick<WebhookEvent, "accountId" | "customerId" | "transaction_id">,
	data: Record<string, unknown>,
): WebhookEvent {
	return { id: event.id, type: event.type, createdAt: formatDateTime(event.createdAt), ...about, data };
}

function transactionEvent(
	tx: TransactionDoc,
	event: OutboxEvent,
	customers: Map<number, CustomerDoc>,
	originals: Map<number, TransactionDoc>,
): WebhookEvent {
	const customer = customers.get(tx.customerId);
	const data: Record<string, unknown> = { transaction: toTransactionView(tx), customer: customer ? toCustomerView(customer) : null };
	if (tx.originalTransactionId !== null) {
		const original = originals.get(tx.originalTransactionId);
		data.originalTransaction = original ? toTransactionView(original) : null;
	}
	return envelope(event, { accountId: tx.accountId, customerId: tx.customerId, transaction_id: tx._id }, data);
}

/** A dispute's event: the dispute as it was announced, its transaction, customer, and a lost one's chargeback. */
function disputeEvent(
	dispute: DisputeDoc,
	event: OutboxEvent,
	customers: Map<number, CustomerDoc>,
	transactions: Map<number, TransactionDoc>,
): WebhookEvent {
	const view = (id: number | null) => {
		const tx = id === null ? undefined : transactions.get(id);
		return tx ? toTransactionView(tx) : null;
	};
	const customer = customers.get(dispute.customerId);
	const data: Record<string, unknown> = {
		dispute: toDisputeView(dispute, event.disputeStatus ?? dispute.status),
		transaction: view(dispute.transactionId),
		customer: customer ? toCustomerView(customer) : null,
	};
	if (event.type === "DISPUTE_CLOSED" && dispute.chargebackTransactionId !== null) data.chargeback = view(dispute.chargebackTransactionId);
	return envelope(event, { accountId: dispute.accountId, customerId: dispute.customerId, transaction_id: dispute.transactionId }, data);
}

async function customerEvent(
	db: BillingDb,
	customer: CustomerDoc,
	event: OutboxEvent,
	transactions: Map<number, TransactionDoc>,
): Promise<WebhookEvent> {
	// A CONVERSION names the checkout's charge or hold, when there was one (events written before it was recorded: search);
	// an AUTHENTICATION_REQUIRED the renewal refused for it.
	const named = event.type === "CONVERSION" || event.type === "AUTHENTICATION_REQUIRED";
	const first =
		!named || event.transactionId === null
			? null
			: event.transactionId === undefined
				? await db.transactions.findOne({ customerId: customer._id }).sort({ _id: 1 }).lean()
				: (transactions.get(event.transactionId) ?? null);
	const data: Record<string, unknown> = { customer: toCustomerView(customer) };
	if (first) data.transaction = toTransactionView(first);
	return envelope(event, { accountId: customer.accountId, customerId: customer._id, transaction_id: first?._id ?? null }, data);
}

export function createOutboxRelay(deps: OutboxRelayDeps) {
	let sweeping: Promise<void> | null = null;
	let sweepAgain = false;
	const relaying = new Set<Promise<void>>();
	let timer: NodeJS.Timeout | undefined;

	/** Moves each document's relayed events from its outbox to `relayed`, one command per collection. */
	async function markRelayed(
		model: { collection: { bulkWrite(ops: never[], options: object): Promise<unknown> } },
		docs: { _id: number; outbox: OutboxEvent[] }[],
	) {
		const operations = docs
			.filter(doc => doc.outbox.length > 0)
			.map(doc => {
				const ids = doc.outbox.map(event => event.id);
				return {
					updateOne: { filter: { _id: doc._id }, update: { $pull: { outbox: { id: { $in: ids } } }, $push: { relayed: { $each: ids } } } },
				};
			});
		// Straight to the driver: nothing to cast, and it runs after every change.
		if (operations.length) await model.collection.bulkWrite(operations as never[], { ordered: false });
	}

	/**
	 * Relays every event waiting on these documents: transactions' first (a checkout's TRANSACTION goes out before its
	 * CONVERSION), then customers', then disputes'.
	 */
	async function relayDocs(transactions: TransactionDoc[], customers: CustomerDoc[], disputes: DisputeDoc[] = []): Promise<void> {
		transactions = transactions.filter(tx => tx.outbox.length > 0);
		customers = customers.filter(customer => customer.outbox.length > 0);
		disputes = disputes.filter(dispute => dispute.outbox.length > 0);
		if (transactions.length + customers.length + disputes.length === 0) return;
		const customersOf = await readByIds(
			deps.db.customers,
			[...transactions.map(tx => tx.customerId), ...disputes.map(dispute => dispute.customerId)],
			byId(customers),
		);
		const conversions = customers.flatMap(c =>
			c.outbox.flatMap(e =>
				(e.type === "CONVERSION" || e.type === "AUTHENTICATION_REQUIRED") && e.transactionId ? [e.transactionId] : [],
			),
		);
		const related = await readByIds(
			deps.db.transactions,
			[
				...conversions,
				...transactions.flatMap(tx => (tx.originalTransactionId === null ? [] : [tx.originalTransactionId])),
				...disputes.flatMap(d => (d.chargebackTransactionId === null ? [d.transactionId] : [d.transactionId, d.chargebackTransactionId])),
			],
			byId(transactions),
		);
		const events = [
			...transactions.flatMap(tx => tx.outbox.map(event => transactionEvent(tx, event, customersOf, related))),
			...(await Promise.all(customers.flatMap(customer => customer.outbox.map(event => customerEvent(deps.db, customer, event, related))))),
			...disputes.flatMap(dispute => dispute.outbox.map(event => disputeEvent(dispute, event, customersOf, related))),
		];
		for (let from = 0; from < events.length; from += ENQUEUE_BATCH) await deps.enqueueAll(events.slice(from, from + ENQUEUE_BATCH));
		await markRelayed(deps.db.transactions, transactions);
		await markRelayed(deps.db.customers, customers);
		await markRelayed(deps.db.disputes, disputes);
	}

	/** Relays the events waiting on the documents a change just wrote. */
	async function relayTargets(changed: RelayTargets): Promise<void> {
		const written = { customers: byId(changed.written?.customers ?? []), transactions: byId(changed.written?.transactions ?? []) };
		const [transactions, customers] = await Promise.all([
			readByIds<TransactionDoc>(
				deps.db.transactions,
				[...(changed.transactions ?? []), ...written.transactions.keys()],
				written.transactions,
			),
			readByIds<CustomerDoc>(deps.db.customers, [...(changed.customers ?? []), ...written.customers.keys()], written.customers),
		]);
		const disputes = await readByIds<DisputeDoc>(deps.db.disputes, changed.disputes ?? []);
		await relayDocs([...transactions.values()], [...customers.values()], [...disputes.values()]);
	}

	/** What a listing says now: its event waits, was relayed, or has not been written (yet, or ever). */
	function listingState(listing: OutboxListing, doc: { outbox: OutboxEvent[]; relayed: string[] } | undefined, now: Date) {
		if (doc?.outbox.some(event => event.id === listing.eventId)) return "waiting";
		if (doc?.relayed.includes(listing.eventId)) return "done";
		return now.getTime() - listing.at.getTime() > ABANDON_AFTER_MS ? "done" : "unwritten";
	}

	/** One pass over the listings due, a batch at a time. */
	async function sweepOnce(): Promise<void> {
		const now = deps.now();
		const listings = (await deps.outbox.due(new Date(now.getTime() - SWEEP_DELAY_MS), now)).flatMap(entry => parseListing(entry) ?? []);
		for (let from = 0; from < listings.length; from += ENQUEUE_BATCH) await sweepBatch(listings.slice(from, from + ENQUEUE_BATCH), now);
	}

	/** Relays what still waits, then drops the listings that are done. */
	async function sweepBatch(listings: OutboxListing[], now: Date): Promise<void> {
		const ids = (kind: OutboxListing["kind"]) => listings.filter(l => l.kind === kind).map(l => l.docId);
		const [transactions, customers, disputes] = await Promise.all([
			readByIds<TransactionDoc>(deps.db.transactions, ids("t")),
			readByIds<CustomerDoc>(deps.db.customers, ids("c")),
			readByIds<DisputeDoc>(deps.db.disputes, ids("d")),
		]);
		const docs = { t: transactions, c: customers, d: disputes };
		const docOf = (listing: OutboxListing) => docs[listing.kind].get(listing.docId);
		const waiting = listings.filter(listing => listingState(listing, docOf(listing), now) === "waiting");
		const waitingOf = <Doc>(kind: OutboxListing["kind"], found: Map<number, Doc>) => [
			...new Set(waiting.filter(l => l.kind === kind).map(l => found.get(l.docId)!)),
		];
		await relayDocs(waitingOf("t", transactions), waitingOf("c", customers), waitingOf("d", disputes));
		// Relayed just now, or before: done. Unwritten ones stay listed for the next sweep.
		const done = listings.filter(listing => listingState(listing, docOf(listing), now) !== "unwritten");
		await deps.outbox.removeAll(done.map(listingEntry));
	}

	const paused = (err: unknown) => {
		// Notifications or the database is unavailable: the events wait in the outbox for the next sweep.
		deps.logger.warn("Outbox relay paused:", (err as Error).message);
	};

	/** One sweep at a time on this node; a sweep asked for while one runs runs again after it. */
	function sweep(): void {
		if (sweeping) {
			sweepAgain = true;
			return;
		}
		sweeping = (async () => {
			do {
				sweepAgain = false;
				await sweepOnce().catch(paused);
			} while (sweepAgain);
		})().finally(() => {
			sweeping = null;
		});
	}

	/** Relays the documents a change just wrote, now and independently of other changes; without targets, sweeps. */
	function kick(changed?: RelayTargets): void {
		if (!changed) {
			sweep();
			return;
		}
		const relay: Promise<void> = relayTargets(changed)
			.then(() => undefined, paused)
			.finally(() => relaying.delete(relay));
		relaying.add(relay);
	}

	return {
		kick,
		start(): void {
			timer = setInterval(sweep, SWEEP_INTERVAL_MS);
			timer.unref();
			sweep();
		},
		async stop(): Promise<void> {
			clearInterval(timer);
			await Promise.all([sweeping, ...relaying]);
		},
	};
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
