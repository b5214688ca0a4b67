// The account's now as the metrics and usage read it: the real time, or a sandbox
// account's test clock once moved ahead of it (billing's account-time.ts
// keeps the clocks; docs/api.md#the-accounts-now). A metrics or usage node
// keeps the clocks it knows: the first read of an account asks billing once
// (billing.clockOf), and every move a billing node makes is told to every
// metrics and usage node before the clock run answers (metrics.clockMoved,
// usage.clockMoved), so a node
// started after a move asks and gets the moved clock, and one running during
// a move hears it. A clock only moves forward: what is heard and what is
// asked are kept by their maximum, whatever order they arrive in. While
// billing cannot answer, an account not heard of reads at the real time, and
// is asked again at its next read.

import type { ActionParams, Context } from "moleculer";

/** `clockOf`: billing.clockOf's answer (the account's now on billing: the real time unless its clock is ahead). */
export function createAccountNow(clockOf: (accountId: number) => Promise<Date>, realNow: () => Date) {
	/** Per account, its clock in ms (0: never moved). */
	const known = new Map<number, number>();
	const heard = (accountId: number, at: Date) => known.set(accountId, Math.max(known.get(accountId) ?? 0, at.getTime()));

	return {
		/** The account's now: the real time, or its test clock when moved ahead of it. */
		async now(accountId: number): Promise<Date> {
			if (!known.has(accountId)) {
				const clock = await clockOf(accountId).catch(() => null);
				if (clock) heard(accountId, clock);
			}
			return new Date(Math.max(realNow().getTime(), known.get(accountId) ?? 0));
		},
		/** A billing node moved the account's clock (metrics.clockMoved). */
		heard,
	};
}

export type AccountNow = ReturnType<typeof createAccountNow>;

/** The action a billing node tells a clock's move by (metrics.clockMoved, usage.clockMoved): the service keeps its clocks as `deps.clocks`. */
export function clockMovedAction(params: object) {
	return {
		params: params as ActionParams,
		handler(this: { deps?: { clocks: AccountNow } }, ctx: Context<{ accountId: number; at: string }>) {
			this.deps?.clocks.heard(ctx.params.accountId, new Date(ctx.params.at));
			return { heard: true as const };
		},
	};
}
