import type { BillingDeps } from "./deps";
import type { CustomerDoc, TransactionDoc } from "./models";
import { outboxEvent } from "./outbox";
import type { ProcessorOutcome } from "./processors/payment-processor";
import { RefundStatus, TransactionStatus, TransactionType } from "./states";

/** One transaction per processor operation: a repeated step finds the one already recorded. */
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
	const status = approved ? TransactionStatus.Approved : outcome.status === "DECLINED" ? TransactionStatus.Declined : TransactionStatus.Error;
	try {
		const doc = await deps.db.transactions.create({
			_id: await deps.db.ids.transactions.next(),
			accountId: customer.accountId,
			customerId: customer._id,
			timestamp: deps.now(),
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
			originalTransactionId: null,
			// A charge or hold was attempted, approved or not: the merchant hears of it.
			outbox: [outboxEvent(deps, "TRANSACTION")],
		});
		return doc.toObject();
	} catch (err) {
		if ((err as { code?: number }).code !== 11000) throw err;
		return (await deps.db.transactions.findOne({ idempotencyKey }).lean())!;
	}
}
