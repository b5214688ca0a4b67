// What a renewal batch's claim came to (renewal-batch.ts): the customers it
// claimed and may charge, those it claimed but that changed meanwhile (their
// lease let go at once), and why the others were passed over: gone from the
// slot (their listing dropped), held by another node, or not for this cycle.
// Those whose period ends with a cancellation scheduled are ended, not charged.
import type { Listing } from "../../../shared/schedule";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";
import type { Claimed, CycleReport, RenewalDeps } from "./renewal-batch";

const HOUR_MS = 3_600_000;
/** The start of the renewal schedule's hour slot of `at`. */
export const slotStart = (at: Date | null | undefined) => (at ? Math.floor(at.getTime() / HOUR_MS) * HOUR_MS : null);

/** Why a listed customer this batch did not claim was passed over: it left the slot, another node holds it, or not for this cycle. */
function passedOver(customer: CustomerDoc | undefined, listing: Listing<number>, now: Date): "left" | "held" | "notNow" {
	// A checkout still paying: its listing may be changing; leave it.
	if (customer?.status === CustomerStatus.Pending) return "notNow";
	if (customer?.renewalLease && customer.renewalLease.until.getTime() > now.getTime()) return "held";
	if (customer?.changeInFlight) return "held";
	const listed =
		customer?.status === CustomerStatus.Active &&
		customer.renewalActive &&
		slotStart(customer.nextRenewalTimestamp) === listing.at.getTime();
	return listed ? "notNow" : "left";
}

/**
 * The batch's listings after its claim: the customers it claimed and may charge, those it claimed but that changed
 * meanwhile, the listings whose customer left the slot, and whether another node held some. A customer listed in
 * several slots (a run an outage cut off after listing it in its next slot, before taking it out of the old one) is
 * claimed once, with every listing the batch found it by.
 */
export function sortClaims(listings: Listing<number>[], docs: Map<number, CustomerDoc>, owner: string, now: Date, report: CycleReport) {
	const claimed = new Map<number, Omit<Claimed, "at">>();
	const stale = new Set<number>();
	const skipped = new Set<number>();
	const left: Listing<number>[] = [];
	let heldElsewhere = false;
	for (const listing of listings) {
		const customer = docs.get(listing.id);
		if (customer?.renewalLease?.owner === owner) {
			const earlier = claimed.get(customer._id);
			if (earlier) earlier.listings.push(listing);
			// Unsubscribed between the claim and the read: not charged, and its lease let go at once (the unsubscribe waits for it).
			else if (customer.status === CustomerStatus.Active && customer.nextRenewalTimestamp)
				claimed.set(customer._id, { customer, listings: [listing] });
			else stale.add(customer._id);
			continue;
		}
		const reason = passedOver(customer, listing, now);
		if (reason === "left") left.push(listing);
		if (reason === "held") heldElsewhere = true;
		if (reason !== "notNow") skipped.add(listing.id);
	}
	report.skipped += skipped.size;
	return { claimed: [...claimed.values()], stale: [...stale], left, heldElsewhere };
}

/** Claimed but not charged (changed meanwhile, or its product gone): the lease is let go at once. */
export async function letGo(deps: RenewalDeps, customerIds: number[], owner: string, report: CycleReport): Promise<void> {
	if (customerIds.length === 0) return;
	await deps.db.customers.updateMany({ _id: { $in: customerIds }, "renewalLease.owner": owner }, { $set: { renewalLease: null } });
	report.skipped += customerIds.length;
}

/**
 * Of the claimed customers, those whose period ends with a cancellation scheduled are ended (UNSUBSCRIBED at their
 * cancelAt, their CANCELLATION relayed) and taken out of the schedule; the others are answered, to be charged. One
 * that could not be ended (it moved meanwhile) keeps its listing and lets its lease go, for a later cycle.
 */
export async function endCancelled(deps: RenewalDeps, claimed: Omit<Claimed, "at">[], owner: string, report: CycleReport) {
	const ending = claimed.filter(item => item.customer.cancellation);
	if (ending.length === 0) return claimed;
	const ended = new Set(
		await deps.endScheduled(
			deps,
			ending.map(item => item.customer),
			owner,
		),
	);
	const notEnded = ending.filter(item => !ended.has(item.customer._id)).map(item => item.customer._id);
	await letGo(deps, notEnded, owner, report);
	await deps.renewals.removeAll(ending.filter(item => ended.has(item.customer._id)).flatMap(item => item.listings));
	report.ended += ended.size;
	deps.relay({ transactions: [], customers: [...ended] });
	return claimed.filter(item => !item.customer.cancellation);
}
