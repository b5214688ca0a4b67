// What one write counts in the metrics' day counters (docs/metrics.md), as a
// MetricsEntry: pure. A customer's update counts its MRR and subscriber
// movements (mrr-movements.ts) in `all`, its product's scope and its MID's,
// and a renewal lost when a subscriber in recovery lapses; a transaction
// counts its volume and, for a renewal's try, the renewal figures; a dispute
// opened counts its amount. The entry rides on the write's outbox event.

import { dayOf } from "../mid-stats/mid-stats";
import { firstDecline } from "../records/customer";
import type { DayCount, DayCounts, MetricsEntry, ScopeKey } from "../records/metrics";
import type { TransactionDoc } from "../records/transaction";
import { type Movement, movementsBetween } from "./mrr-movements";
import type { Contribution } from "./subscription-state";
import { usageShareOf, volumeOf } from "./volume";

type Counts = Partial<Record<ScopeKey, Partial<DayCounts>>>;

/** Which try of its period a renewal's charge was (TransactionDoc.renewalTry). */
export type RenewalTry = "first" | "retry" | "card_update";

function add(counts: Counts, scope: ScopeKey, count: DayCount, n: number): void {
	if (n === 0) return;
	const figures = counts[scope] ?? {};
	figures[count] = (figures[count] ?? 0) + n;
	counts[scope] = figures;
}

const CHURN_COUNT = {
	unsubscribed: "churnedUnsubscribed",
	suspended: "churnedSuspended",
	disputed: "churnedDisputed",
	paused: "churnedPaused",
} as const;

/** A movement's counts in one scope. */
function countMovement(counts: Counts, scope: ScopeKey, m: Movement): void {
	add(counts, scope, "mrr", m.mrr);
	add(counts, scope, "subscribers", m.subscribers);
	switch (m.kind) {
		case "new":
			add(counts, scope, "newMrr", m.mrr);
			add(counts, scope, "newSubscribers", 1);
			break;
		case "expansion":
			add(counts, scope, "expansionMrr", m.mrr);
			break;
		case "contraction":
			add(counts, scope, "contractionMrr", -m.mrr);
			break;
		case "churned":
			add(counts, scope, "churnedMrr", -m.mrr);
			add(counts, scope, "churnedSubscribers", 1);
			add(counts, scope, CHURN_COUNT[m.cause ?? "unsubscribed"], 1);
			break;
		case "reactivated":
			add(counts, scope, "reactivatedMrr", m.mrr);
			add(counts, scope, "reactivatedSubscribers", 1);
			break;
	}
}

/** A contribution seen by MID: its MID stands where its product does, so a MID's figures move as a product's do. */
function byMid(contribution: Contribution | null): Contribution | null {
	if (!contribution) return null;
	return contribution.midId === undefined ? { ...contribution, standing: "none" } : { ...contribution, productId: contribution.midId };
}

const isEmpty = (counts: Counts) => Object.keys(counts).length === 0;

/** The scopes a thing of a product and MID is counted in. */
const scopesOf = (productId: number, midId: number): ScopeKey[] => ["all", `p${productId}`, `m${midId}`];

/**
 * What a customer's update from `before` (its last counted contribution, null: none yet) to `after` counts, on the day
 * of `at`; null when nothing moved. `losesRenewal`: a lapse loses the renewal being tried (a suspension; an unsubscribe
 * while retried).
 */
export function customerEntry(
	accountId: number,
	before: Contribution | null,
	after: Contribution,
	at: Date,
	losesRenewal = false,
): MetricsEntry | null {
	const counts: Counts = {};
	for (const m of movementsBetween(before, after)) countMovement(counts, m.productId === "all" ? "all" : `p${m.productId}`, m);
	for (const m of movementsBetween(byMid(before), byMid(after)!)) if (m.productId !== "all") countMovement(counts, `m${m.productId}`, m);
	if (losesRenewal && before?.standing === "subscriber" && after.standing === "lapsed")
		for (const scope of scopesOf(before.productId, before.midId ?? after.midId ?? 0)) add(counts, scope, "renewalsLost", 1);
	if (isEmpty(counts)) return null;
	return { accountId, currency: after.currency, day: dayOf(at), counts };
}

/** Whether a customer's renewal is being retried: a decline in its period already. */
export const inRecovery = (customer: Parameters<typeof firstDecline>[0]) => !firstDecline(customer);

/** The renewal figures of one try of a period. */
function renewalCounts(renewalTry: RenewalTry | undefined, status: string): DayCount[] {
	const approved = status === "APPROVED";
	if (renewalTry === "first" && status !== "ERROR")
		return approved ? ["renewalsAttempted", "renewalsApprovedFirstTry"] : ["renewalsAttempted"];
	if (!approved) return [];
	if (renewalTry === "retry") return ["renewalsRecoveredByRetries"];
	return renewalTry === "card_update" ? ["renewalsRecoveredByCardUpdate"] : [];
}

const VOLUME_COUNT = { gross: "grossVolume", refunds: "refunds", chargebacks: "chargebacks" } as const;

/** What a transaction counts: its volume, and a renewal try's figures; null when nothing (a hold, a failed attempt). */
export function transactionEntry(
	tx: Pick<TransactionDoc, "accountId" | "currency" | "productId" | "midId" | "type" | "status" | "amount" | "billed"> & {
		renewalTry?: RenewalTry;
	},
	at: Date,
): MetricsEntry | null {
	const counts: Counts = {};
	const volume = volumeOf(tx);
	const renewal = renewalCounts(tx.renewalTry, tx.status);
	const usage = volume?.figure === "gross" ? usageShareOf(tx.billed, volume.amount) : 0;
	for (const scope of scopesOf(tx.productId, tx.midId)) {
		if (volume) add(counts, scope, VOLUME_COUNT[volume.figure], volume.amount);
		if (usage) add(counts, scope, "usageVolume", usage);
		for (const count of renewal) add(counts, scope, count, 1);
	}
	return isEmpty(counts) ? null : { accountId: tx.accountId, currency: tx.currency, day: dayOf(at), counts };
}

/** A dispute opened on a charge: its amount, shown in volume but never subtracted. */
export function disputeEntry(
	charge: Pick<TransactionDoc, "accountId" | "currency" | "productId" | "midId">,
	amount: number,
	at: Date,
): MetricsEntry | null {
	if (amount <= 0) return null;
	const counts: Counts = {};
	for (const scope of scopesOf(charge.productId, charge.midId)) add(counts, scope, "disputes", amount);
	return { accountId: charge.accountId, currency: charge.currency, day: dayOf(at), counts };
}

/** The outbox event details that carry an entry, if any: spread into the event's details. */
export const carrying = (entry: MetricsEntry | null) => (entry ? { metrics: entry } : {});
