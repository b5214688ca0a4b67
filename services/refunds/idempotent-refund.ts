// A refund is a GET that changes state, so proxies, browsers and client
// libraries may repeat it. With an Idempotency-Key, a repeat returns the first
// answer and refunds nothing more; a key reused with other parameters is
// refused. Keys are kept 24 hours, except those of refusals that changed nothing.
import { randomUUID } from "node:crypto";
import { sha256Hex } from "../../shared/crypto";
import type { RefundsDb } from "./models";
import { answerFor, type RefundAnswer, refundAnswers } from "./refund-answers";

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
const BUSY_WAIT_MS = 10_000;
/**
 * A first request unanswered for this long died mid-way: a repeat resumes it
 * (billing answers IN_PROGRESS, "retry shortly", while the refund's first
 * request may still be at work: REFUND_RECOVERY_GRACE_MS after it began).
 */
const ABANDONED_AFTER_MS = 30_000;

export interface RefundRequest {
	accountId: number;
	id: number;
	amountToRefund?: string;
	idempotencyKey?: string;
}

export interface RefundsDeps {
	db: RefundsDb;
	/** billing.refundTransaction */
	refund(params: { accountId: number; transactionId: number; amountToRefund?: string; refundId: string }): Promise<{ amount: number } | { error: string }>;
	now: () => Date;
}

/** Billing's refusals that leave everything as it was: nothing reserved, nothing asked of the processor. */
const REFUSED_UNCHANGED = new Set(["NOT_FOUND", "NOT_REFUNDABLE", "AMOUNT_TOO_HIGH", "INVALID_AMOUNT"]);

async function run(deps: RefundsDeps, request: RefundRequest, refundId: string): Promise<{ answer: RefundAnswer; changedNothing: boolean; unsettled: boolean }> {
	const result = await deps.refund({ accountId: request.accountId, transactionId: request.id, amountToRefund: request.amountToRefund, refundId });
	const error = "error" in result ? result.error : null;
	return { answer: answerFor(request.id, result), changedNothing: error !== null && REFUSED_UNCHANGED.has(error), unsettled: error === "IN_PROGRESS" };
}

async function waitForAnswer(deps: RefundsDeps, request: RefundRequest, key: string): Promise<RefundAnswer> {
	const deadline = Date.now() + BUSY_WAIT_MS;
	while (Date.now() < deadline) {
		await new Promise(resolve => setTimeout(resolve, 50));
		const doc = await deps.db.refundRequests.findById(key).lean();
		if (doc?.answer) return doc.answer;
		// The first request was refused and forgot its key: ask again.
		if (!doc) return refund(deps, request);
	}
	return refundAnswers.keyBusy();
}

/** What a keyed request is kept under: its key, its parameters' hash, and the refund id billing knows it by (derived once, from the key). */
export function keyRecordOf(request: RefundRequest & { idempotencyKey: string }): { key: string; fingerprint: string; refundId: string } {
	const key = `${request.accountId}:${request.idempotencyKey}`;
	return {
		key,
		fingerprint: sha256Hex(JSON.stringify([request.id, request.amountToRefund ?? null])),
		refundId: `rk_${sha256Hex(key).slice(0, 40)}`,
	};
}

export async function refund(deps: RefundsDeps, request: RefundRequest): Promise<RefundAnswer> {
	if (request.idempotencyKey === undefined) return (await run(deps, request, `rf_${randomUUID()}`)).answer;

	const { key, fingerprint, refundId } = keyRecordOf({ ...request, idempotencyKey: request.idempotencyKey });
	const now = deps.now();
	try {
		await deps.db.refundRequests.create({ _id: key, fingerprint, refundId, answer: null, createdAt: now });
	} catch (err) {
		if ((err as { code?: number }).code !== 11000) throw err;
		const existing = await deps.db.refundRequests.findById(key).lean();
		if (!existing) return refund(deps, request);
		if (now.getTime() - existing.createdAt.getTime() > KEY_LIFETIME_MS) {
			// An expired key starts afresh; the conditional delete lets only one request do so.
			await deps.db.refundRequests.deleteOne({ _id: key, createdAt: existing.createdAt });
			return refund(deps, request);
		}
		if (existing.fingerprint !== fingerprint) return refundAnswers.keyReused();
		if (existing.answer) return existing.answer;
		if (now.getTime() - existing.createdAt.getTime() < ABANDONED_AFTER_MS) return waitForAnswer(deps, request, key);
		// Billing resumes the refund by its id, so this completes it rather than refunding twice.
		return answerAndKeep(deps, request, key, existing.refundId);
	}
	// The refund id is derived from the key, so even if this node dies here, a repeat resumes the same refund.
	return answerAndKeep(deps, request, key, refundId);
}

/**
 * Keeps the answer under the key, so repeats get it. A refusal that changed
 * nothing (unknown transaction, not refundable, amount invalid or too high)
 * keeps nothing: a refused request leaves no trace, and a repeat asks afresh.
 */
async function answerAndKeep(deps: RefundsDeps, request: RefundRequest, key: string, refundId: string): Promise<RefundAnswer> {
	const { answer, changedNothing, unsettled } = await run(deps, request, refundId);
	// Billing is still settling the refund: the key waits for its real answer.
	if (unsettled) return answer;
	if (changedNothing) await deps.db.refundRequests.deleteOne({ _id: key, refundId });
	else await deps.db.refundRequests.updateOne({ _id: key }, { $set: { answer } });
	return answer;
}

/** Keys older than 24 hours are forgotten (no TTL indexes: swept by the service). */
export async function forgetExpiredKeys(deps: Pick<RefundsDeps, "db" | "now">): Promise<number> {
	const { deletedCount } = await deps.db.refundRequests.deleteMany({ createdAt: { $lt: new Date(deps.now().getTime() - KEY_LIFETIME_MS) } });
	return deletedCount;
}
