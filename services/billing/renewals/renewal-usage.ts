// The usage a renewal charges (docs/usage.md#billing): the period it closes,
// asked of the usage service under the period's number, so a retry after a
// decline bills the same usage; its lines go on the renewal's one charge.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";
import type { BilledLine } from "../records/transaction";
import { pricedMeters, usageLines } from "../usage/usage-lines";
import { usagePeriodStart } from "../usage/usage-subjects";
import { nextRenewalAfter, renewalBill } from "./renewal-bill";

/** The usage lines of the period the customer's due renewal closes; none for a product without usage prices. */
export async function renewalUsage(deps: Pick<BillingDeps, "usage">, customer: CustomerDoc, product: ProductRecord): Promise<BilledLine[]> {
	if (product.usagePrices.length === 0 || !product.renewal) return [];
	const next = nextRenewalAfter(customer, product, renewalBill(customer, product));
	const closed = await deps.usage.close({
		accountId: customer.accountId,
		customerId: customer._id,
		period: customer.periodsBilled,
		start: usagePeriodStart(customer, product).toISOString(),
		// The first try's date: the schedule's (a retry finds the period closed already, at that date).
		end: customer.nextRenewalTimestamp!.toISOString(),
		nextEnd: next?.toISOString() ?? null,
		meters: pricedMeters(product),
	});
	return usageLines(product, closed);
}
