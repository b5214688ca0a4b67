// How the ledger decides an operation it holds: ask the processor once, then
// record the outcome, hold the operation for the buyer's challenge, or, on an
// error, ask at once whether money moved.
import { type AwaitingBuyer, OUTCOME_UNKNOWN_REASON, type PaymentOutcome } from "../../../shared/contracts/payments";
import type { ChallengeAsked, ConnectorOutcome } from "../connectors/connector";
import type { OperationDoc } from "../models";
import type { Decision, Resumption } from "./ledger";
import { awaitBuyer, failed, failedOutcome, giveUp, type LedgerContext, record, remember } from "./ledger-writes";

/** `takenOver`: another call recorded it and died; what it may have done at the processor is looked up first. */
export async function decideOwned(
	ctx: LedgerContext,
	mine: OperationDoc,
	decision: Decision<ConnectorOutcome | ChallengeAsked>,
	takenOver: boolean,
	challengeUntil?: Date,
): Promise<PaymentOutcome | AwaitingBuyer> {
	if (takenOver) {
		const settled = await settleFound(ctx, mine, await decision.resume(mine));
		if (settled) return settled;
	}
	const asked = await askProcessor(ctx, mine, decision);
	let outcome = asked.outcome;
	if (outcome.status === "AWAITING_BUYER") {
		if (challengeUntil) return awaitBuyer(ctx, asked.mine, outcome, challengeUntil);
		// Only a first payment may ask the buyer: anything else asking is a connector's bug, and moved no money.
		outcome = { status: "ERROR", reference: outcome.reference, reason: "processor_error", hardDecline: false };
	}
	if (outcome.status === "ERROR") return settleError(ctx, asked.mine, decision, outcome);
	return record(ctx, asked.mine, outcome);
}

/** The processor's answer, and the operation as it now is (with the reference the connector remembered, if any). */
async function askProcessor(
	ctx: LedgerContext,
	mine: OperationDoc,
	decision: Decision<ConnectorOutcome | ChallengeAsked>,
): Promise<{ mine: OperationDoc; outcome: ConnectorOutcome | ChallengeAsked }> {
	let current = mine;
	try {
		const outcome = await decision.decide(async reference => {
			current = await remember(ctx, current, reference);
		});
		return { mine: current, outcome };
	} catch (err) {
		ctx.threw(err as Error);
		return { mine: current, outcome: { status: "ERROR", reference: null, reason: "processor_error", hardDecline: false } };
	}
}

/**
 * What a look-up found at the processor, recorded: its outcome; or, when the processor cannot tell now, the record stays
 * (looked up later) and the caller is told the outcome is unknown. null: nothing moved (the operation is left as it is).
 */
export async function settleFound(ctx: LedgerContext, mine: OperationDoc, found: ConnectorOutcome | null): Promise<PaymentOutcome | null> {
	if (found === null) return null;
	if (found.status !== "ERROR") return record(ctx, mine, found);
	await giveUp(ctx, mine, false);
	return failed(OUTCOME_UNKNOWN_REASON);
}

/**
 * An error: whether money moved is asked at once. Nothing moved: the key may be tried again (the error's reason is the
 * answer). A request that never reached the processor, with nothing remembered before it, moved nothing: no lookup,
 * which the same outage would fail and leave the outcome unknown.
 */
async function settleError(ctx: LedgerContext, mine: OperationDoc, decision: Resumption, error: ConnectorOutcome): Promise<PaymentOutcome> {
	const nothingMoved = error.neverSent === true && mine.reference === null;
	if (!nothingMoved) {
		const found = await decision.resume(mine).catch(() => failedOutcome);
		const settled = await settleFound(ctx, mine, found);
		if (settled) return settled;
	}
	await giveUp(ctx, mine, true);
	return failed(error.reason ?? "processor_unavailable");
}
