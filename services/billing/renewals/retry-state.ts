// What a declined renewal leads to (docs/recovery.md). A hard decline suspends
// at once; a MID's refusal is tried again in an hour on another eligible MID of
// the group, without using up a retry day; a soft decline (or a refusal with
// no MID left) is retried on the account's retry days and suspends once they
// are used up. A decline for want of authentication is retried as a soft one
// (an issuer may exempt a later try); the merchant hears AUTHENTICATION_REQUIRED.
// Every retry day is counted from the period's first decline, kept on the
// customer (firstDeclinedAt), never from the try before: a cycle that runs
// late delays that try only, not the ones after it.
// `attempts` counts every declined try of the period, MID refusals included;
// the retry days used are those tries less the MIDs that refused (refusedMids).
import type { RenewalTerms } from "../../../shared/contracts/accounts";
import { DeclineCategory } from "../../../shared/contracts/billing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { declineCategory } from "../../../shared/decline-reasons";
import { addDays } from "../../../shared/time";
import type { CustomerDoc } from "../records/customer";
import { mayMoveTo } from "./mid-caps";
import { firstDecline } from "./recovery";

const HOUR_MS = 3_600_000;

/** What a declined customer's record is set to while it stays ACTIVE (the schedule's next try among it). */
export interface RetryFields {
	attempts: number;
	firstDeclinedAt: Date;
	nextRenewalTimestamp: Date;
	renewalLease: null;
	/** A MID's refusal: the MIDs that refused so far, and the one tried next. */
	refusedMids?: number[];
	midId?: number;
	midName?: string;
}

/** Suspended (retries used up, or a hard decline), or retried at `listAt`. */
export type RetryState =
	| { result: "suspended"; listAt: null; attempts: number }
	| { result: "declined"; listAt: Date; ifActive: RetryFields; otherwise: { renewalLease: null } };

export interface Declined {
	customer: Pick<CustomerDoc, "attempts" | "refusedMids" | "firstDeclinedAt" | "midId" | "cardType">;
	outcome: PaymentOutcome;
	terms: Pick<RenewalTerms, "retryDays" | "merchantAccounts">;
}

/** The retry days a customer has used in this period: its declined tries less the MIDs that refused (which used none). */
const retryDaysUsed = (customer: Declined["customer"]) => customer.attempts - (customer.refusedMids?.length ?? 0);

/** `at`: the cycle's time, the time of this decline. */
export function retryState({ customer, outcome, terms }: Declined, at: Date): RetryState {
	const category = declineCategory(outcome) ?? DeclineCategory.Soft;
	const attempts = customer.attempts + 1;
	if (category === DeclineCategory.Hard) return { result: "suspended", listAt: null, attempts };
	const firstDeclinedAt = firstDecline(customer) ? at : (customer.firstDeclinedAt ?? at);
	const retry = (listAt: Date, fields: Partial<RetryFields> = {}): RetryState => ({
		result: "declined",
		listAt,
		ifActive: { attempts, firstDeclinedAt, ...fields, nextRenewalTimestamp: listAt, renewalLease: null },
		otherwise: { renewalLease: null },
	});
	const inAnHour = new Date(at.getTime() + HOUR_MS);
	if (category === DeclineCategory.MerchantAccount) {
		const refusedMids = [...(customer.refusedMids ?? []), customer.midId];
		// Where a renewal may move for a MID's cap too: active, taking new sales and the card, not one that refused it.
		const next = terms.merchantAccounts.find(m => mayMoveTo(customer, m));
		if (next) return retry(inAnHour, { refusedMids, midId: next.id, midName: next.name });
	}
	const day = terms.retryDays[retryDaysUsed(customer)];
	if (day === undefined) return { result: "suspended", listAt: null, attempts };
	// A retry day the cycles missed altogether is tried at the next cycle, never in a slot already read.
	const due = addDays(firstDeclinedAt, day);
	return retry(due.getTime() > inAnHour.getTime() ? due : inAnHour);
}
