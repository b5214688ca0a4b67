// What the usage service learns of a customer the first time it hears of it
// (docs/usage.md#time): the period it is in, by the charges made so far (a
// trial is period 0), from its start to its scheduled end. Read by key; a
// customer of another account is left out, as unknown.
import type { UsageSubject } from "../../../shared/contracts/usage";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";

const ENDED = new Set<string>([CustomerStatus.Unsubscribed, CustomerStatus.Abandoned, CustomerStatus.Declined]);

export function usageSubjectOf(customer: CustomerDoc): UsageSubject {
	// The period's start: a change's stored period, else the last charge (the schedule's date for a renewal), else the signup.
	const start = customer.period?.start ?? customer.lastTimeBilled ?? customer.subscriptionTimestamp;
	const ended = ENDED.has(customer.status);
	return {
		customerId: customer._id,
		period: customer.periodsBilled,
		start: new Date(start).toISOString(),
		end: customer.nextRenewalTimestamp?.toISOString() ?? null,
		endedAt: ended ? (customer.unsubscriptionTimestamp ?? customer.subscriptionTimestamp).toISOString() : null,
	};
}

export async function usageSubjects(deps: BillingDeps, input: { accountId: number; customerIds: number[] }): Promise<UsageSubject[]> {
	const customers = await deps.db.customers.find({ _id: { $in: input.customerIds } }, { outbox: 0, relayed: 0 }).lean<CustomerDoc[]>();
	return customers
		.filter(customer => customer.accountId === input.accountId && customer.status !== CustomerStatus.Pending)
		.map(usageSubjectOf);
}
