// The relay's sweep: whatever a crashed node or a failed relay left in an
// outbox, found by key in the outbox schedule (outbox.ts), relayed; then the
// listings that are done are dropped.
import type { CustomerDoc } from "../records/customer";
import type { DisputeDoc } from "../records/dispute";
import type { OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { asListing, OUTBOX_SLOT_MS, type OutboxListing, parseListing } from "./outbox";
import type { OutboxRelayDeps } from "./outbox-relay";
import { ENQUEUE_BATCH, relayRecords } from "./relay-events";
import { readByIds } from "./relay-records";

/**
 * The sweep leaves the newest slots to the relays that follow each write (a
 * relay takes milliseconds; relaying twice is harmless, notifications dedupes).
 * An event a relay missed goes out within this + a slot + the sweep interval (outbox-relay.ts): 8 s.
 */
const SWEEP_DELAY_MS = 2 * OUTBOX_SLOT_MS;
/**
 * A listing whose event is in neither the outbox nor `relayed` is for a write
 * that has not landed (or never will: it failed). It is dropped after this long,
 * far beyond any write's time in flight.
 */
const ABANDON_AFTER_MS = 10 * 60_000;

type Relayable = { outbox: OutboxEvent[]; relayed: string[] };

/** What a listing says now: its event waits, was relayed, or has not been written (yet, or ever). */
function listingState(listing: OutboxListing, doc: Relayable | undefined, now: Date): "waiting" | "done" | "unwritten" {
	if (doc?.outbox.some(event => event.id === listing.eventId)) return "waiting";
	if (doc?.relayed.includes(listing.eventId)) return "done";
	return now.getTime() - listing.at.getTime() > ABANDON_AFTER_MS ? "done" : "unwritten";
}

/** Relays what still waits, then drops the listings that are done. */
async function sweepBatch(deps: OutboxRelayDeps, listings: OutboxListing[], now: Date): Promise<void> {
	const ids = (kind: OutboxListing["kind"]) => listings.filter(l => l.kind === kind).map(l => l.docId);
	const [transactions, customers, disputes] = await Promise.all([
		readByIds<TransactionDoc>(deps.db.transactions, ids("t")),
		readByIds<CustomerDoc>(deps.db.customers, ids("c")),
		readByIds<DisputeDoc>(deps.db.disputes, ids("d")),
	]);
	const docs = { t: transactions, c: customers, d: disputes };
	const docOf = (listing: OutboxListing) => docs[listing.kind].get(listing.docId);
	const waiting = listings.filter(listing => listingState(listing, docOf(listing), now) === "waiting");
	const waitingOf = <Doc>(kind: OutboxListing["kind"], found: Map<number, Doc>) => [
		...new Set(waiting.filter(l => l.kind === kind).map(l => found.get(l.docId)!)),
	];
	await relayRecords(deps, waitingOf("t", transactions), waitingOf("c", customers), waitingOf("d", disputes), true);
	// Relayed just now, or before: done. Unwritten ones stay listed for the next sweep.
	const done = listings.filter(listing => listingState(listing, docOf(listing), now) !== "unwritten");
	await deps.outbox.removeAll(done.map(asListing));
}

/**
 * One pass over the listings due, a batch at a time; those of records this node's relays are handing over now
 * (`inFlight`) stay listed for the next pass. A batch that fails does not stop the pass: its relay fails after its
 * events were enqueued when only metrics.apply does (relay-events.ts), and every pass would fail at the same first
 * batch while metrics is down, so the events listed after it would never be sent. The first failure is thrown after.
 */
export async function sweepOutbox(
	deps: OutboxRelayDeps & { inFlight?(kind: OutboxListing["kind"], docId: number): boolean },
): Promise<void> {
	const now = deps.now();
	const listings = (await deps.outbox.due(new Date(now.getTime() - SWEEP_DELAY_MS), now))
		.flatMap(due => parseListing(due) ?? [])
		.filter(listing => !deps.inFlight?.(listing.kind, listing.docId));
	const failures: unknown[] = [];
	for (let from = 0; from < listings.length; from += ENQUEUE_BATCH) {
		await sweepBatch(deps, listings.slice(from, from + ENQUEUE_BATCH), now).catch(err => failures.push(err));
	}
	if (failures.length > 0) throw failures[0];
}
