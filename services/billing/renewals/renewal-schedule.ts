// When each customer is next due, by key: an hour slot of the renewal
// schedule lists the customers due in it (shared/schedule.ts). A customer is
// listed in its new slot before its nextRenewalTimestamp changes and taken out
// of the old one after, so it is never missing from the slot it is due in.
import { createSchedule, type DueEntry, type Schedule, type ScheduleOptions } from "../../../shared/schedule";
import type { BillingDb, CustomerDoc } from "../models";
import { CustomerStatus } from "../states";

const HOUR_MS = 3_600_000;

/** Hour slots, 8 documents each; a first reading looks back over the longest a database may have been without a cycle. */
export const RENEWAL_SCHEDULE: ScheduleOptions = { slotMs: HOUR_MS, shards: 8, firstLookBackMs: 400 * 24 * HOUR_MS };

export function createRenewalSchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.renewalSchedule, RENEWAL_SCHEDULE);
}

type Renewing = Pick<CustomerDoc, "_id" | "nextRenewalTimestamp" | "cardExpiredTime">;

/**
 * Customers of a database written before a schedule of theirs existed are
 * listed once, when billing starts and the schedule has never been read (a
 * scan, once): by default at their next renewal.
 */
export async function scheduleEarlierCustomers(
	db: BillingDb,
	schedule: Schedule<number>,
	now: Date,
	listings: (customers: Renewing[]) => DueEntry<number>[] = customers =>
		customers.filter(c => c.nextRenewalTimestamp).map(c => ({ id: c._id, at: c.nextRenewalTimestamp! })),
): Promise<number> {
	if (await schedule.inUse()) return 0;
	const renewing = await db.customers
		.find({ status: CustomerStatus.Active, renewalActive: true }, { nextRenewalTimestamp: 1, cardExpiredTime: 1 })
		.lean();
	const listed = listings(renewing);
	for (let from = 0; from < listed.length; from += 1000) await schedule.addAll(listed.slice(from, from + 1000));
	// The cursor starts at the earliest listing: a missed cycle is caught up.
	await schedule.initialize(new Date(listed.reduce((earliest, l) => Math.min(earliest, l.at.getTime()), now.getTime())));
	return listed.length;
}
