// Relays the events waiting on given records: those an action just wrote,
// or those a sweep found listed (outbox-sweep.ts). An event leaves the outbox
// only after notifications has stored it.
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import type { CustomerDoc } from "../records/customer";
import type { DisputeDoc } from "../records/dispute";
import { METRICS_ONLY, type OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import type { OutboxRelayDeps, RelayTargets } from "./outbox-relay";
import { byId, markRelayed, readByIds } from "./relay-records";
import { customerEvent, disputeEvent, namesTransaction, transactionEvent } from "./webhook-events";

/** Events per enqueueAll (notifications takes up to 1000). */
export const ENQUEUE_BATCH = 500;

interface Waiting {
	transactions: TransactionDoc[];
	customers: CustomerDoc[];
	disputes: DisputeDoc[];
}

/** The customers the events are about, and the transactions they show besides their own (originals, conversions, disputed charges). */
async function relatedRecords(deps: OutboxRelayDeps, { transactions, customers, disputes }: Waiting) {
	const customersOf = await readByIds(
		deps.db.customers,
		[...transactions.map(tx => tx.customerId), ...disputes.map(dispute => dispute.customerId)],
		byId(customers),
	);
	const named = customers.flatMap(c => c.outbox.flatMap(e => (namesTransaction(e) && e.transactionId ? [e.transactionId] : [])));
	const transactionsOf = await readByIds(
		deps.db.transactions,
		[
			...named,
			...transactions.flatMap(tx => (tx.originalTransactionId === null ? [] : [tx.originalTransactionId])),
			...disputes.flatMap(d => (d.chargebackTransactionId === null ? [d.transactionId] : [d.transactionId, d.chargebackTransactionId])),
		],
		byId(transactions),
	);
	return { customersOf, transactionsOf };
}

/** The events that become webhooks: all but those that only carry a metrics entry. */
const sent = (outbox: OutboxEvent[]) => outbox.filter(event => event.type !== METRICS_ONLY);

/** The metrics entries the waiting events carry, under their events' ids. */
const entriesOf = (waiting: Waiting) =>
	[...waiting.transactions, ...waiting.customers, ...waiting.disputes].flatMap(doc =>
		doc.outbox.flatMap(event => (event.metrics ? [{ eventId: event.id, entry: event.metrics }] : [])),
	);

/** The events a transaction's document is asked for with: a charge's or refund's first, a lost dispute's closing. */
const ISSUED_WITH = new Set(["TRANSACTION", "REFUND"]);

/** The transactions whose documents are asked for with these events: charges and refunds, and lost disputes' chargebacks. */
function documentTransactions(waiting: Waiting, transactionsOf: Map<number, TransactionDoc>): TransactionDoc[] {
	const chargebacks = waiting.disputes.flatMap(d =>
		d.chargebackTransactionId !== null && d.outbox.some(e => e.type === "DISPUTE_CLOSED")
			? [transactionsOf.get(d.chargebackTransactionId)!]
			: [],
	);
	return [...waiting.transactions.filter(tx => tx.outbox.some(e => ISSUED_WITH.has(e.type))), ...chargebacks.filter(Boolean)];
}

/** Where an event goes among those of the same instant: a customer's CONVERSION first (it introduces the customer), then as a write makes them. */
const RANK = { conversion: 0, transaction: 1, customer: 2, dispute: 3 } as const;

type Ranked = { at: number; rank: number; event: WebhookEvent };

const ranked = (event: OutboxEvent, rank: number, webhook: WebhookEvent): Ranked => ({
	at: new Date(event.createdAt).getTime(),
	rank,
	event: webhook,
});

/**
 * The events in the order they happened (`createdAt`), so each customer's keep their own order in the events API and
 * in the first attempts (docs/webhooks.md): a checkout's CONVERSION, made first, before its charge's TRANSACTION. At
 * the same instant, by RANK. And the transactions whose documents are asked for with them.
 */
async function webhookEvents(deps: OutboxRelayDeps, waiting: Waiting) {
	const { customersOf, transactionsOf } = await relatedRecords(deps, waiting);
	const events = [
		...waiting.transactions.flatMap(tx =>
			sent(tx.outbox).map(event => ranked(event, RANK.transaction, transactionEvent(tx, event, customersOf, transactionsOf))),
		),
		...waiting.customers.flatMap(customer =>
			sent(customer.outbox).map(event =>
				ranked(event, event.type === "CONVERSION" ? RANK.conversion : RANK.customer, customerEvent(customer, event, transactionsOf)),
			),
		),
		...waiting.disputes.flatMap(dispute =>
			sent(dispute.outbox).map(event => ranked(event, RANK.dispute, disputeEvent(dispute, event, customersOf, transactionsOf))),
		),
	]
		.sort((a, b) => a.at - b.at || a.rank - b.rank)
		.map(one => one.event);
	return { events, toIssue: documentTransactions(waiting, transactionsOf), related: { customersOf, transactionsOf } };
}

async function enqueue(deps: OutboxRelayDeps, events: WebhookEvent[], resent: boolean): Promise<void> {
	for (let from = 0; from < events.length; from += ENQUEUE_BATCH) await deps.enqueueAll(events.slice(from, from + ENQUEUE_BATCH), resent);
}

/** Relays every event waiting on these records; `resent`: a sweep's relay, whose events may have been handed over before. */
export async function relayRecords(
	deps: OutboxRelayDeps,
	transactions: TransactionDoc[],
	customers: CustomerDoc[],
	disputes: DisputeDoc[] = [],
	resent = false,
): Promise<void> {
	const waiting: Waiting = {
		transactions: transactions.filter(tx => tx.outbox.length > 0),
		customers: customers.filter(customer => customer.outbox.length > 0),
		disputes: disputes.filter(dispute => dispute.outbox.length > 0),
	};
	if (waiting.transactions.length + waiting.customers.length + waiting.disputes.length === 0) return;
	const { events, toIssue, related } = await webhookEvents(deps, waiting);
	await enqueue(deps, events, resent);
	// Invoicing's requests after the events, before the events leave the outbox: a crash in between lists them again,
	// once. Invoicing issues them on its own nodes (outbox/issue-requests.ts): the webhooks never wait for it.
	await deps.issueRequests?.request(toIssue, related);
	// Handed over after the webhooks, so a metrics outage delays no webhook, and before the events leave the outbox: a
	// crash or an outage in between hands them again at the next sweep, which the metrics service applies once (by event id).
	const entries = entriesOf(waiting);
	await deps.handover?.apply(entries);
	await Promise.all([
		markRelayed(deps.db.transactions, waiting.transactions),
		markRelayed(deps.db.customers, waiting.customers),
		markRelayed(deps.db.disputes, waiting.disputes),
	]);
	deps.handover?.released(entries);
}

/** Relays the events waiting on the records an action just wrote (those it wrote as answered are not read again). */
export async function relayTargets(deps: OutboxRelayDeps, toRelay: RelayTargets): Promise<void> {
	const written = { customers: byId(toRelay.written?.customers ?? []), transactions: byId(toRelay.written?.transactions ?? []) };
	const [transactions, customers] = await Promise.all([
		readByIds<TransactionDoc>(
			deps.db.transactions,
			[...(toRelay.transactions ?? []), ...written.transactions.keys()],
			written.transactions,
		),
		readByIds<CustomerDoc>(deps.db.customers, [...(toRelay.customers ?? []), ...written.customers.keys()], written.customers),
	]);
	const disputes = await readByIds<DisputeDoc>(deps.db.disputes, toRelay.disputes ?? []);
	await relayRecords(deps, [...transactions.values()], [...customers.values()], [...disputes.values()]);
}
