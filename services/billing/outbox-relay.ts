// Hands the events waiting in customers' and transactions' outboxes to the
// notifications service, then removes them. An event leaves the outbox only
// after notifications has stored it, so a crash at any point re-sends rather
// than loses it; notifications dedupes on the event id. Every billing node
// relays: after each change that wrote an event (kick) and on a timer for
// whatever a crashed node left behind.
import { formatDateTime } from "../../shared/time";
import type { BillingDb, CustomerDoc, OutboxEvent, TransactionDoc } from "./models";
import { toCustomerView, toTransactionView } from "./views";

export interface WebhookEvent {
	id: string;
	type: OutboxEvent["type"];
	createdAt: string;
	accountId: number;
	customerId: number;
	transaction_id: number | null;
	data: Record<string, unknown>;
}

export interface OutboxRelayDeps {
	db: BillingDb;
	enqueue(event: WebhookEvent): Promise<unknown>;
	logger: { warn(...args: unknown[]): void };
}

const BATCH = 100;
const SWEEP_INTERVAL_MS = 1000;

async function transactionEvent(db: BillingDb, tx: TransactionDoc, event: OutboxEvent): Promise<WebhookEvent> {
	const customer = await db.customers.findById(tx.customerId).lean();
	const data: Record<string, unknown> = { transaction: toTransactionView(tx), customer: customer ? toCustomerView(customer) : null };
	if (tx.originalTransactionId !== null) {
		const original = await db.transactions.findById(tx.originalTransactionId).lean();
		data.originalTransaction = original ? toTransactionView(original) : null;
	}
	return { id: event.id, type: event.type, createdAt: formatDateTime(event.createdAt), accountId: tx.accountId, customerId: tx.customerId, transaction_id: tx._id, data };
}

async function customerEvent(db: BillingDb, customer: CustomerDoc, event: OutboxEvent): Promise<WebhookEvent> {
	// A conversion names the checkout's charge or hold, when there was one.
	const first = event.type === "CONVERSION" ? await db.transactions.findOne({ customerId: customer._id }).sort({ _id: 1 }).lean() : null;
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
	let running: Promise<void> | null = null;
	let again = false;
	let timer: NodeJS.Timeout | undefined;

	async function relayCollection<Doc extends { _id: number; outbox: OutboxEvent[] }>(
		model: { find(filter: object): { limit(n: number): { lean(): Promise<Doc[]> } }; updateOne(filter: object, update: object): Promise<unknown> },
		build: (doc: Doc, event: OutboxEvent) => Promise<WebhookEvent>,
	): Promise<void> {
		const docs = await model.find({ "outbox.0": { $exists: true } }).limit(BATCH).lean();
		for (const doc of docs) {
			for (const event of doc.outbox) {
				await deps.enqueue(await build(doc, event));
				await model.updateOne({ _id: doc._id }, { $pull: { outbox: { id: event.id } } });
			}
		}
	}

	async function relay(): Promise<void> {
		do {
			again = false;
			try {
				// Transactions first: a checkout's TRANSACTION event goes out before its CONVERSION.
				await relayCollection<TransactionDoc>(deps.db.transactions as never, (tx, e) => transactionEvent(deps.db, tx, e));
				await relayCollection<CustomerDoc>(deps.db.customers as never, (c, e) => customerEvent(deps.db, c, e));
			} catch (err) {
				// Notifications or the database is unavailable: the events wait in the outbox for the next sweep.
				deps.logger.warn("Outbox relay paused:", (err as Error).message);
			}
		} while (again);
	}

	function kick(): void {
		if (running) {
			again = true;
			return;
		}
		running = relay().finally(() => {
			running = null;
		});
	}

	return {
		kick,
		start(): void {
			timer = setInterval(kick, SWEEP_INTERVAL_MS);
			timer.unref();
			kick();
		},
		async stop(): Promise<void> {
			clearInterval(timer);
			await running;
		},
	};
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
