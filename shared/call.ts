// Calls and events between services, typed by shared/contracts: the action's
// name picks its parameters and its answer, so caller and callee cannot drift.
import type { CallingOptions, Context, ServiceBroker } from "moleculer";
import type { ActionName, Actions, EventName, Events } from "./contracts";

type Caller = Pick<ServiceBroker, "call"> | Pick<Context, "call">;

/** A call bound to a broker: what a service hands its domain code as a dependency. */
export type Call = <A extends ActionName>(
	action: A,
	params: Actions[A]["params"],
	options?: CallingOptions,
) => Promise<Actions[A]["result"]>;

export function callsThrough(caller: Caller): Call {
	return (action, params, options) => call(caller, action, params, options);
}

export function call<A extends ActionName>(
	caller: Caller,
	action: A,
	params: Actions[A]["params"],
	options?: CallingOptions,
): Promise<Actions[A]["result"]> {
	return (caller.call as (action: string, params: unknown, options?: CallingOptions) => Promise<Actions[A]["result"]>)(
		action,
		params,
		options,
	);
}

/** To one node of each service that listens (balanced). */
export function emit<E extends EventName>(
	sender: Pick<Context, "emit"> | Pick<ServiceBroker, "emit">,
	event: E,
	payload: Events[E],
): Promise<void> {
	return (sender.emit as (event: string, payload: unknown) => Promise<void>)(event, payload);
}

/** To every node that listens. */
export function broadcast<E extends EventName>(
	sender: Pick<Context, "broadcast"> | Pick<ServiceBroker, "broadcast">,
	event: E,
	payload: Events[E],
): Promise<void> {
	return (sender.broadcast as (event: string, payload: unknown) => Promise<void>)(event, payload);
}

/** Whether an answer is the callee's `{error}` value. */
export function isFailure<T>(answer: T): answer is Extract<T, { error: unknown }> {
	return typeof answer === "object" && answer !== null && "error" in answer;
}
