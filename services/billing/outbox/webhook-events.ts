// The webhook event the merchant receives for an outbox event: the envelope
// (shared/contracts/notifications.ts) around the records it is about, as
// they are when relayed.
import type { EventType, WebhookEvent } from "../../../shared/contracts/notifications";
import { findCurrency, toDecimal } from "../../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../../shared/time";
import type { CustomerDoc } from "../records/customer";
import type { DisputeDoc } from "../records/dispute";
import type { ChangeDetails, OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { toCustomerView, toDisputeView, toTransactionView } from "../views";

function envelope(
	event: OutboxEvent,
	about: Pick<WebhookEvent, "accountId" | "customerId" | "transaction_id">,
	data: Record<string, unknown>,
): WebhookEvent {
	// METRICS events never get here: the relay sends none (relay-events.ts).
	return { id: event.id, type: event.type as EventType, createdAt: formatDateTime(event.createdAt), ...about, data };
}

/** A transaction's event: the transaction, its customer, and a refund's original transaction. */
export function transactionEvent(
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

/**
 * A dispute's event: the dispute as it was announced, its transaction (with the refund status an open dispute's event
 * announced: a decision made since must not show through it), customer, and a lost one's chargeback.
 */
export function disputeEvent(
	dispute: DisputeDoc,
	event: OutboxEvent,
	customers: Map<number, CustomerDoc>,
	transactions: Map<number, TransactionDoc>,
): WebhookEvent {
	const view = (id: number | null) => {
		const tx = id === null ? undefined : transactions.get(id);
		return tx ? toTransactionView(tx) : null;
	};
	const disputed = view(dispute.transactionId);
	const customer = customers.get(dispute.customerId);
	const data: Record<string, unknown> = {
		dispute: toDisputeView(dispute, event.disputeStatus),
		transaction: disputed && event.refundStatus ? { ...disputed, refundStatus: event.refundStatus } : disputed,
		customer: customer ? toCustomerView(customer) : null,
	};
	if (event.type === "DISPUTE_CLOSED" && dispute.chargebackTransactionId !== null) data.chargeback = view(dispute.chargebackTransactionId);
	return envelope(event, { accountId: dispute.accountId, customerId: dispute.customerId, transaction_id: dispute.transactionId }, data);
}

/**
 * Whether a customer's event names a transaction: a CONVERSION its checkout's charge or hold, an
 * AUTHENTICATION_REQUIRED the renewal (or change) refused, a SUBSCRIPTION_CHANGED the change's charge.
 */
export const namesTransaction = (event: OutboxEvent): boolean =>
	event.type === "CONVERSION" || event.type === "AUTHENTICATION_REQUIRED" || event.type === "SUBSCRIPTION_CHANGED";

/** A change's details as the merchant reads them: amounts as decimals, the date as the API prints it. */
function changeView(change: ChangeDetails) {
	const currency = findCurrency(change.currency)!;
	const amount = (minor: number) => toDecimal(minor, currency);
	return {
		quoteId: change.quoteId,
		mode: change.mode,
		currency: change.currency,
		from: change.from,
		to: change.to,
		// Signed: what the change came to, tax included (changes/rules/change-amounts.ts).
		total: amount(change.due - change.creditAdded),
		due: amount(change.due),
		charged: amount(change.charged),
		creditUsed: amount(change.creditUsed),
		creditAdded: amount(change.creditAdded),
		creditAfter: amount(change.creditAfter),
		effectiveAt: change.effectiveAt ? formatDateTime(new Date(change.effectiveAt)) : null,
	};
}

/** The transaction a customer's event names, if any: its writer names it (`transactionId`), and the relay has read it. */
function namedTransaction(event: OutboxEvent, transactions: Map<number, TransactionDoc>): TransactionDoc | null {
	if (!namesTransaction(event) || event.transactionId == null) return null;
	return transactions.get(event.transactionId) ?? null;
}

/**
 * A customer's event: the customer, the transaction the event names, a pause's, resume's, change's or cancellation's
 * own details, and `by` when the buyer did it.
 */
export function customerEvent(customer: CustomerDoc, event: OutboxEvent, transactions: Map<number, TransactionDoc>): WebhookEvent {
	const named = namedTransaction(event, transactions);
	const data: Record<string, unknown> = { customer: toCustomerView(customer) };
	if (named) data.transaction = toTransactionView(named);
	if (event.pause) data.pause = { pausedAt: formatDateTime(event.pause.pausedAt), resumeAt: formatOptionalDateTime(event.pause.resumeAt) };
	if (event.resume)
		data.resume = {
			resumedAt: formatDateTime(event.resume.resumedAt),
			nextRenewalTimestamp: formatDateTime(event.resume.nextRenewalTimestamp),
		};
	if (event.change) data.change = changeView(event.change);
	if (event.cancellation) data.cancellation = { ...event.cancellation, cancelAt: formatDateTime(event.cancellation.cancelAt) };
	if (event.by) data.by = event.by;
	return envelope(event, { accountId: customer.accountId, customerId: customer._id, transaction_id: named?._id ?? null }, data);
}
