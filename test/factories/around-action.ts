// A middleware for the services of the test's own process that runs `around`
// in place of one action, handing it the action itself: the fault tests kill
// a caller's process around a real action this way.
import type { Context, Middleware } from "moleculer";

export type ActionHandler = (ctx: Context) => Promise<unknown>;

export function aroundAction<P>(
	name: string,
	actionName: string,
	around: (ctx: Context<P>, action: ActionHandler) => Promise<unknown>,
): Middleware {
	return {
		name,
		localAction(next, action) {
			if (action.name !== actionName) return next;
			const handler = next as unknown as ActionHandler;
			return (ctx: Context<P>) => around(ctx, handler);
		},
	} as Middleware;
}
