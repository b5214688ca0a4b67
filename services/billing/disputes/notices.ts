// What a processor says of a charge after it was made (a dispute's change, an
// early fraud warning), applied to the charge's transaction and customer.
// Processors repeat themselves (Stripe retries an event until we answer 2xx; the
// sandbox answers a notice until billing names it done), so applying a notice
// twice, or two copies at once, changes nothing the second time.
//
// A dispute is one record with its own outbox. Each step is one
// single-record update, in an order whose every crash point the notice's
// repeat completes:
//   1. its transaction turns DISPUTED (only from REFUNDABLE), so no refund can
//      start: a refund already reserved still settles;
//   2. the dispute is inserted NEEDS_RESPONSE with DISPUTE_OPENED (unique by
//      the processor's dispute id), listed first; the event keeps the refund
//      status step 1 left, so a decision in the same notice (step 5) does not
//      show through it;
//   3. the account's protection: the customer is unsubscribed, the card (and
//      the email) blocked from new checkouts;
//   4. the dispute moves to the notice's status (compare-and-set) with
//      DISPUTE_UPDATED or DISPUTE_CLOSED; a lost one records its CHARGEBACK
//      transaction first, so the event can name it;
//   5. a decided dispute settles its transaction: WON back to REFUNDABLE
//      (REFUNDED when nothing is left), LOST to CHARGED_BACK.

import { createHash } from "node:crypto";
import type { DisputeProtection } from "../../../shared/contracts/accounts";
import type { DisputeNotice, FraudWarningNotice, ProcessorNotice } from "../../../shared/contracts/payments";
import { insertDoc, isDuplicateKey } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { carrying, disputeEntry, transactionEntry } from "../entries/metrics-entries";
import { disputeMayMove, disputeMove, refundStatusMove } from "../lifecycle";
import { appendDispute } from "../lists/pages";
import { count } from "../mid-stats/mid-stats";
import { outboxEvent, scheduledEvent, scheduleEvents } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import type { DisputeDoc } from "../records/dispute";
import type { MetricsEntry } from "../records/metrics";
import type { OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { refundTransaction } from "../refunds/refund-ledger";
import { CustomerStatus, DisputeStatus, RefundStatus } from "../states";
import { unsubscribe } from "../subscriptions/unsubscribe";
import { recordChargebackTransaction } from "../transaction-record";

/** Why a notice was not applied; it is not applied later either. */
export enum NoticeError {
	/** No transaction of ours has the charge's key (a payment made outside this service). */
	UnknownCharge = "UNKNOWN_CHARGE",
	/** The charge was made on another MID than the one the notice came from. */
	OtherMerchantAccount = "OTHER_MERCHANT_ACCOUNT",
}

export interface NoticeApplied {
	/** The records the notice wrote events on, for the outbox relay. */
	toRelay: RelayTargets;
}

export async function applyNotice(deps: BillingDeps, notice: ProcessorNotice): Promise<NoticeApplied | NoticeError> {
	const tx = await deps.db.transactions.findOne({ idempotencyKey: notice.chargeKey }).lean();
	if (!tx) return NoticeError.UnknownCharge;
	if (tx.midId !== notice.midId) return NoticeError.OtherMerchantAccount;
	return notice.kind === "dispute" ? applyDispute(deps, notice, tx) : applyFraudWarning(deps, notice, tx);
}

/** The disputed transaction's refund status at each step (refunds wait while it is disputed). */
const HELD_BY_DISPUTE = refundStatusMove(RefundStatus.Refundable, RefundStatus.Disputed);
const CHARGED_BACK = refundStatusMove(RefundStatus.Disputed, RefundStatus.ChargedBack);
const WON = refundStatusMove(RefundStatus.Disputed, RefundStatus.Refundable);
const WON_NOTHING_LEFT = refundStatusMove(RefundStatus.Disputed, RefundStatus.Refunded);

async function applyDispute(deps: BillingDeps, notice: DisputeNotice, tx: TransactionDoc): Promise<NoticeApplied> {
	let dispute = await openDispute(deps, notice, tx);
	const unsubscribed = await protect(deps, await deps.protectionOf(tx.accountId), tx, notice, dispute._id);
	dispute = await moveDispute(deps, dispute, notice, tx);
	await settleTransaction(deps, dispute);
	return { toRelay: { disputes: [dispute._id], customers: unsubscribed ? [tx.customerId] : [] } };
}

/** Step 1: the transaction held by the dispute, if it was refundable; its refund status now. */
async function holdTransaction(deps: BillingDeps, tx: TransactionDoc): Promise<RefundStatus | undefined> {
	const held = await deps.db.transactions
		.findOneAndUpdate({ _id: tx._id, ...HELD_BY_DISPUTE.filter }, { $set: HELD_BY_DISPUTE.set }, { returnDocument: "after" })
		.lean();
	return (held ?? (await refundStatusOf(deps, tx._id)))?.refundStatus;
}

const refundStatusOf = (deps: BillingDeps, transactionId: number) =>
	deps.db.transactions.findById(transactionId, { refundStatus: 1 }).lean();

/** What an open dispute's event keeps: the status it announces, and its transaction's refund status now. */
export async function openDisputeDetails(
	deps: BillingDeps,
	transactionId: number,
	disputeStatus: DisputeStatus,
): Promise<Pick<OutboxEvent, "disputeStatus" | "refundStatus">> {
	const refundStatus = (await refundStatusOf(deps, transactionId))?.refundStatus;
	return { disputeStatus, ...(refundStatus ? { refundStatus } : {}) };
}

/** The dispute of the notice's processor id: found, or its transaction held and it inserted with DISPUTE_OPENED (steps 1 and 2). */
async function openDispute(deps: BillingDeps, notice: DisputeNotice, tx: TransactionDoc): Promise<DisputeDoc> {
	const processorKey = `${notice.midId}:${notice.reference}`;
	const existing = await deps.db.disputes.findOne({ processorKey }).lean();
	if (existing) return existing;
	const refundStatus = await holdTransaction(deps, tx);
	// Dated when the processor says (the sandbox: on the account's test clock, by the charge's own time).
	const opened = disputeEntry(tx, notice.amount, new Date(notice.at));
	const dispute = newDispute(deps, notice, tx, await deps.db.ids.disputes.next(), refundStatus, opened);
	await appendDispute(deps, dispute);
	await scheduleEvents(deps, [{ kind: "d", docId: dispute._id, event: dispute.outbox[0] }]);
	try {
		const inserted = await insertDoc(deps.db.disputes, dispute);
		const amount = { currency: dispute.currency, minor: dispute.amount };
		await count(deps, [{ midId: dispute.midId, what: "disputes", at: dispute.openedAt, amount }]);
		return inserted;
	} catch (err) {
		// The same dispute's notice, applied at the same moment by another node.
		if (!isDuplicateKey(err)) throw err;
		return (await deps.db.disputes.findOne({ processorKey }).lean())!;
	}
}

/** The dispute a notice opens, as first written, with its DISPUTE_OPENED event. */
function newDispute(
	deps: BillingDeps,
	notice: DisputeNotice,
	tx: TransactionDoc,
	_id: number,
	refundStatus: RefundStatus | undefined,
	counts: MetricsEntry | null,
): DisputeDoc {
	// A notice that already says reviewing opens the dispute there; a decided one opens it as needing a response first.
	const status = notice.status === DisputeStatus.UnderReview ? DisputeStatus.UnderReview : DisputeStatus.NeedsResponse;
	return {
		_id,
		accountId: tx.accountId,
		customerId: tx.customerId,
		transactionId: tx._id,
		midId: notice.midId,
		processorKey: `${notice.midId}:${notice.reference}`,
		processorReference: notice.reference,
		status,
		reason: notice.reason,
		amount: notice.amount,
		currency: notice.currency,
		evidenceDueBy: notice.evidenceDueBy ? new Date(notice.evidenceDueBy) : null,
		evidence: null,
		evidenceSubmittedAt: null,
		chargebackTransactionId: null,
		openedAt: new Date(notice.at),
		updatedAt: new Date(notice.at),
		closedAt: null,
		outbox: [
			outboxEvent(deps, "DISPUTE_OPENED", { disputeStatus: status, ...(refundStatus ? { refundStatus } : {}), ...carrying(counts) }),
		],
		relayed: [],
		metricsCounted: true,
	};
}

/** Step 4: the notice's status, if the dispute may move there; a late notice of an earlier stage changes nothing. */
async function moveDispute(deps: BillingDeps, dispute: DisputeDoc, notice: DisputeNotice, tx: TransactionDoc): Promise<DisputeDoc> {
	const target = notice.status as DisputeStatus;
	for (let tries = 0; tries < 5; tries++) {
		if (!disputeMayMove(dispute.status, target)) return dispute;
		const moved = await moveFromReadStatus(deps, dispute, notice, tx);
		if (moved) return moved;
		// Moved meanwhile (evidence, or the same notice on another node): judged again from where it is now.
		dispute = (await deps.db.disputes.findById(dispute._id).lean())!;
	}
	return dispute;
}

/** Compare-and-set from the status the dispute was read in to the notice's, with its event; null if it moved meanwhile. */
async function moveFromReadStatus(
	deps: BillingDeps,
	dispute: DisputeDoc,
	notice: DisputeNotice,
	tx: TransactionDoc,
): Promise<DisputeDoc | null> {
	const move = disputeMove(dispute.status, notice.status as DisputeStatus);
	const target = move.set.status;
	const closes = target === DisputeStatus.Won || target === DisputeStatus.Lost;
	const at = new Date(notice.at);
	const chargeback = target === DisputeStatus.Lost ? await recordChargebackTransaction(deps, dispute, tx, at) : null;
	// Still open: the transaction as the dispute holds it now. A decision's event shows the transaction it settles (step 5).
	const details = closes ? { disputeStatus: target } : await openDisputeDetails(deps, tx._id, target);
	// A lost dispute's chargeback counts with the event that closes it (the chargeback has none of its own).
	const counted = chargeback && transactionEntry(chargeback, at);
	const event = await scheduledEvent(deps, "d", dispute._id, closes ? "DISPUTE_CLOSED" : "DISPUTE_UPDATED", {
		...details,
		...carrying(counted),
	});
	const fields = {
		...move.set,
		updatedAt: at,
		...(notice.evidenceDueBy ? { evidenceDueBy: new Date(notice.evidenceDueBy) } : {}),
		// Decided when the processor says (a test clock's time in the sandbox), so it never precedes openedAt.
		...(closes ? { closedAt: at } : {}),
		...(chargeback ? { chargebackTransactionId: chargeback._id } : {}),
	};
	return deps.db.disputes
		.findOneAndUpdate({ _id: dispute._id, ...move.filter }, { $set: fields, $push: { outbox: event } }, { returnDocument: "after" })
		.lean();
}

/** Step 5: a decided dispute releases its transaction (won) or marks it charged back (lost); undecided, nothing. */
async function settleTransaction(deps: BillingDeps, dispute: DisputeDoc): Promise<void> {
	if (dispute.status === DisputeStatus.Lost) {
		await deps.db.transactions.updateOne({ _id: dispute.transactionId, ...CHARGED_BACK.filter }, { $set: CHARGED_BACK.set });
		return;
	}
	if (dispute.status !== DisputeStatus.Won) return;
	const tx = await deps.db.transactions.findById(dispute.transactionId).lean();
	if (tx?.refundStatus !== RefundStatus.Disputed) return;
	const nothingLeft = tx.refundableRemaining === 0 && (tx.pendingRefunds ?? []).length === 0;
	const released = nothingLeft ? WON_NOTHING_LEFT : WON;
	await deps.db.transactions.updateOne(
		{ _id: tx._id, ...released.filter, refundableRemaining: tx.refundableRemaining },
		{ $set: released.set },
	);
}

/**
 * Step 3, and a fraud warning's: the account's protection for the transaction's customer. Answers whether the
 * customer was unsubscribed now (its CANCELLATION is to be relayed).
 */
async function protect(
	deps: BillingDeps,
	protection: DisputeProtection,
	tx: TransactionDoc,
	notice: DisputeNotice | FraudWarningNotice,
	disputeId?: number,
): Promise<boolean> {
	const reason = notice.kind === "dispute" ? "DISPUTE" : "EARLY_FRAUD_WARNING";
	const customer = await deps.db.customers.findById(tx.customerId).lean();
	if (!customer) return false;
	if (protection.blockCard || protection.blockEmail)
		await deps.blockBuyer({
			accountId: tx.accountId,
			...(protection.blockCard
				? { card: { fingerprint: customer.cardFingerprint, bin: customer.cardBin, last4: customer.cardLast4 } }
				: {}),
			...(protection.blockEmail ? { email: customer.email } : {}),
			reason,
			...(disputeId === undefined ? {} : { disputeId }),
			transactionId: tx._id,
		});
	if (!protection.unsubscribe || customer.status === CustomerStatus.Unsubscribed) return false;
	// Ended when the notice came (in the sandbox, on the test clock's day it fell due).
	const ended = { endedBy: "dispute" as const, at: new Date(notice.at) };
	const answer = await unsubscribe(deps, { accountId: tx.accountId, customerId: tx.customerId, ...ended });
	// A card update in progress settles first: the notice fails, and its repeat (the processor's retry) unsubscribes.
	if (!answer.success) throw new Error(answer.message);
	return true;
}

/** A refund id per warning: two copies of the warning (a repeat, a race) name the same refund, which is made once. */
const warningRefundId = (notice: FraudWarningNotice) =>
	`efw_${createHash("sha256").update(`${notice.midId}:${notice.reference}`).digest("hex").slice(0, 40)}`;

/** An early fraud warning: the account's protection, and the charge refunded in full if the account says so. */
async function applyFraudWarning(deps: BillingDeps, notice: FraudWarningNotice, tx: TransactionDoc): Promise<NoticeApplied> {
	const protection = await deps.protectionOf(tx.accountId);
	const unsubscribed = await protect(deps, protection, tx, notice);
	const toRelay: RelayTargets = { customers: unsubscribed ? [tx.customerId] : [] };
	if (!protection.refundEarlyFraudWarnings) return { toRelay };
	const refunded = await refundTransaction(deps, { accountId: tx.accountId, transactionId: tx._id, refundId: warningRefundId(notice) });
	// Already refunded, disputed or voided: nothing is left that the warning could cost.
	if (typeof refunded === "string") return { toRelay };
	return { toRelay: { ...toRelay, transactions: [refunded.refundTransactionId] } };
}
