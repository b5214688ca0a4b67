// POST /api/usage (docs/usage.md#sending-events): a batch of up to 1,000
// events, each accepted, a duplicate or refused, and why. An event's key is
// the merchant's id for it, so storing it is the exactly-once check: a
// repeated id (in the batch, a retry, another node's batch at the same time)
// is a duplicate key, and counts nothing. The batch is listed while it is
// counted, so a node killed midway leaves it to another node's sweep
// (batch-sweep.ts), and the answer comes only once its events are counted.
import { randomUUID } from "node:crypto";
import { config } from "../../shared/config";
import { insertDoc, insertEach, isDuplicateKey } from "../../shared/persistence";
import { applyBatch, type Counted } from "./batch-apply";
import { finishBatchesOf } from "./batch-sweep";
import type { UsageDeps } from "./deps";
import { contributionOf, type EventInput, REFUSALS, type RefusalReason, shapeProblem } from "./event-checks";
import type { UsageEventDoc } from "./models";
import { periodsOf, placeEvent } from "./periods";

export interface EventResult {
	/** The event's id as sent; null when it had none that is a string. */
	id: string | null;
	status: "accepted" | "duplicate" | "refused";
	reason?: RefusalReason;
	message?: string;
}

export interface IngestAnswer {
	accepted: number;
	duplicates: number;
	refused: number;
	results: EventResult[];
}

const refusal = (id: string | null, reason: RefusalReason, message = REFUSALS[reason]): EventResult => ({
	id,
	status: "refused",
	reason,
	message,
});

interface Stored {
	index: number;
	doc: UsageEventDoc;
	counted: Counted;
}

export const eventKey = (accountId: number, id: string) => `${accountId}:${id}`;

export async function ingest(deps: UsageDeps, input: { accountId: number; events: unknown[] }): Promise<IngestAnswer> {
	const { accountId, events } = input;
	const results: EventResult[] = new Array(events.length);
	const valid: { index: number; event: EventInput }[] = [];
	const seen = new Set<string>();
	events.forEach((raw, index) => {
		const id = typeof (raw as { id?: unknown })?.id === "string" ? (raw as EventInput).id : null;
		const problem = shapeProblem(raw);
		if (problem) results[index] = refusal(id, problem.reason, problem.message);
		else if (seen.has(id!)) results[index] = { id, status: "duplicate" };
		else {
			seen.add(id!);
			valid.push({ index, event: raw as EventInput });
		}
	});
	const [meters, periods, now] = await Promise.all([
		deps.meterCache.get(
			accountId,
			valid.map(v => v.event.meter),
		),
		periodsOf(
			deps,
			accountId,
			valid.map(v => v.event.customerId),
		),
		deps.clocks.now(accountId),
	]);
	const batch = randomUUID();
	const receivedAt = deps.now();
	const stored: Stored[] = [];
	for (const { index, event } of valid) {
		const meter = meters.get(event.meter);
		const customer = periods.get(event.customerId);
		const properties = event.properties ?? {};
		const contribution = meter ? contributionOf(meter, properties) : "UNKNOWN_METER";
		const timestamp = new Date(event.timestamp);
		const placed = customer ? placeEvent(customer, timestamp, now) : ({ refused: "UNKNOWN_CUSTOMER" } as const);
		if (typeof contribution === "string") results[index] = refusal(event.id, contribution);
		else if ("refused" in placed) results[index] = refusal(event.id, placed.refused);
		else {
			const key = eventKey(accountId, event.id);
			const { customerId, meter: code } = event;
			stored.push({
				index,
				doc: {
					_id: key,
					accountId,
					customerId,
					meter: code,
					timestamp,
					properties,
					period: placed.period,
					...contribution,
					late: placed.late,
					batch,
					status: "counted",
					receivedAt,
				},
				counted: { key, accountId, customerId, meter: code, period: placed.period, timestamp, ...contribution, late: placed.late },
			});
		}
	}
	if (stored.length) await countBatch(deps, accountId, batch, stored, results);
	return {
		accepted: results.filter(r => r.status === "accepted").length,
		duplicates: results.filter(r => r.status === "duplicate").length,
		refused: results.filter(r => r.status === "refused").length,
		results,
	};
}

/** Lists the batch, stores its events (the duplicates are refused by key), counts the new ones, and unlists it. */
async function countBatch(deps: UsageDeps, accountId: number, batch: string, stored: Stored[], results: EventResult[]) {
	const leaseUntil = new Date(deps.now().getTime() + config().usageBatchLeaseMs);
	await insertDoc(deps.db.batches, { _id: batch, accountId, events: stored.map(s => s.doc._id), owner: deps.owner, leaseUntil });
	const refused = await insertEach(
		deps.db.events,
		stored.map(s => s.doc),
	);
	const fresh: Stored[] = [];
	const duplicates: Stored[] = [];
	refused.forEach((err, i) => {
		if (err === null) fresh.push(stored[i]);
		else if (isDuplicateKey(err)) duplicates.push(stored[i]);
		else throw err;
	});
	const closed = await applyBatch(
		deps,
		batch,
		fresh.map(s => s.counted),
		stored[0].doc.receivedAt,
	);
	await deps.db.batches.deleteOne({ _id: batch });
	for (const { index, doc } of fresh) {
		const id = doc._id.slice(doc._id.indexOf(":") + 1);
		results[index] = closed.has(doc._id) ? refusal(id, "PERIOD_CLOSED") : { id, status: "accepted" };
	}
	for (const { index, doc } of duplicates) results[index] = { id: doc._id.slice(doc._id.indexOf(":") + 1), status: "duplicate" };
	// A retry after a crash: the first batch of these events may still be listed, its lease over; it is finished now.
	if (duplicates.length)
		await finishBatchesOf(
			deps,
			duplicates.map(d => d.doc._id),
		);
}
