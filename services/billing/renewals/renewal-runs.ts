// Renewal runs asked for through the admin API: ops' run at a time of their
// choosing, and a sandbox account's test clock (docs/api.md). Both refuse
// times that depend on the time now, not on the request alone (409).
import { config } from "../../../shared/config";
import { MAX_RUN_AHEAD_MS } from "../account-time";
import { type ClockRunner, runClock } from "./clock-run";
import type { CycleReport } from "./renewal-cycle";

export enum RenewalRunError {
	/** A run's `at` further than MAX_RUN_AHEAD_MS ahead. */
	RunTooFarAhead = "RUN_TOO_FAR_AHEAD",
	/** A test clock's `advanceTo` further than MAX_RUN_AHEAD_MS ahead. */
	ClockTooFarAhead = "CLOCK_TOO_FAR_AHEAD",
	/** The test clock only moves forward: an `advanceTo` before the account's now. */
	ClockBackwards = "CLOCK_BACKWARDS",
	/** A production account has no test clock. */
	NotSandbox = "NOT_SANDBOX",
}

/** This node's renewal cycle and sandbox notices (wiring/background.ts). */
export interface RenewalRuns extends ClockRunner {
	runCycle(options: { at: Date; from?: Date; readFrom?: Date; accountId?: number }): Promise<CycleReport>;
	/** Applies the sandbox's disputes and fraud warnings due by `until` (one account's: its test clock). */
	applySandboxNotices(until: Date, accountId?: number): Promise<void>;
	/** The account's environment (accounts.get); an unknown account is thrown as its 404. */
	environmentOf(accountId: number): Promise<string>;
}

/**
 * How long a caller waits for a run's answer (the actions' timeout): three request timeouts (REQUEST_TIMEOUT_MS), as a
 * read with its retries, since a clock run over months of a sandbox account takes a while. Past it the caller gets 503
 * and the run goes on; a clock call repeated meanwhile waits for it.
 */
export const runTimeoutMs = () => 3 * config().requestTimeoutMs;

// A run goes at most MAX_RUN_AHEAD_MS ahead: further is a typing slip, and would charge each sandbox customer for every
// period up to it.

const tooFarAhead = (at: Date, now: Date) => at.getTime() > now.getTime() + MAX_RUN_AHEAD_MS;

/** Runs the renewal cycle for `at` (default: now). */
export async function runRenewals(runs: RenewalRuns, input: { at?: string }): Promise<CycleReport | RenewalRunError> {
	const now = runs.deps.now();
	const at = input.at ? new Date(input.at) : now;
	if (tooFarAhead(at, now)) return RenewalRunError.RunTooFarAhead;
	return runs.runCycle({ at });
}

/** The sandbox test clock: moves the account's now to `advanceTo`, doing what falls due on the way in time order. */
export async function advanceClock(
	runs: RenewalRuns,
	input: { accountId: number; advanceTo: string },
): Promise<CycleReport | RenewalRunError> {
	if ((await runs.environmentOf(input.accountId)) !== "sandbox") return RenewalRunError.NotSandbox;
	const at = new Date(input.advanceTo);
	if (tooFarAhead(at, runs.deps.now())) return RenewalRunError.ClockTooFarAhead;
	return (await runClock(runs, input.accountId, at)) ?? RenewalRunError.ClockBackwards;
}
