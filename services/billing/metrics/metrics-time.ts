// When a change counts in the metrics (docs/metrics.md#days-and-keys): the
// time billing makes it, except in a sandbox account whose test clock was
// moved ahead, whose changes count at the clock's time (a renewal the clock
// made, at the time it fell due), so a merchant can watch months go by in
// minutes. Transactions keep the real time they were made. The clock is the
// furthest `advanceTo` asked (metrics_index), known to every billing node:
// read once, then kept up to date by the event the node that moved it sends.
import { raw } from "../../../shared/persistence";
import type { BillingDb } from "../models";

/**
 * How far ahead of now a run, and so a sandbox's test clock, may go (renewals/renewal-runs.ts): two years, so a yearly
 * product renews twice. Nothing is counted later than that, so a metrics read never looks further.
 */
export const MAX_RUN_AHEAD_MS = 731 * 24 * 3_600_000;

/** The event a node sends the billing nodes when it moved an account's clock: `{accountId, at}`. */
export const SANDBOX_CLOCK_MOVED = "billing.sandboxClockMoved";

export function createSandboxClocks(db: Pick<BillingDb, "metricsIndex">) {
	/** Per account, the clock in ms (0: never moved). */
	const known = new Map<number, number>();
	const heard = (accountId: number, at: Date) => known.set(accountId, Math.max(known.get(accountId) ?? 0, at.getTime()));
	return {
		/** The account's test clock, 0 when never moved. */
		async of(accountId: number): Promise<number> {
			const cached = known.get(accountId);
			if (cached !== undefined) return cached;
			const doc = await db.metricsIndex.findById(accountId, { clock: 1 }).lean();
			heard(accountId, doc?.clock ?? new Date(0));
			return known.get(accountId)!;
		},
		/** The clock moved to `at` (advanceClock): kept, before anything it runs is counted. */
		async moved(accountId: number, at: Date): Promise<void> {
			await raw(db.metricsIndex).updateOne({ _id: accountId }, { $max: { clock: at } }, { upsert: true });
			heard(accountId, at);
		},
		/** Another node moved it. */
		heard,
	};
}

export type SandboxClocks = ReturnType<typeof createSandboxClocks>;

/**
 * The time a change of the account counts at: now, or a sandbox's clock when moved ahead (a production account's
 * never is: only sandbox accounts have one); `due`, a renewal's time, when the clock made it.
 */
export async function metricsTime(
	deps: { now(): Date; sandboxClocks: SandboxClocks },
	accountId: number,
	due?: Date | null,
): Promise<Date> {
	const now = deps.now().getTime();
	const clock = await deps.sandboxClocks.of(accountId);
	// A renewal counts when it fell due, never later than the clock (which ran it) nor earlier than now.
	const at = due && clock > now ? Math.min(Math.max(due.getTime(), now), clock) : Math.max(now, clock);
	return new Date(at);
}
