// Customers in recovery and how many come back (docs/recovery.md#ops). A
// renewal enters recovery with its period's first decline and is recovered
// when a later try of that period is approved; both are counted per account
// and month in recovery_stats (keyed, one upsert per batch) and on the node's
// metrics (billing.recovery.*), from which Prometheus sums the rate.
import type { RecoveryCustomer, RecoveryMonth } from "../../../shared/contracts/billing";
import { findCurrency, toDecimal } from "../../../shared/money";
import { formatDateTime } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";

export { firstDecline } from "../records/customer";

import { CustomerStatus } from "../states";
import { toCustomerView } from "../views";

/** Shown at most, newest first: an operator's list, not an export. */
const LIST_LIMIT = 1000;
const MONTHS_SHOWN = 12;

export interface Recoveries {
	entered: Pick<CustomerDoc, "accountId">[];
	recovered: { customer: Pick<CustomerDoc, "accountId">; amountMinor: number; currency: string }[];
}

/** YYYY-MM in the service's time zone. */
const monthOf = (at: Date) => formatDateTime(at).slice(0, 7);

/** This month and the `count - 1` before it, newest first. */
function monthsBack(now: Date, count: number): string[] {
	const [year, month] = monthOf(now).split("-").map(Number);
	return Array.from({ length: count }, (_, i) => {
		const index = year * 12 + (month - 1) - i;
		return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, "0")}`;
	});
}

export async function noteRecovery(deps: BillingDeps, at: Date, recoveries: Recoveries): Promise<void> {
	const month = monthOf(at);
	const byAccount = new Map<number, { entered: number; recovered: number; revenue: Record<string, number> }>();
	const of = (accountId: number) =>
		byAccount.get(accountId) ?? byAccount.set(accountId, { entered: 0, recovered: 0, revenue: {} }).get(accountId)!;
	for (const { accountId } of recoveries.entered) of(accountId).entered++;
	for (const { customer, amountMinor, currency } of recoveries.recovered) {
		const stats = of(customer.accountId);
		stats.recovered++;
		stats.revenue[currency] = (stats.revenue[currency] ?? 0) + amountMinor;
		deps.recoveryCounters?.recovered(currency, amountMinor);
	}
	for (let i = 0; i < recoveries.entered.length; i++) deps.recoveryCounters?.entered();
	if (byAccount.size === 0) return;
	await deps.db.recoveryStats.bulkWrite(
		[...byAccount].map(([accountId, stats]) => ({
			updateOne: {
				filter: { _id: `${accountId}:${month}` },
				update: {
					$setOnInsert: { accountId, month },
					$inc: {
						entered: stats.entered,
						recovered: stats.recovered,
						...Object.fromEntries(Object.entries(stats.revenue).map(([currency, minor]) => [`revenue.${currency}`, minor])),
					},
				},
				upsert: true,
			},
		})),
		{ ordered: false },
	);
}

/** Ops: the account's customers in recovery (a search: rare, an operator's), and the last 12 months' counts (by key). */
export async function recoveryOf(
	deps: BillingDeps,
	input: { accountId: number },
): Promise<{ customers: RecoveryCustomer[]; months: RecoveryMonth[] }> {
	const docs = await deps.db.customers
		.find({
			accountId: input.accountId,
			$or: [
				{ status: CustomerStatus.Suspended },
				{ status: CustomerStatus.Active, attempts: { $gt: 0 } },
				{ status: CustomerStatus.Active, "refusedMids.0": { $exists: true } },
			],
		})
		.sort({ _id: -1 })
		.limit(LIST_LIMIT)
		.lean();
	const customers = docs.map(doc => ({
		customer: toCustomerView(doc),
		state: doc.status === CustomerStatus.Suspended ? ("SUSPENDED" as const) : ("RETRYING" as const),
	}));
	// Counted in the account's months (a sandbox's test clock): read back from its now.
	const months = monthsBack(await deps.clocks.now(input.accountId), MONTHS_SHOWN);
	const stats = new Map(
		(await deps.db.recoveryStats.find({ _id: { $in: months.map(m => `${input.accountId}:${m}`) } }).lean()).map(s => [s.month, s]),
	);
	return {
		customers,
		months: months.flatMap(month => {
			const s = stats.get(month);
			if (!s) return [];
			const revenueRecovered = Object.fromEntries(
				Object.entries(s.revenue ?? {}).map(([currency, minor]) => [currency, toDecimal(minor, findCurrency(currency)!)]),
			);
			return [{ month, entered: s.entered, recovered: s.recovered, rate: s.entered ? s.recovered / s.entered : null, revenueRecovered }];
		}),
	};
}
