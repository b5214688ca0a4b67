// A refund is a GET that changes state, so proxies, browsers and client
// libraries may repeat it. With an Idempotency-Key, a repeat returns the first
// answer and refunds nothing more; a key reused with other parameters is
// refused. Keys are kept 24 hours, except those of refusals that changed nothing.
// A request flows one way: this service keeps the key and the answer; billing
// owns the refund, and the only wait (for a request that is still settling the
// refund) is billing's, on the refund itself.
import { randomUUID } from "node:crypto";
import { isFailure } from "../../shared/call";
import { RefundError } from "../../shared/contracts/billing";
import { sha256Hex } from "../../shared/crypto";
import { insertOnce } from "../../shared/persistence";
import type { RefundsDeps } from "./deps";
import { RefundsError } from "./errors";
import { answerFor, type RefundAnswer, refused } from "./refund-answers";

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface RefundRequest {
	accountId: number;
	id: number;
	amountToRefund?: string;
	idempotencyKey?: string;
}

/**
 * What each of billing's refusals leaves for the key: nothing changed (the
 * key is forgotten, a repeat asks afresh), a settled refusal (kept, repeats
 * get it), or a refund still being settled by its first request or the
 * recovery (nothing kept: a repeat asks billing again).
 */
const AFTER_REFUSAL: Record<RefundError, "changedNothing" | "settled" | "unsettled"> = {
	[RefundError.NotFound]: "changedNothing",
	[RefundError.NotRefundable]: "changedNothing",
	[RefundError.AmountTooHigh]: "changedNothing",
	[RefundError.InvalidAmount]: "changedNothing",
	[RefundError.ProcessorRefused]: "settled",
	[RefundError.InProgress]: "unsettled",
};

async function run(
	deps: RefundsDeps,
	request: RefundRequest,
	refundId: string,
): Promise<{ answer: RefundAnswer; after: "refunded" | (typeof AFTER_REFUSAL)[RefundError] }> {
	const result = await deps.call("billing.refundTransaction", {
		accountId: request.accountId,
		transactionId: request.id,
		amountToRefund: request.amountToRefund,
		refundId,
	});
	return { answer: answerFor(request.id, result), after: isFailure(result) ? AFTER_REFUSAL[result.error] : "refunded" };
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
	if (!(await insertOnce(deps.db.refundRequests, { _id: key, fingerprint, refundId, answer: null, createdAt: now }))) {
		const existing = await deps.db.refundRequests.findById(key).lean();
		if (!existing) return refund(deps, request);
		if (now.getTime() - existing.createdAt.getTime() > KEY_LIFETIME_MS) {
			// An expired key starts afresh; the conditional delete lets only one request do so.
			await deps.db.refundRequests.deleteOne({ _id: key, createdAt: existing.createdAt });
			return refund(deps, request);
		}
		if (existing.fingerprint !== fingerprint) return refused(RefundsError.KeyReused, request.id);
		if (existing.answer) return existing.answer;
		// Billing knows the refund by its id: it waits for the request settling it, or resumes one that died, and never refunds twice.
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
	const { answer, after } = await run(deps, request, refundId);
	// Billing is still settling the refund: the key waits for its real answer.
	if (after === "unsettled") return answer;
	if (after === "changedNothing") await deps.db.refundRequests.deleteOne({ _id: key, refundId });
	else await deps.db.refundRequests.updateOne({ _id: key }, { $set: { answer } });
	return answer;
}

/** Keys older than 24 hours are forgotten (no TTL indexes: swept by the service). */
export async function forgetExpiredKeys(deps: Pick<RefundsDeps, "db" | "now">): Promise<number> {
	const { deletedCount } = await deps.db.refundRequests.deleteMany({
		createdAt: { $lt: new Date(deps.now().getTime() - KEY_LIFETIME_MS) },
	});
	return deletedCount;
}
