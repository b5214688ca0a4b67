// When each customer is next due, by key: an hour slot of the renewal
// schedule lists the customers due in it (shared/schedule.ts). A customer is
// listed in its new slot before its nextRenewalTimestamp changes and taken out
// of the old one after, so it is never missing from the slot it is due in.
import { createSchedule, type Schedule, type ScheduleOptions } from "../../../shared/schedule";
import type { BillingDb } from "../models";

const HOUR_MS = 3_600_000;

/** Hour slots, 8 records each; a first reading looks back over the longest a database may have been without a cycle. */
export const RENEWAL_SCHEDULE: ScheduleOptions = { slotMs: HOUR_MS, shards: 8 };

export function createRenewalSchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.renewalSchedule, RENEWAL_SCHEDULE);
}
