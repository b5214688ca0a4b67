// Batches whose node died before they were counted (docs/usage.md#crashes):
// a batch stays listed, with its node's lease, until its aggregates are all
// updated. Once the lease is over any node takes it (a conditional update on
// the few batches in flight) and counts its stored events again; the
// aggregates it already reached say so (batch-apply.ts), so nothing counts
// twice and nothing stored is lost.
import { config } from "../../shared/config";
import { applyBatch, type Counted } from "./batch-apply";
import type { UsageDeps } from "./deps";
import type { BatchDoc } from "./models";

/** Finishes the batch once this node holds it; answers whether it did. */
async function finish(deps: UsageDeps, batch: BatchDoc): Promise<boolean> {
	const now = deps.now();
	const claimed = await deps.db.batches
		.findOneAndUpdate(
			{ _id: batch._id, leaseUntil: batch.leaseUntil },
			{ $set: { owner: deps.owner, leaseUntil: new Date(now.getTime() + config().usageBatchLeaseMs) } },
		)
		.lean();
	if (!claimed) return false;
	const events = await deps.db.events.find({ _id: { $in: batch.events } }).lean();
	const counted: Counted[] = events
		.filter(event => event.batch === batch._id && event.status === "counted")
		.map(event => ({
			key: event._id,
			accountId: event.accountId,
			customerId: event.customerId,
			meter: event.meter,
			period: event.period,
			timestamp: new Date(event.timestamp),
			value: event.value,
			unique: event.unique,
			late: event.late,
		}));
	if (counted.length) await applyBatch(deps, batch._id, counted, new Date(events.find(e => e.batch === batch._id)!.receivedAt), true);
	await deps.db.batches.deleteOne({ _id: batch._id });
	return true;
}

/** Any node, now and then: the batches whose lease is over (a scan of the few in flight). */
export async function sweepBatches(deps: UsageDeps): Promise<number> {
	const due = await deps.db.batches
		.find({ leaseUntil: { $lte: deps.now() } })
		.limit(20)
		.lean();
	let finished = 0;
	for (const batch of due) if (await finish(deps, batch)) finished++;
	return finished;
}

/** The batches that stored these events, if still listed with their lease over, finished now (a client's retry). */
export async function finishBatchesOf(deps: UsageDeps, eventKeys: string[]): Promise<void> {
	const events = await deps.db.events.find({ _id: { $in: eventKeys } }, { batch: 1 }).lean();
	const batches = await deps.db.batches.find({ _id: { $in: [...new Set(events.map(event => event.batch))] } }).lean();
	const now = deps.now().getTime();
	for (const batch of batches) if (batch.leaseUntil.getTime() <= now) await finish(deps, batch);
}
