// Refunds left half-done by a crash. If the process or the database dies in
// the middle of a refund (refund-ledger.ts) and the merchant does not repeat
// the request, the refund would stay RESERVED: money perhaps refunded by the
// processor with no REFUNDED transaction or webhook, or the transaction's
// refundable amount reduced for nothing. Every billing node runs this sweep on
// a timer (REFUND_RECOVERY_INTERVAL_MS). A refund RESERVED for longer than the
// grace period (REFUND_RECOVERY_GRACE_MS, well above REQUEST_TIMEOUT_MS, so its
// request is over) is claimed by one node with a compare-and-set on its lease,
// and settled from where its request stopped. The processor is only asked
// what it did with the refund's key (`lookup`), never asked to refund:
//   - still reserved, processor APPROVED -> REFUNDED transaction (and its REFUND webhook), COMPLETED
//   - still reserved, anything else      -> reservation given back, FAILED
//   - not reserved, REFUNDED transaction already recorded -> COMPLETED (no second webhook)
//   - not reserved, none -> FAILED: the reservation never happened or was already given back
// A node that dies holding a refund lets its lease expire; another takes it over.
import type { BillingDeps } from "../deps";
import { type AskProcessor, claimRefund, releaseRefund, settleReserved, strandedFilter } from "./refund-ledger";

export interface RecoveryOptions {
	/** This node's name, written on the leases it holds. */
	owner: string;
	batchSize?: number;
	/** Aborted when the node drains: no new refund is claimed. */
	signal?: AbortSignal;
	/** A refund that could not be settled now (it stays RESERVED for the next sweep). */
	onError?: (refundId: string, err: Error) => void;
}

export interface RecoveryReport {
	completed: number;
	failed: number;
	/** Claimed by another node first, or not settled now (database or processor unavailable). */
	skipped: number;
	/** The REFUNDED transactions written or found, whose REFUND webhooks the relay sends. */
	refundTransactionIds: number[];
}

const DEFAULT_BATCH = 50;

/** What the processor did with the refund's key; null if it never saw it. A lookup that fails throws: nothing is decided. */
const lookUp: AskProcessor = async (payments, refund) => {
	const outcome = await payments.lookup(refund._id);
	// Still being decided, or its processor unreachable now: nothing is decided, the next sweep asks again.
	if (outcome?.status === "ERROR") throw new Error(`refund ${refund._id}: ${outcome.reason}`);
	return outcome;
};

/** The next refunds stranded RESERVED, oldest first, but those this run tried already. */
function nextStranded(deps: BillingDeps, tried: string[], batchSize: number): Promise<{ _id: string }[]> {
	return deps.db.refunds
		.find({ ...strandedFilter(deps), _id: { $nin: tried } }, { _id: 1 })
		.sort({ createdAt: 1 })
		.limit(batchSize)
		.lean();
}

/** Claims one stranded refund and settles it, counting what happened; one not settled now is released for the next sweep. */
async function recoverOne(deps: BillingDeps, refundId: string, options: RecoveryOptions, report: RecoveryReport): Promise<void> {
	const claimed = await claimRefund(deps, { _id: refundId, ...strandedFilter(deps) }, options.owner);
	if (!claimed) {
		report.skipped++;
		return;
	}
	try {
		const result = await settleReserved(deps, claimed, lookUp);
		if (typeof result === "object") {
			report.completed++;
			report.refundTransactionIds.push(result.refundTransactionId);
		} else {
			report.failed++;
		}
	} catch (err) {
		report.skipped++;
		options.onError?.(refundId, err as Error);
		await releaseRefund(deps, refundId, options.owner).catch(() => undefined);
	}
}

export async function recoverRefunds(deps: BillingDeps, options: RecoveryOptions): Promise<RecoveryReport> {
	const report: RecoveryReport = { completed: 0, failed: 0, skipped: 0, refundTransactionIds: [] };
	// Refunds tried in this run are not looked at again until the next one.
	const tried: string[] = [];
	while (!options.signal?.aborted) {
		const stranded = await nextStranded(deps, tried, options.batchSize ?? DEFAULT_BATCH);
		if (stranded.length === 0) break;
		for (const { _id } of stranded) {
			if (options.signal?.aborted) break;
			tried.push(_id);
			await recoverOne(deps, _id, options, report);
		}
	}
	return report;
}
