// Refunds of a transaction. The amount is reserved on the original
// transaction with one conditional update BEFORE the processor is asked, so no
// number of concurrent or repeated requests can refund more than was paid; if
// the processor refuses, the reservation is given back. A refund id names the
// whole operation: asking again with the same id resumes it instead of
// reserving twice.
import { findCurrency, toDecimal, toMinorUnits } from "../../shared/money";
import { outboxEvent } from "./outbox";
import { withRetries } from "./processor-retries";
import type { BillingDeps } from "./deps";
import type { RefundDoc, TransactionDoc } from "./models";
import { RefundStatus, TransactionStatus, TransactionType } from "./states";

export enum RefundError {
	NotFound = "NOT_FOUND",
	NotRefundable = "NOT_REFUNDABLE",
	AmountTooHigh = "AMOUNT_TOO_HIGH",
	InvalidAmount = "INVALID_AMOUNT",
	ProcessorRefused = "PROCESSOR_REFUSED",
}

export interface RefundDone {
	/** Decimal, in the transaction's currency, as the API prints amounts. */
	amount: number;
	refundTransactionId: number;
}

export interface RefundInput {
	accountId: number;
	transactionId: number;
	/** As the merchant sent it; omitted means whatever is left to refund. */
	amountToRefund?: string;
	refundId: string;
}

/** How much to refund, in minor units, or why not. */
function amountFor(tx: TransactionDoc, amountToRefund: string | undefined): number | RefundError {
	if (tx.refundStatus !== RefundStatus.Refundable) return RefundError.NotRefundable;
	if (amountToRefund === undefined) return tx.refundableRemaining > 0 ? tx.refundableRemaining : RefundError.NotRefundable;
	const amount = toMinorUnits(amountToRefund, findCurrency(tx.currency)!);
	if (typeof amount !== "number") return RefundError.InvalidAmount;
	return amount > tx.refundableRemaining ? RefundError.AmountTooHigh : amount;
}

/** Takes `amount` off what is left to refund, if it is still there. */
async function reserve(deps: BillingDeps, tx: TransactionDoc, amount: number, whole: boolean): Promise<boolean> {
	const remaining = whole ? amount : { $gte: amount };
	const result = await deps.db.transactions.updateOne(
		{ _id: tx._id, refundStatus: RefundStatus.Refundable, refundableRemaining: remaining },
		{ $inc: { refundableRemaining: -amount } },
	);
	return result.modifiedCount === 1;
}

async function complete(deps: BillingDeps, refund: RefundDoc, original: TransactionDoc): Promise<RefundDone | RefundError> {
	const customer = await deps.db.customers.findById(original.customerId, { environment: 1 }).lean();
	const processor = deps.processorFor(customer?.environment ?? "sandbox");
	// Retried with the same key; a processor error moved no money (the PaymentProcessor contract), nor did a failed call.
	const outcome = processor && original.transactionId !== null
		? await withRetries(() => processor.refund({ idempotencyKey: refund._id, processorTransactionId: original.transactionId!, amount: refund.amount })).catch(
				() => null,
			)
		: null;
	const currency = findCurrency(original.currency)!;

	if (outcome?.status !== "APPROVED") {
		// Give the reservation back; only the first to settle the refund may.
		const failed = await deps.db.refunds.updateOne({ _id: refund._id, status: "RESERVED" }, { $set: { status: "FAILED", settledAt: deps.now() } });
		if (failed.modifiedCount === 1) await deps.db.transactions.updateOne({ _id: original._id }, { $inc: { refundableRemaining: refund.amount } });
		return RefundError.ProcessorRefused;
	}

	const refundTransaction = await recordRefundTransaction(deps, refund, original, outcome.processorTransactionId);
	await deps.db.refunds.updateOne(
		{ _id: refund._id, status: "RESERVED" },
		{ $set: { status: "COMPLETED", refundTransactionId: refundTransaction._id, settledAt: deps.now() } },
	);
	// Nothing left: REFUNDABLE -> REFUNDED.
	await deps.db.transactions.updateOne(
		{ _id: original._id, refundStatus: RefundStatus.Refundable, refundableRemaining: 0 },
		{ $set: { refundStatus: RefundStatus.Refunded } },
	);
	return { amount: toDecimal(refund.amount, currency), refundTransactionId: refundTransaction._id };
}

async function recordRefundTransaction(deps: BillingDeps, refund: RefundDoc, original: TransactionDoc, processorTransactionId: number | null): Promise<TransactionDoc> {
	const idempotencyKey = `refund:${refund._id}`;
	try {
		const doc = await deps.db.transactions.create({
			_id: await deps.db.ids.transactions.next(),
			accountId: original.accountId,
			customerId: original.customerId,
			timestamp: deps.now(),
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
			idempotencyKey,
			refundableRemaining: 0,
			originalTransactionId: original._id,
			outbox: [outboxEvent(deps, "REFUND")],
		});
		return doc.toObject();
	} catch (err) {
		if ((err as { code?: number }).code !== 11000) throw err;
		return (await deps.db.transactions.findOne({ idempotencyKey }).lean())!;
	}
}

async function previousOutcome(deps: BillingDeps, refund: RefundDoc, original: TransactionDoc): Promise<RefundDone | RefundError> {
	if (refund.status === "FAILED") return RefundError.ProcessorRefused;
	if (refund.status === "COMPLETED") return { amount: toDecimal(refund.amount, findCurrency(original.currency)!), refundTransactionId: refund.refundTransactionId! };
	return complete(deps, refund, original);
}

export async function refundTransaction(deps: BillingDeps, input: RefundInput): Promise<RefundDone | RefundError> {
	const original = await deps.db.transactions.findOne({ _id: input.transactionId, accountId: input.accountId }).lean();
	if (!original) return RefundError.NotFound;
	const earlier = await deps.db.refunds.findById(input.refundId).lean();
	if (earlier) return earlier.transactionId === original._id ? previousOutcome(deps, earlier, original) : RefundError.NotFound;

	// A full refund races others for the exact remainder; re-read and retry if another refund moved it first.
	for (let tries = 0; tries < 5; tries++) {
		const tx = tries === 0 ? original : await deps.db.transactions.findById(original._id).lean();
		if (!tx) return RefundError.NotFound;
		const amount = amountFor(tx, input.amountToRefund);
		if (typeof amount !== "number") return amount;
		const refund: RefundDoc = {
			_id: input.refundId,
			accountId: tx.accountId,
			transactionId: tx._id,
			amount,
			status: "RESERVED",
			refundTransactionId: null,
			createdAt: deps.now(),
			settledAt: null,
		};
		// The record comes first, so a reservation never exists without the refund that owns it.
		try {
			await deps.db.refunds.create(refund);
		} catch (err) {
			if ((err as { code?: number }).code !== 11000) throw err;
			return previousOutcome(deps, (await deps.db.refunds.findById(refund._id).lean())!, tx);
		}
		if (await reserve(deps, tx, amount, input.amountToRefund === undefined)) return complete(deps, refund, tx);
		await deps.db.refunds.deleteOne({ _id: refund._id, status: "RESERVED" });
	}
	return RefundError.NotRefundable;
}
