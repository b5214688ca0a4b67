// Transactions are recorded once per processor operation, keyed by its
// idempotency key: a repeated step (a retry, a node taking over) finds the one
// already recorded instead of writing a second.
import { isDuplicateKey } from "../../shared/persistence";
import type { BillingDeps } from "./deps";
import type { CustomerDoc, RefundDoc, TransactionDoc } from "./models";
import { outboxEvent } from "./outbox";
import type { ProcessorOutcome } from "./processors/payment-processor";
import { RefundStatus, TransactionStatus, TransactionType } from "./states";

export async function recordTransaction(
	deps: BillingDeps,
	customer: CustomerDoc,
	money: { amountMinor: number; currency: string; currencyId: number },
	type: TransactionType,
	idempotencyKey: string,
	outcome: ProcessorOutcome,
): Promise<TransactionDoc> {
	const approved = outcome.status === "APPROVED";
	const refundable = approved && (type === TransactionType.SubscriptionStart || type === TransactionType.Renewal);
	const status = approved
		? TransactionStatus.Approved
		: outcome.status === "DECLINED"
			? TransactionStatus.Declined
			: TransactionStatus.Error;
	return createOnce(deps, {
		accountId: customer.accountId,
		customerId: customer._id,
		success: approved,
		type,
		amount: money.amountMinor,
		currency: money.currency,
		currencyId: money.currencyId,
		productId: customer.productId,
		transactionId: outcome.processorTransactionId,
		midId: customer.midId,
		midName: customer.midName,
		refundStatus: refundable ? RefundStatus.Refundable : RefundStatus.NotRefundable,
		status,
		paymentMethod: customer.cardType,
		declineReason: outcome.reason,
		idempotencyKey,
		refundableRemaining: refundable ? money.amountMinor : 0,
		pendingRefunds: [],
		originalTransactionId: null,
		// A charge or hold was attempted, approved or not: the merchant hears of it.
		outbox: [outboxEvent(deps, "TRANSACTION")],
	});
}

/** The REFUNDED transaction of a refund: negative, approved, and the original's product, MID, currency and card brand. */
export function recordRefundTransaction(
	deps: BillingDeps,
	refund: RefundDoc,
	original: TransactionDoc,
	processorTransactionId: number | null,
): Promise<TransactionDoc> {
	return createOnce(deps, {
		accountId: original.accountId,
		customerId: original.customerId,
		success: true,
		type: TransactionType.Refunded,
		amount: -refund.amount,
		currency: original.currency,
		currencyId: original.currencyId,
		productId: original.productId,
		transactionId: processorTransactionId,
		midId: original.midId,
		midName: original.midName,
		refundStatus: RefundStatus.NotRefundable,
		status: TransactionStatus.Approved,
		paymentMethod: original.paymentMethod,
		declineReason: null,
		idempotencyKey: refundTransactionKey(refund._id),
		refundableRemaining: 0,
		pendingRefunds: [],
		originalTransactionId: original._id,
		outbox: [outboxEvent(deps, "REFUND")],
	});
}

/** The REFUNDED transaction's idempotency key: one per refund, however often recording it is retried. */
export const refundTransactionKey = (refundId: string) => `refund:${refundId}`;

/** Writes the transaction, or reads the one its idempotency key already recorded. */
async function createOnce(deps: BillingDeps, fields: Omit<TransactionDoc, "_id" | "timestamp">): Promise<TransactionDoc> {
	try {
		const doc = await deps.db.transactions.create({ _id: await deps.db.ids.transactions.next(), timestamp: deps.now(), ...fields });
		return doc.toObject();
	} catch (err) {
		if (!isDuplicateKey(err)) throw err;
		return (await deps.db.transactions.findOne({ idempotencyKey: fields.idempotencyKey }).lean())!;
	}
}
