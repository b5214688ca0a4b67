// Who may charge a subscription's renewal right now. A billing node claims a
// due, active customer with one compare-and-set that sets a lease; it charges
// only while holding it. Unsubscribing moves the customer out of ACTIVE first
// (so no new claim can succeed) and then waits for a held lease to end before
// it answers: once an unsubscribe has been answered, no renewal charges.

import { leaseFree, newLease } from "../../shared/persistence";
import { pollUntil } from "../../shared/poll";
import type { BillingDeps } from "./deps";
import type { CustomerDoc } from "./models";
import { CustomerStatus } from "./states";

export interface RenewalClaim {
	customerId: number;
	owner: string;
	/** The cycle's time: customers due at or before it may be claimed. */
	at: Date;
	leaseMs: number;
}

export async function claimRenewal(deps: BillingDeps, claim: RenewalClaim): Promise<CustomerDoc | null> {
	const now = deps.now();
	return deps.db.customers
		.findOneAndUpdate(
			{
				_id: claim.customerId,
				status: CustomerStatus.Active,
				renewalActive: true,
				nextRenewalTimestamp: { $lte: claim.at },
				...leaseFree("renewalLease", now),
			},
			{ $set: { renewalLease: newLease(claim.owner, now, claim.leaseMs) } },
			{ returnDocument: "after" },
		)
		.lean();
}

export async function releaseRenewal(deps: BillingDeps, input: { customerId: number; owner: string }): Promise<boolean> {
	const result = await deps.db.customers.updateOne(
		{ _id: input.customerId, "renewalLease.owner": input.owner },
		{ $set: { renewalLease: null } },
	);
	return result.modifiedCount === 1;
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
