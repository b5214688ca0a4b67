// Moleculer's Timeout middleware rejects a caller whose remote request took too
// long, but the request's own promise stays pending when its answer never
// comes (NATS was down). Request tracking then waits for it at shutdown (30 s)
// and keeps it in memory. This innermost middleware settles it at the same
// deadline, so a node stops promptly after an outage.
import { Errors, type Middleware } from "moleculer";

export const SettleTimedOutRequests: Middleware = {
	name: "SettleTimedOutRequests",
	remoteAction(next: (ctx: never) => Promise<unknown>) {
		return function settleTimedOut(ctx: { options: { timeout?: number }; action?: { name: string }; nodeID?: string; id: string }) {
			const ms = ctx.options.timeout;
			if (!ms || ms <= 0) return next(ctx as never);
			let timer: NodeJS.Timeout | undefined;
			const deadline = new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Errors.RequestTimeoutError({ action: ctx.action?.name, nodeID: ctx.nodeID })), ms);
			});
			return Promise.race([next(ctx as never), deadline]).finally(() => clearTimeout(timer));
		};
	},
} as Middleware;
