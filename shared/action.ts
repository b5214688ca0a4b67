// The shape of almost every action: validate (the broker's Ajv validator runs
// `params`), call one domain function with the service's deps, map the result.
import type { ActionSchema, Context, Service } from "moleculer";

export function domainAction<Deps, P, R>(
	params: object,
	fn: (deps: Deps, input: P) => Promise<R>,
	map: (result: R) => unknown = result => result,
): ActionSchema<Service & { deps: Deps }> {
	return {
		params: params as ActionSchema["params"],
		async handler(ctx: Context<P>) {
			return map(await fn(this.deps, ctx.params));
		},
	};
}

/** Domain errors (string enums) travel to an orchestrating service as `{error}` values rather than exceptions (shared/contracts). */
export function errorAsValue<T extends object | null, E extends string>(result: T | E): T | { error: E } {
	return typeof result === "string" ? { error: result } : result;
}

/** Reads and other actions safe to run twice: the broker retries them after a timeout or a lost node (moleculer.config.ts). */
export function idempotent<S extends ActionSchema<never>>(action: S): S {
	return { ...action, retryPolicy: { enabled: true } };
}
