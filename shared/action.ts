// The shape of almost every action: validate (the broker's Ajv validator runs
// `params`), call one domain function with the service's deps, map the result.
import type { ActionSchema, Context, Service } from "moleculer";
import { ApiError, type ApiErrorType } from "./errors";

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

/** What one domain error answers through the gateway: its API error type (the HTTP status, shared/errors.ts) and message. */
export interface ErrorAnswer {
	type: ApiErrorType;
	message: string;
}

/**
 * A service's domain errors (a string enum) and what each answers: one exhaustive table per service, in its errors.ts,
 * so a new error cannot go unmapped (the compiler asks for its row).
 */
export type ErrorTable<E extends string> = Record<E, ErrorAnswer>;

/**
 * The table's errors as the ApiErrors the gateway maps to HTTP: `orFail` throws the one a result is (with `data` for
 * the answer's details), `action` is a domainAction that does so.
 */
export function domainErrors<E extends string>(table: ErrorTable<E>) {
	const orFail = <T>(result: T | E, data?: unknown): T => {
		if (typeof result !== "string" || !Object.hasOwn(table, result)) return result as T;
		const { type, message } = table[result as E];
		throw new ApiError(type, message, data);
	};
	return {
		orFail,
		action: <Deps, P, R>(params: object, fn: (deps: Deps, input: P) => Promise<R | E>) => domainAction(params, fn, orFail),
	};
}
