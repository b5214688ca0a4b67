// Who may charge a subscription's renewal right now. A billing node claims a
// due, active customer with one compare-and-set that sets a lease; it charges
// only while holding it. Unsubscribing moves the customer out of ACTIVE first
// (so no new claim can succeed) and then waits for a held lease to end before
// it answers: once an unsubscribe has been answered, no renewal charges.

import { leaseFree, newLease } from "../../shared/persistence";
import { pollUntil } from "../../shared/poll";
import type { BillingDeps } from "./deps";
import type { CustomerDoc } from "./records/customer";
import { CustomerStatus } from "./states";

export interface BatchClaim {
	customerIds: number[];
	/** Unique to this batch: the customers whose lease names it are this batch's. */
	owner: string;
	at: Date;
	leaseMs: number;
	/** Only this account's customers (the sandbox test clock). */
	accountId?: number;
	/** Only sandbox customers (a cycle for a future time, which the test clock runs). */
	sandboxOnly: boolean;
}

/**
 * Claims every due, active, free customer of the batch with one update, then
 * reads the batch back: those whose lease names `owner` are claimed.
 */
export async function claimRenewals(deps: BillingDeps, claim: BatchClaim): Promise<Map<number, CustomerDoc>> {
	const now = deps.now();
	await deps.db.customers.updateMany(
		{
			_id: { $in: claim.customerIds },
			status: CustomerStatus.Active,
			renewalActive: true,
			nextRenewalTimestamp: { $lte: claim.at },
			// A change's charge not settled yet (changes/change-charge.ts): renewed once the sweep has settled it.
			changeInFlight: null,
			...(claim.accountId === undefined ? {} : { accountId: claim.accountId }),
			...(claim.sandboxOnly ? { environment: "sandbox" } : {}),
			...leaseFree("renewalLease", now),
		},
		{ $set: { renewalLease: newLease(claim.owner, now, claim.leaseMs) } },
	);
	const docs = await deps.db.customers.find({ _id: { $in: claim.customerIds } }).lean();
	return new Map(docs.map(doc => [doc._id, doc]));
}

/**
 * Of customers a batch charged, those it could not move on, still ACTIVE and due as it claimed them: its lease ended
 * before the processor answered, and another run holds them now (renewals/renewal-batch.ts keeps them listed).
 */
export async function dueAsClaimed(deps: BillingDeps, claimed: CustomerDoc[]): Promise<number[]> {
	const due = new Map(claimed.map(c => [c._id, c.nextRenewalTimestamp?.getTime()]));
	const docs = await deps.db.customers.find({ _id: { $in: [...due.keys()] } }, { status: 1, nextRenewalTimestamp: 1 }).lean();
	return docs
		.filter(doc => doc.status === CustomerStatus.Active && doc.nextRenewalTimestamp?.getTime() === due.get(doc._id))
		.map(doc => doc._id);
}

const POLL_MS = 25;

/** Resolves when no billing node holds the customer's renewal lease (it was released or it expired). */
export async function waitForRenewalInFlight(deps: BillingDeps, customerId: number): Promise<void> {
	await pollUntil(
		async () => {
			const lease = (await deps.db.customers.findById(customerId, { renewalLease: 1 }).lean())?.renewalLease;
			return !lease || lease.until.getTime() <= deps.now().getTime() ? true : undefined;
		},
		{ intervalMs: POLL_MS },
	);
}
