// CARD_EXPIRING: the merchant hears, CARD_EXPIRING_DAYS before a renewal the
// customer's card will have expired by, that it should ask for a new card;
// once per card. Customers are listed by key in the card expiry schedule (hour
// slots) at the warning's time whenever their next renewal is set; each
// renewal cycle (the test clock's too) sends the warnings due by its time,
// checking again what the listing promised: the renewal still falls after the
// expiry, the card is the same, and it was not warned about before.
import { isCardExpired } from "../../shared/card-expiry";
import { config } from "../../shared/config";
import { createSchedule, type Listing, type Schedule } from "../../shared/schedule";
import type { BillingDeps } from "./deps";
import type { BillingDb } from "./models";
import { scheduledEvent } from "./outbox/outbox";
import type { CustomerDoc } from "./records/customer";
import { CustomerStatus } from "./states";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export function createCardExpirySchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.cardExpirySchedule, { slotMs: HOUR_MS, shards: 4 });
}

type Renewing = Pick<CustomerDoc, "_id" | "cardExpiredTime" | "nextRenewalTimestamp">;

/** When to warn about this card before this renewal, or null: the card is still valid then. */
export function warningTime(customer: Pick<Renewing, "cardExpiredTime" | "nextRenewalTimestamp">): Date | null {
	const renewal = customer.nextRenewalTimestamp;
	if (!renewal || !isCardExpired(customer.cardExpiredTime, renewal)) return null;
	return new Date(renewal.getTime() - config().cardExpiringDays * DAY_MS);
}

/** The listings for customers whose next renewal was just set (one command for any number); a warning already due is listed now. */
export function expiryListings(customers: Renewing[], now: Date): Listing<number>[] {
	return customers.flatMap(customer => {
		const at = warningTime(customer);
		return at ? [{ id: customer._id, at: new Date(Math.max(at.getTime(), now.getTime())) }] : [];
	});
}

/**
 * Lists a customer whose next renewal is about to be set, if its card will have expired by then (no command
 * otherwise); `now`: the account's (account-time.ts).
 */
export function listExpiryWarning(deps: Pick<BillingDeps, "cardExpiry">, customer: Renewing, now: Date): Promise<void> {
	return deps.cardExpiry.addAll(expiryListings([customer], now));
}

export interface WarningRun {
	at: Date;
	accountId?: number;
	/** A run "in the future" (a test clock) warns sandbox customers only, as it bills them only. */
	sandboxOnly: boolean;
	moveCursor: boolean;
	/** Read the schedule on from here (a test clock's later step). */
	readFrom?: Date;
}

/** Sends the CARD_EXPIRING warnings due by the run's time; answers the customers whose events wait to be relayed. */
export async function warnExpiringCards(deps: BillingDeps, run: WarningRun): Promise<number[]> {
	const now = deps.now();
	const due = await deps.cardExpiry.due(run.at, now, { moveCursor: run.moveCursor, from: run.readFrom });
	if (due.length === 0) return [];
	const customers = new Map(
		(await deps.db.customers.find({ _id: { $in: [...new Set(due.map(e => e.id))] } }).lean()).map(c => [c._id, c] as const),
	);
	const warned: number[] = [];
	const done: DoneListing[] = [];
	for (const listing of due) {
		const customer = customers.get(listing.id);
		if (customer && !inThisRun(customer, run)) continue;
		const handled = await handleListing(deps, listing, customer, run);
		done.push(handled.done);
		if (handled.warned) warned.push(listing.id);
	}
	await deps.cardExpiry.removeAll(done);
	return warned;
}

type DoneListing = Listing<number> & { listedAt?: Date };

/** One listing: listed again for a later renewal, or its warning sent; answers the listing to take out. */
async function handleListing(
	deps: BillingDeps,
	listing: Listing<number>,
	customer: CustomerDoc | undefined,
	run: WarningRun,
): Promise<{ done: DoneListing; warned: boolean }> {
	const renews = customer?.status === CustomerStatus.Active && customer.renewalActive && !customer.cancellation;
	const at = customer && renews ? warningTime(customer) : null;
	// Gone, no renewal to come (a cancellation at the period's end included: its undo lists it again), or this card warned about already: nothing to send.
	if (!customer || !at || customer.expiryWarnedCard === customer.cardToken) return { done: listing, warned: false };
	// The renewal moved later (a retry, or another card): listed again for its own time.
	if (at.getTime() > run.at.getTime()) {
		await deps.cardExpiry.add(customer._id, at);
		return { done: { ...listing, listedAt: at }, warned: false };
	}
	// Once per card: the update is conditional on the card and on not being warned about it yet.
	const sent = await deps.db.customers.updateOne(
		{ _id: customer._id, cardToken: customer.cardToken, expiryWarnedCard: { $ne: customer.cardToken }, cancellation: null },
		{ $set: { expiryWarnedCard: customer.cardToken }, $push: { outbox: await scheduledEvent(deps, "c", customer._id, "CARD_EXPIRING") } },
	);
	return { done: listing, warned: sent.modifiedCount === 1 };
}

function inThisRun(customer: CustomerDoc, run: WarningRun): boolean {
	if (run.accountId !== undefined && customer.accountId !== run.accountId) return false;
	return !run.sandboxOnly || customer.environment === "sandbox";
}
