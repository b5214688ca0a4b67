// The account's now: the time an account bills and dates at (docs/api.md#the-accounts-now).
// It is the real time, except in a sandbox account whose test clock was moved
// ahead: there it is the clock's time, frozen until the real time passes it,
// as Stripe's test clocks freeze time. Renewals, retries, changes and their
// proration, pauses and resumes, coupons' periods, disputes and the dates of
// transactions, invoices, credit notes, emails and metrics follow it; what a
// person or a network waits on (sessions, a quote's 15 minutes, leases, rate
// limits, webhook and email retries) keeps the real time (`deps.now`).
//   - The clock is one record per account in test_clocks: `at`, which only
//     moves forward ($max), and the lease of the clock run that moves it
//     (renewals/clock-run.ts), so one run at a time moves an account's time.
//   - Every billing node keeps the clocks it has read. A run moves its node's
//     copy step by step, and tells every other billing node where it ended
//     before it answers (billing.clockMoved), so no node dates anything of the
//     account earlier afterwards. Every metrics node is told too
//     (metrics.clockMoved), and a metrics node asks a clock it has not heard
//     of once (billing.clockOf).
import { leaseFree, newLease, raw } from "../../shared/persistence";
import { pollUntil } from "../../shared/poll";
import type { BillingDb } from "./models";

/** How far ahead of now a run, and so a sandbox's test clock, may go (shared with the metrics service's reads). */
export { MAX_RUN_AHEAD_MS } from "../../shared/contracts/billing";

const WAIT_POLL_MS = 50;

export interface AccountClocks {
	/** The account's now: the real time, or its test clock when moved ahead of it. */
	now(accountId: number): Promise<Date>;
	/** The clock moved to `at` (never backwards): written, and kept on this node. */
	moved(accountId: number, at: Date): Promise<void>;
	/** Another node moved it (billing.clockMoved). */
	heard(accountId: number, at: Date): void;
	/**
	 * Runs `run` while holding the account's clock-run lease, waiting for another run of the account to end first (or
	 * for its lease to run out: its node died); `renew` keeps the lease for another `leaseMs`.
	 */
	exclusively<T>(accountId: number, owner: string, run: (renew: () => Promise<void>) => Promise<T>): Promise<T>;
}

/** `leaseMs`: how long a clock run holds the clock without a step, as a renewal holds its customers (RENEWAL_LEASE_MS). */
export function createAccountClocks(db: Pick<BillingDb, "testClocks">, realNow: () => Date, leaseMs: number): AccountClocks {
	/** Per account, its clock in ms (0: never moved). */
	const known = new Map<number, number>();
	const heard = (accountId: number, at: Date) => known.set(accountId, Math.max(known.get(accountId) ?? 0, at.getTime()));

	async function clockOf(accountId: number): Promise<number> {
		const cached = known.get(accountId);
		if (cached !== undefined) return cached;
		const doc = await db.testClocks.findById(accountId, { at: 1 }).lean();
		heard(accountId, doc?.at ?? new Date(0));
		return known.get(accountId)!;
	}

	const lease = (owner: string) => ({ run: newLease(owner, realNow(), leaseMs) });

	return {
		async now(accountId) {
			return new Date(Math.max(realNow().getTime(), await clockOf(accountId)));
		},
		async moved(accountId, at) {
			await raw(db.testClocks).updateOne({ _id: accountId }, { $max: { at } }, { upsert: true });
			heard(accountId, at);
		},
		heard,
		async exclusively(accountId, owner, run) {
			await raw(db.testClocks).updateOne({ _id: accountId }, { $setOnInsert: { at: new Date(0), run: null } }, { upsert: true });
			const claim = () => raw(db.testClocks).updateOne({ _id: accountId, ...leaseFree("run", realNow()) }, { $set: lease(owner) });
			await pollUntil(async () => ((await claim()).modifiedCount === 1 ? true : undefined), { intervalMs: WAIT_POLL_MS });
			const renew = async () => {
				await raw(db.testClocks).updateOne({ _id: accountId, "run.owner": owner }, { $set: lease(owner) });
			};
			try {
				return await run(renew);
			} finally {
				await raw(db.testClocks).updateOne({ _id: accountId, "run.owner": owner }, { $set: { run: null } });
			}
		},
	};
}
