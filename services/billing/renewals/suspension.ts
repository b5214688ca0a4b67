// A renewal that used up its retries, or met a hard decline, suspends its
// customer (docs/recovery.md): ACTIVE -> SUSPENDED under the batch's lease,
// with the SUSPENSION event that also counts the churn and the renewal lost in
// the metrics, and the duplicate-check lock released.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import { customerMove } from "../lifecycle";
import { scheduledEvent } from "../outbox/outbox";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";
import { releaseLock } from "../subscription-lock";
import type { RenewalDeps } from "./renewal-batch";

const SUSPEND = customerMove(CustomerStatus.Active, CustomerStatus.Suspended);

/** ACTIVE -> SUSPENDED with its SUSPENSION event, which counts the churn and the renewal lost (rare: one customer at a time). */
export async function suspend(
	deps: RenewalDeps,
	{ customer, terms, at }: { customer: CustomerDoc; terms: { product: ProductRecord }; at: Date },
	lease: object,
	attempts: number,
): Promise<void> {
	const { counted, entry } = await countUpdate(
		deps,
		customer,
		{ status: CustomerStatus.Suspended },
		{ product: terms.product, at, losesRenewal: true },
	);
	const suspended = await deps.db.customers.updateOne(
		{ ...lease, ...SUSPEND.filter },
		{
			$set: { ...SUSPEND.set, renewalActive: false, nextRenewalTimestamp: null, attempts, renewalLease: null, counted },
			$push: { outbox: await scheduledEvent(deps, "c", customer._id, "SUSPENSION", carrying(entry)) },
		},
	);
	if (suspended.modifiedCount === 1) await releaseLock(deps, customer);
	else await deps.db.customers.updateOne(lease, { $set: { attempts, renewalLease: null } });
}
