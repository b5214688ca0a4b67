// What each MID (merchant account) did, by day: sales, declines, refunds,
// disputes and chargebacks, counted in mid_stats under `<midId>:<YYYY-MM-DD>`
// (the day in TIME_ZONE), so a calendar month or the last 30 days is read by
// key (docs/disputes.md#mid-health). Counted after the write that makes the
// thing counted, once per write that happened: a node that dies in between
// misses one count, which a health figure can afford; nothing is ever counted
// twice. The same counts go to the node's metrics (billing.mid.*), which
// Prometheus sums over the nodes.
import type { ServiceBroker } from "moleculer";
import { updateTogether } from "../../../shared/persistence";
import { formatDateTime } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { MidStatsDoc } from "../records/counters";
import type { TransactionDoc } from "../records/transaction";
import { TransactionStatus, TransactionType } from "../states";

/** What is counted per MID and day; amounts in minor units by currency. */
export type MidCount = "sales" | "declined" | "refunds" | "disputes" | "chargebacks";
const AMOUNT_OF: Partial<Record<MidCount, keyof MidStatsDoc>> = {
	sales: "salesAmount",
	refunds: "refundAmount",
	disputes: "disputeAmount",
};

/** YYYY-MM-DD in the service's time zone. */
export const dayOf = (at: Date) => formatDateTime(at).slice(0, 10);

/** YYYY-MM in the service's time zone: the month of the day a sale is counted on, and of a cap's counter (cap-reservations.ts). */
export const monthOf = (at: Date) => dayOf(at).slice(0, 7);

export interface MidCounters {
	count(midId: number, what: MidCount, n: number): void;
}

export function midCounters(broker: ServiceBroker): MidCounters | undefined {
	if (!broker.isMetricsEnabled()) return undefined;
	const names: Record<MidCount, string> = {
		sales: "Approved charges (first charges and renewals)",
		declined: "Declined charges",
		refunds: "Refunds made",
		disputes: "Disputes opened",
		chargebacks: "Disputes lost",
	};
	for (const [what, description] of Object.entries(names)) {
		const name = `billing.mid.${what}`;
		if (!broker.metrics.getMetric(name)) broker.metrics.register({ type: "counter", name, description, labelNames: ["midId"] });
	}
	return { count: (midId, what, n) => broker.metrics.increment(`billing.mid.${what}`, { midId: String(midId) }, n) };
}

/** What a transaction counts as, if anything: holds and failed attempts are not sales, nor declines. */
function countOf(tx: Pick<TransactionDoc, "type" | "status" | "processorTransactionId">): MidCount | null {
	switch (tx.type) {
		case TransactionType.SubscriptionStart:
		case TransactionType.Renewal:
			if (tx.status === TransactionStatus.Approved) return "sales";
			// A decline no processor made (no MID could take it, or none is configured) says nothing of the MID.
			return tx.status === TransactionStatus.Declined && tx.processorTransactionId !== null ? "declined" : null;
		case TransactionType.Refunded:
			return "refunds";
		case TransactionType.Chargeback:
			return "chargebacks";
		default:
			return null;
	}
}

/** One thing to add to a MID's day in mid_stats. */
export interface MidStat {
	midId: number;
	what: MidCount;
	at: Date;
	/** Minor units, positive; for the counts that have an amount. */
	amount?: { currency: string; minor: number };
}

/** Counts transactions just written (one command for any number). */
export function countTransactions(deps: Pick<BillingDeps, "db" | "midCounters">, transactions: TransactionDoc[]): Promise<void> {
	return count(
		deps,
		transactions.flatMap(tx => {
			const what = countOf(tx);
			return what ? [{ midId: tx.midId, what, at: tx.timestamp, amount: { currency: tx.currency, minor: Math.abs(tx.amount) } }] : [];
		}),
	);
}

export async function count(deps: Pick<BillingDeps, "db" | "midCounters">, stats: MidStat[]): Promise<void> {
	if (stats.length === 0) return;
	const byDoc = new Map<string, { midId: number; day: string; inc: Record<string, number> }>();
	for (const c of stats) {
		const day = dayOf(c.at);
		const key = `${c.midId}:${day}`;
		const doc = byDoc.get(key) ?? byDoc.set(key, { midId: c.midId, day, inc: {} }).get(key)!;
		doc.inc[c.what] = (doc.inc[c.what] ?? 0) + 1;
		const amountField = AMOUNT_OF[c.what];
		if (amountField && c.amount) {
			const field = `${amountField}.${c.amount.currency}`;
			doc.inc[field] = (doc.inc[field] ?? 0) + c.amount.minor;
		}
		deps.midCounters?.count(c.midId, c.what, 1);
	}
	// With the counts other writes on this node make at once: one command.
	await updateTogether(
		deps.db.midStats,
		[...byDoc].map(([key, doc]) => ({
			updateOne: { filter: { _id: key }, update: { $setOnInsert: { midId: doc.midId, day: doc.day }, $inc: doc.inc }, upsert: true },
		})),
	);
}
