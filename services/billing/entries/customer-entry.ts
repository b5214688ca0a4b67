// What an update of one customer counts in the metrics: the customer's new
// contribution (written on it as `counted`) and the entry of the movement from
// the last one counted (carried by the update's outbox event). Both are in that
// one update of the customer's record, so what it moves is counted exactly when
// it happened, once.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";
import type { MetricsEntry } from "../records/metrics";
import { customerEntry, inRecovery } from "./metrics-entries";
import { type Contribution, contributionOf, type EndedBy, type MetricsProduct, subscriptionState } from "./subscription-state";

type MetricsDeps = Pick<BillingDeps, "productOf">;

/** The fields of a customer an update may move that the metrics read. */
export type CountedFields = Partial<
	Pick<CustomerDoc, "status" | "periodsBilled" | "productId" | "quantity" | "coupon" | "midId" | "attempts" | "refusedMids">
>;

export interface CountedUpdate {
	/** `$set` it as the customer's `counted`. */
	counted: Contribution;
	/** Put it on the update's outbox event (`metrics`); null: nothing moved. */
	entry: MetricsEntry | null;
}

/** A product gone from the accounts service: the customer keeps the MRR last counted. */
export function productOr(product: ProductRecord | MetricsProduct | null, customer: CustomerDoc, productId: number): MetricsProduct {
	if (product) return product;
	const counted = customer.counted;
	const monthly = { every: 1, unit: "month" } as const;
	return {
		id: productId,
		currency: counted?.currency ?? "EUR",
		amountMinor: counted?.mrr ?? 0,
		renewal: monthly,
		tax: { rateBps: 0, inclusive: true },
	};
}

/**
 * The customer's contribution after `update` and the movement from the one last counted. `at`: when the update
 * happens, in the account's time (account-time.ts), the day it counts on; `product`: the product in force after the
 * update, when the caller has it (else read); `endedBy`: what unsubscribed it; `losesRenewal`: a lapse loses the
 * renewal being tried (default: when one was being retried).
 */
export async function countUpdate(
	deps: MetricsDeps,
	customer: CustomerDoc,
	update: CountedFields,
	options: { at: Date; product?: MetricsProduct | null; endedBy?: EndedBy; losesRenewal?: boolean },
): Promise<CountedUpdate> {
	const next = { ...customer, ...update };
	const productOf = async (productId: number) =>
		productOr(await deps.productOf(customer.accountId, productId).catch(() => null), customer, productId);
	const product = options.product && options.product.id === next.productId ? options.product : await productOf(next.productId);
	const counted = contributionOf(subscriptionState(next, product, options.endedBy ?? null));
	const before =
		customer.counted ??
		contributionOf(subscriptionState(customer, customer.productId === product.id ? product : await productOf(customer.productId)));
	const losesRenewal = options.losesRenewal ?? inRecovery(customer);
	// A customer older than the metrics, not backfilled yet: the state it started from is left for the backfill to count.
	const baseline = customer.counted ? customer.counted.baseline : before.standing === "none" ? undefined : before;
	return {
		counted: baseline ? { ...counted, baseline } : counted,
		entry: customerEntry(customer.accountId, before, counted, options.at, losesRenewal),
	};
}
