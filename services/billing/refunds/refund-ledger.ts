// Refunds of a transaction. The amount is reserved on the original
// transaction with one conditional update BEFORE the processor is asked, so no
// number of concurrent or repeated requests can refund more than was paid; if
// the processor refuses, the reservation is given back. A refund id names the
// whole operation: asking again with the same id resumes it instead of
// reserving twice.
//
// Nothing is half-written for good. Each step is one single-record update,
// in an order that leaves every crash point recognisable:
//   1. the refund is recorded RESERVED, its request holding its lease;
//   2. the transaction's refundableRemaining is reduced AND the refund id added
//      to its pendingRefunds, in one update: "listed" means "reserved, not settled";
//   3. the processor is asked, with the refund id as idempotency key;
//   4a. approved: the REFUNDED transaction (with its REFUND webhook) is recorded,
//       idempotent by its key; the id leaves pendingRefunds; the refund is COMPLETED;
//   4b. otherwise: the amount is given back and the id removed, in one
//       conditional update (so at most once); then the refund is FAILED.
// A refund left RESERVED by a crash is settled by a repeat of its request
// (which asks the processor again with the same key) or, after the grace
// period, by the recovery sweep (refund-recovery.ts, which only looks the key
// up); both go through settleReserved, holding the refund's lease.

import { randomUUID } from "node:crypto";
import { type RefundDone, RefundError, type RefundInput } from "../../../shared/contracts/billing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { findCurrency, toDecimal, toMinorUnits } from "../../../shared/money";
import { insertOnce, leaseFree, newLease, ownedBy } from "../../../shared/persistence";
import { pollUntil } from "../../../shared/poll";
import { withRetries } from "../../../shared/processor-retries";
import type { BillingDeps } from "../deps";
import { refundRecordMove, refundStatusMove } from "../lifecycle";
import type { Payments } from "../payments";
import type { RefundDoc } from "../records/refund";
import type { TransactionDoc } from "../records/transaction";
import { RefundRecordStatus, RefundStatus } from "../states";
import { recordRefundTransaction, refundTransactionKey } from "../transaction-record";

/** How a settling step learns what the processor did with the refund's key. */
export type AskProcessor = (payments: Payments, refund: RefundDoc, original: TransactionDoc) => Promise<PaymentOutcome | null>;

/**
 * Asks for the refund, retried with the same key; a processor error moved no money. A call that fails (payments
 * unreachable) is thrown: the refund may have been made, so it stays RESERVED for the recovery's lookup.
 */
const requestRefund: AskProcessor = (payments, refund, original) =>
	withRetries(() =>
		payments.refund({ idempotencyKey: refund._id, processorTransactionId: original.processorTransactionId!, amount: refund.amount }),
	);

/** How long a repeat waits for a refund that someone else is settling. */
const RESUME_WAIT_MS = 3000;
const RESUME_POLL_MS = 50;

/** How much to refund, in minor units, or why not. */
function amountFor(tx: TransactionDoc, amountToRefund: string | undefined): number | RefundError {
	if (tx.refundStatus !== RefundStatus.Refundable) return RefundError.NotRefundable;
	if (amountToRefund === undefined) return tx.refundableRemaining > 0 ? tx.refundableRemaining : RefundError.NotRefundable;
	const amount = toMinorUnits(amountToRefund, findCurrency(tx.currency)!);
	if (typeof amount !== "number") return RefundError.InvalidAmount;
	return amount > tx.refundableRemaining ? RefundError.AmountTooHigh : amount;
}

const FAIL = refundRecordMove(RefundRecordStatus.Reserved, RefundRecordStatus.Failed);
const COMPLETE = refundRecordMove(RefundRecordStatus.Reserved, RefundRecordStatus.Completed);
const ALL_REFUNDED = refundStatusMove(RefundStatus.Refundable, RefundStatus.Refunded);

/** Takes the refund's amount off what is left to refund, if it is still there, and lists the refund as pending on the transaction. */
async function reserve(deps: BillingDeps, tx: TransactionDoc, refund: RefundDoc, whole: boolean): Promise<boolean> {
	const remaining = whole ? refund.amount : { $gte: refund.amount };
	const result = await deps.db.transactions.updateOne(
		{ _id: tx._id, refundStatus: RefundStatus.Refundable, refundableRemaining: remaining, pendingRefunds: { $ne: refund._id } },
		{ $inc: { refundableRemaining: -refund.amount }, $addToSet: { pendingRefunds: refund._id } },
	);
	return result.modifiedCount === 1;
}

/** Gives the refund's reservation back, at most once: only while the transaction still lists it. */
export async function giveBack(deps: BillingDeps, refund: RefundDoc): Promise<boolean> {
	const result = await deps.db.transactions.updateOne(
		{ _id: refund.transactionId, pendingRefunds: refund._id },
		{ $inc: { refundableRemaining: refund.amount }, $pull: { pendingRefunds: refund._id } },
	);
	return result.modifiedCount === 1;
}

/** The processor did not refund: the reservation goes back first, then the refund is FAILED, so a crash in between leaves it RESERVED for recovery. */
export async function failRefund(deps: BillingDeps, refund: RefundDoc): Promise<RefundError> {
	await giveBack(deps, refund);
	await deps.db.refunds.updateOne({ _id: refund._id, ...FAIL.filter }, { $set: { ...FAIL.set, settledAt: deps.now(), lease: null } });
	return RefundError.ProcessorRefused;
}

/** The processor refunded: the REFUNDED transaction first, then the reservation is settled, then the refund COMPLETED. */
export async function completeRefund(
	deps: BillingDeps,
	refund: RefundDoc,
	original: TransactionDoc,
	refunded: Pick<PaymentOutcome, "processorTransactionId" | "processorReference"> | null,
): Promise<RefundDone> {
	// Dated in the account's time (a sandbox's test clock); the refund's own record keeps the real times it was settled at.
	const at = await deps.clocks.now(original.accountId);
	const refundTransaction = await recordRefundTransaction(deps, refund, original, refunded, at);
	const after = await deps.db.transactions
		.findOneAndUpdate(
			{ _id: original._id },
			{ $pull: { pendingRefunds: refund._id } },
			{ returnDocument: "after", projection: { refundStatus: 1, refundableRemaining: 1, pendingRefunds: 1 } },
		)
		.lean();
	// Only the last refund to settle can see nothing left and nothing pending.
	if (
		after &&
		after.refundStatus === RefundStatus.Refundable &&
		after.refundableRemaining === 0 &&
		(after.pendingRefunds ?? []).length === 0
	) {
		await markRefunded(deps, original._id);
	}
	return markCompleted(deps, refund, original, refundTransaction);
}

/** Nothing left to refund and no refund pending: REFUNDABLE -> REFUNDED. */
async function markRefunded(deps: BillingDeps, transactionId: number): Promise<void> {
	await deps.db.transactions.updateOne(
		{ _id: transactionId, ...ALL_REFUNDED.filter, refundableRemaining: 0, "pendingRefunds.0": { $exists: false } },
		{ $set: ALL_REFUNDED.set },
	);
}

async function markCompleted(
	deps: BillingDeps,
	refund: RefundDoc,
	original: TransactionDoc,
	refundTransaction: TransactionDoc,
): Promise<RefundDone> {
	await deps.db.refunds.updateOne(
		{ _id: refund._id, ...COMPLETE.filter },
		{ $set: { ...COMPLETE.set, refundTransactionId: refundTransaction._id, settledAt: deps.now(), lease: null } },
	);
	return { amount: toDecimal(refund.amount, findCurrency(original.currency)!), refundTransactionId: refundTransaction._id };
}

/** Asks the processor of the transaction's customer (none configured: nothing was or can be refunded) and settles the refund by its answer. */
async function settleByProcessor(
	deps: BillingDeps,
	refund: RefundDoc,
	original: TransactionDoc,
	ask: AskProcessor,
): Promise<RefundDone | RefundError> {
	const outcome = original.processorTransactionId !== null ? await ask(deps.payments, refund, original) : null;
	if (outcome?.status === "APPROVED") return completeRefund(deps, refund, original, outcome);
	return failRefund(deps, refund);
}

/**
 * Settles a RESERVED refund whose lease the caller holds, from wherever its
 * request stopped. Still listed on the transaction: reserved and unsettled, so
 * the processor decides (`ask`). Not listed: either the reservation never
 * happened or was given back (FAILED), or the REFUNDED transaction was already
 * recorded (COMPLETED; its webhook was written with it, so none is added).
 * Errors (database, processor unreachable) are thrown: the refund stays RESERVED.
 */
export async function settleReserved(deps: BillingDeps, refund: RefundDoc, ask: AskProcessor): Promise<RefundDone | RefundError> {
	const original = await deps.db.transactions.findById(refund.transactionId).lean();
	if (!original) return failRefund(deps, refund);
	if ((original.pendingRefunds ?? []).includes(refund._id)) return settleByProcessor(deps, refund, original, ask);
	const recorded = await deps.db.transactions.findOne({ idempotencyKey: refundTransactionKey(refund._id) }).lean();
	if (!recorded) return failRefund(deps, refund);
	await markRefunded(deps, original._id);
	return markCompleted(deps, refund, original, recorded);
}

/** The filter of a RESERVED refund nobody holds (its lease expired or was released). */
function unheld(now: Date): Record<string, unknown> {
	return { status: RefundRecordStatus.Reserved, ...leaseFree("lease", now) };
}

/** RESERVED refunds older than the grace period that nobody holds: what the recovery sweep settles. */
export function strandedFilter(deps: BillingDeps): Record<string, unknown> {
	const now = deps.now();
	return { ...unheld(now), createdAt: { $lte: new Date(now.getTime() - deps.refundGraceMs) } };
}

/** Takes the refund's lease (compare-and-set) for the grace period; null if it is settled or someone else holds it. */
export async function claimRefund(deps: BillingDeps, filter: Record<string, unknown>, owner: string): Promise<RefundDoc | null> {
	const now = deps.now();
	return deps.db.refunds
		.findOneAndUpdate(
			{ ...filter, ...unheld(now) },
			{ $set: { lease: newLease(owner, now, deps.refundGraceMs) } },
			{ returnDocument: "after" },
		)
		.lean();
}

/** Lets go of a refund that could not be settled now (it stays RESERVED), so the next sweep may try again. */
export async function releaseRefund(deps: BillingDeps, refundId: string, owner: string): Promise<void> {
	await deps.db.refunds.updateOne({ _id: refundId, status: RefundRecordStatus.Reserved, "lease.owner": owner }, { $set: { lease: null } });
}

/**
 * The answer for a refund id seen before. A RESERVED one was left by a request
 * that died (or is still at work): it is resumed under its lease, asking the
 * processor again with the same key, which never refunds twice.
 */
async function previousOutcome(deps: BillingDeps, refund: RefundDoc, original: TransactionDoc): Promise<RefundDone | RefundError> {
	const owner = `resume:${randomUUID()}`;
	let current: RefundDoc | null = refund;
	const outcome = await pollUntil<RefundDone | RefundError>(
		async () => {
			current ??= await deps.db.refunds.findById(refund._id).lean();
			// Its request found nothing to reserve and dropped it meanwhile: a repeat starts afresh.
			if (!current) return RefundError.InProgress;
			if (current.status === RefundRecordStatus.Failed) return RefundError.ProcessorRefused;
			if (current.status === RefundRecordStatus.Completed)
				return { amount: toDecimal(current.amount, findCurrency(original.currency)!), refundTransactionId: current.refundTransactionId! };
			current = null;
			const claimed = await claimRefund(deps, { _id: refund._id }, owner);
			if (!claimed) return undefined;
			try {
				return await settleReserved(deps, claimed, requestRefund);
			} catch (err) {
				await releaseRefund(deps, claimed._id, owner).catch(() => undefined);
				throw err;
			}
		},
		{ intervalMs: RESUME_POLL_MS, timeoutMs: RESUME_WAIT_MS },
	);
	return outcome ?? RefundError.InProgress;
}

export async function refundTransaction(deps: BillingDeps, input: RefundInput): Promise<RefundDone | RefundError> {
	const original = ownedBy(await deps.db.transactions.findById(input.transactionId).lean(), input.accountId);
	if (!original) return RefundError.NotFound;
	const earlier = await deps.db.refunds.findById(input.refundId).lean();
	if (earlier) return earlier.transactionId === original._id ? previousOutcome(deps, earlier, original) : RefundError.NotFound;

	// A full refund races others for the exact remainder; re-read and retry if another refund moved it first.
	for (let tries = 0; tries < 5; tries++) {
		const tx = tries === 0 ? original : await deps.db.transactions.findById(original._id).lean();
		if (!tx) return RefundError.NotFound;
		const amount = amountFor(tx, input.amountToRefund);
		if (typeof amount !== "number") return amount;
		const now = deps.now();
		const refund: RefundDoc = {
			_id: input.refundId,
			accountId: tx.accountId,
			transactionId: tx._id,
			amount,
			status: RefundRecordStatus.Reserved,
			refundTransactionId: null,
			createdAt: now,
			settledAt: null,
			// This request settles it; after the grace period, if it has not, the recovery may.
			lease: newLease("request", now, deps.refundGraceMs),
		};
		// The record comes first, so a reservation never exists without the refund that owns it.
		if (!(await insertOnce(deps.db.refunds, refund)))
			return previousOutcome(deps, (await deps.db.refunds.findById(refund._id).lean())!, tx);
		if (await reserve(deps, tx, refund, input.amountToRefund === undefined)) return settleByProcessor(deps, refund, tx, requestRefund);
		// Nothing was reserved: the refund never existed (the next try, or the refusal, decides).
		await deps.db.refunds.deleteOne({ _id: refund._id, status: RefundRecordStatus.Reserved });
	}
	return RefundError.NotRefundable;
}
