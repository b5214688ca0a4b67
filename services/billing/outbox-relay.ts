// Hands the events waiting in customers' and transactions' outboxes to the
// notifications service, then removes them. An event leaves the outbox only
// after notifications has stored it, so a crash at any point re-sends rather
// than loses it; notifications dedupes on the event id. Every billing node
// relays: the documents a change just wrote, by id, right after the change
// (kick with targets), and everything still waiting on a timer (a sweep) for
// whatever a crashed node or a failed relay left behind.
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { formatDateTime } from "../../shared/time";
import type { BillingDb, CustomerDoc, OutboxEvent, TransactionDoc } from "./models";
import { toCustomerView, toTransactionView } from "./views";

export interface OutboxRelayDeps {
	db: BillingDb;
	enqueue(event: WebhookEvent): Promise<unknown>;
	logger: { warn(...args: unknown[]): void };
}

/** The documents a change wrote events on; the relay reads them by id instead of searching. */
export interface RelayTargets {
	customers?: number[];
	transactions?: number[];
}

const BATCH = 100;
/** The sweep searches both collections; targeted relays carry the normal traffic, so it runs seldom. */
const SWEEP_INTERVAL_MS = 5000;

async function transactionEvent(db: BillingDb, tx: TransactionDoc, event: OutboxEvent): Promise<WebhookEvent> {
	const customer = await db.customers.findById(tx.customerId).lean();
	const data: Record<string, unknown> = { transaction: toTransactionView(tx), customer: customer ? toCustomerView(customer) : null };
	if (tx.originalTransactionId !== null) {
		const original = await db.transactions.findById(tx.originalTransactionId).lean();
		data.originalTransaction = original ? toTransactionView(original) : null;
	}
	return {
		id: event.id,
		type: event.type,
		createdAt: formatDateTime(event.createdAt),
		accountId: tx.accountId,
		customerId: tx.customerId,
		transaction_id: tx._id,
		data,
	};
}

async function customerEvent(db: BillingDb, customer: CustomerDoc, event: OutboxEvent): Promise<WebhookEvent> {
	// A conversion names the checkout's charge or hold, when there was one (events written before it was recorded: search).
	const first =
		event.type !== "CONVERSION" || event.transactionId === null
			? null
			: event.transactionId === undefined
				? await db.transactions.findOne({ customerId: customer._id }).sort({ _id: 1 }).lean()
				: await db.transactions.findById(event.transactionId).lean();
	const data: Record<string, unknown> = { customer: toCustomerView(customer) };
	if (first) data.transaction = toTransactionView(first);
	return {
		id: event.id,
		type: event.type,
		createdAt: formatDateTime(event.createdAt),
		accountId: customer.accountId,
		customerId: customer._id,
		transaction_id: first?._id ?? null,
		data,
	};
}

export function createOutboxRelay(deps: OutboxRelayDeps) {
	let sweeping: Promise<void> | null = null;
	let sweepAgain = false;
	const relaying = new Set<Promise<void>>();
	let timer: NodeJS.Timeout | undefined;

	async function relayDocs<Doc extends { _id: number; outbox: OutboxEvent[] }>(
		model: { updateOne(filter: object, update: object): Promise<unknown> },
		docs: Doc[],
		build: (doc: Doc, event: OutboxEvent) => Promise<WebhookEvent>,
	): Promise<void> {
		// Documents side by side; one document's events in their order. One document that fails does not hold up the others.
		const results = await Promise.allSettled(
			docs.map(async doc => {
				for (const event of doc.outbox) {
					await deps.enqueue(await build(doc, event));
					await model.updateOne({ _id: doc._id }, { $pull: { outbox: { id: event.id } } });
				}
			}),
		);
		const failed = results.find(r => r.status === "rejected");
		if (failed) throw failed.reason;
	}

	// Answered from the sparse index on outbox.id (models.ts).
	const WAITING = { "outbox.id": { $exists: true } };

	/** The given documents, or (ids null) a batch of any with events waiting. */
	async function waiting<Doc extends { outbox: OutboxEvent[] }>(
		model: {
			findById(id: number): { lean(): Promise<Doc | null> };
			find(filter: object): { limit(n: number): { lean(): Promise<Doc[]> } };
		},
		ids: number[] | null,
	): Promise<Doc[]> {
		if (!ids) return model.find(WAITING).limit(BATCH).lean();
		// By id alone: every database server answers that from its index (mongo-java-server scans when another condition is added).
		const docs: (Doc | null)[] = await Promise.all(ids.map(id => model.findById(id).lean()));
		return docs.filter(doc => doc !== null && doc.outbox.length > 0) as Doc[];
	}

	/** Relays the targets' events (null: a batch of whatever waits); true when a batch was full. */
	async function relayRound(changed: RelayTargets | null): Promise<boolean> {
		// Transactions first: a checkout's TRANSACTION event goes out before its CONVERSION.
		const transactions = await waiting<TransactionDoc>(deps.db.transactions as never, changed ? (changed.transactions ?? []) : null);
		await relayDocs(deps.db.transactions, transactions, (tx, e) => transactionEvent(deps.db, tx, e));
		const customers = await waiting<CustomerDoc>(deps.db.customers as never, changed ? (changed.customers ?? []) : null);
		await relayDocs(deps.db.customers, customers, (c, e) => customerEvent(deps.db, c, e));
		return transactions.length === BATCH || customers.length === BATCH;
	}

	const paused = (err: unknown) => {
		// Notifications or the database is unavailable: the events wait in the outbox for the next sweep.
		deps.logger.warn("Outbox relay paused:", (err as Error).message);
	};

	/** Everything waiting, one sweep at a time; a full batch (e.g. after a renewal cycle) sweeps again at once. */
	function sweep(): void {
		if (sweeping) {
			sweepAgain = true;
			return;
		}
		sweeping = (async () => {
			do {
				sweepAgain = false;
				const full = await relayRound(null).catch(err => {
					paused(err);
					return false;
				});
				sweepAgain = full || sweepAgain;
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
		const relay: Promise<void> = relayRound(changed)
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
