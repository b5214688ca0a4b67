// What the usage service learns of a customer the first time it hears of it
// (docs/usage.md#time): the period it is in, by the charges made so far (a
// trial is period 0), from its start to its scheduled end. Read by key; a
// customer of another account is left out, as unknown.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import type { UsageSubject } from "../../../shared/contracts/usage";
import { currentPeriod } from "../changes/customer-period";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";

const ENDED = new Set<string>([CustomerStatus.Unsubscribed, CustomerStatus.Abandoned, CustomerStatus.Declined]);

/**
 * When the customer's current period began: the signup for its first (a trial, or the period its checkout paid), then
 * the schedule's date of the renewal that began it (changes/customer-period.ts), else its last charge.
 */
export function usagePeriodStart(customer: CustomerDoc, product: ProductRecord | null): Date {
	if (customer.periodsBilled <= 1 && !customer.period) return customer.subscriptionTimestamp;
	const period = product ? currentPeriod(customer, product) : null;
	return period?.start ?? customer.lastTimeBilled ?? customer.subscriptionTimestamp;
}

export function usageSubjectOf(customer: CustomerDoc, product: ProductRecord | null): UsageSubject {
	const ended = ENDED.has(customer.status);
	return {
		customerId: customer._id,
		period: customer.periodsBilled,
		start: new Date(usagePeriodStart(customer, product)).toISOString(),
		end: customer.nextRenewalTimestamp?.toISOString() ?? null,
		endedAt: ended ? (customer.unsubscriptionTimestamp ?? customer.subscriptionTimestamp).toISOString() : null,
	};
}

export async function usageSubjects(deps: BillingDeps, input: { accountId: number; customerIds: number[] }): Promise<UsageSubject[]> {
	const customers = (
		await deps.db.customers.find({ _id: { $in: input.customerIds } }, { outbox: 0, relayed: 0 }).lean<CustomerDoc[]>()
	).filter(customer => customer.accountId === input.accountId && customer.status !== CustomerStatus.Pending);
	const productIds = [...new Set(customers.map(customer => customer.productId))];
	const products = new Map(await Promise.all(productIds.map(async id => [id, await deps.productOf(input.accountId, id)] as const)));
	return customers.map(customer => usageSubjectOf(customer, products.get(customer.productId) ?? null));
}
