// Events a billing write makes in the same update as the write itself; the
// relay (outbox-relay.ts) hands them to notifications afterwards.
//
// Every event is listed in the outbox schedule (shared/schedule.ts, by the
// time it was written) just before the update that writes it, so the relay's
// sweep finds what a crashed node or a failed relay left behind by key,
// without searching customers or transactions. A listing names the record
// and the event: the sweep drops it once the event is in the record's
// `relayed`, so an event whose write lands late is never dropped unrelayed.
import { randomUUID } from "node:crypto";
import { createSchedule, type Listing, type Schedule } from "../../../shared/schedule";
import type { BillingDeps } from "../deps";
import type { BillingDb } from "../models";
import type { OutboxDetails, OutboxEvent } from "../records/outbox-event";

export function outboxEvent(deps: Pick<BillingDeps, "now">, type: OutboxEvent["type"], details: OutboxDetails = {}): OutboxEvent {
	return { id: randomUUID(), type, createdAt: deps.now(), ...details };
}

/** Which collection a listed event is in: c(ustomers), t(ransactions) or d(isputes). */
export type OutboxKind = "c" | "t" | "d";

export interface OutboxListing {
	kind: OutboxKind;
	docId: number;
	eventId: string;
	/** The slot it is listed in. */
	at: Date;
}

/** The slots are this wide: the sweep leaves the newest two to the relays that follow each write. */
export const OUTBOX_SLOT_MS = 1000;

export function createOutboxSchedule(db: BillingDb): Schedule<string> {
	return createSchedule<string>(db.outboxSchedule, { slotMs: OUTBOX_SLOT_MS, shards: 4 });
}

const listingOf = (kind: OutboxKind, docId: number, event: OutboxEvent): Listing<string> => ({
	id: `${kind}${docId}:${event.id}`,
	at: event.createdAt,
});

export function parseListing(listing: Listing<string>): OutboxListing | null {
	const match = /^([ctd])(\d+):(.+)$/.exec(listing.id);
	return match ? { kind: match[1] as OutboxKind, docId: Number(match[2]), eventId: match[3], at: listing.at } : null;
}

export const asListing = (listing: OutboxListing): Listing<string> => ({
	id: `${listing.kind}${listing.docId}:${listing.eventId}`,
	at: listing.at,
});

/** Schedules events about to be written (one command for any number): call it right before the update that writes them. */
export function scheduleEvents(
	deps: Pick<BillingDeps, "outbox">,
	events: { kind: OutboxKind; docId: number; event: OutboxEvent }[],
): Promise<void> {
	return deps.outbox.addAll(events.map(e => listingOf(e.kind, e.docId, e.event)));
}

/** A new event on one record, scheduled: write it in the update that follows. */
export async function scheduledEvent(
	deps: Pick<BillingDeps, "now" | "outbox">,
	kind: OutboxKind,
	docId: number,
	type: OutboxEvent["type"],
	details: OutboxDetails = {},
): Promise<OutboxEvent> {
	const event = outboxEvent(deps, type, details);
	await scheduleEvents(deps, [{ kind, docId, event }]);
	return event;
}
