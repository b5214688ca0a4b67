// The ledger's writes to an operation's document. Every one is a
// compare-and-set on the operation still being undecided, held by the same
// call (`decidingUntil`) and with the processor object that call knows of
// (`reference`), so a call that was taken over cannot write over the call that
// took it over, nor record or answer an outcome of its own; and a takeover
// that read the operation before its object was remembered fails, instead of
// looking up nothing and making a second object beside it.
import { type AwaitingBuyer, OPERATION_IN_PROGRESS_REASON, type PaymentOutcome } from "../../../shared/contracts/payments";
import { raw } from "../../../shared/persistence";
import type { ChallengeAsked, ConnectorOutcome } from "../connectors/connector";
import type { OperationDoc, PaymentsDb } from "../models";

/** What the ledger's steps share: the database, the clock, and who is told of a connector call that threw. */
export interface LedgerContext {
	db: PaymentsDb;
	now: () => Date;
	/** Told of a connector call that threw instead of answering (a bug, or our database): it answers ERROR. */
	threw: (err: Error) => void;
}

export const failed = (reason: string): PaymentOutcome => ({
	status: "ERROR",
	processorTransactionId: null,
	processorReference: null,
	reason,
	hardDecline: false,
});

/** What a connector call that threw answers. */
export const failedOutcome: ConnectorOutcome = { status: "ERROR", reference: null, reason: "processor_unavailable", hardDecline: false };

export const later = (ctx: LedgerContext, ms: number) => new Date(ctx.now().getTime() + ms);

/** The answer while the buyer is at the challenge; null once decided, or when no challenge was asked. */
export const awaitingOf = (doc: OperationDoc): AwaitingBuyer | null =>
	doc.awaiting && !doc.outcome
		? { status: "AWAITING_BUYER", challengeUrl: doc.awaiting.challengeUrl, until: new Date(doc.awaiting.until).toISOString() }
		: null;

/** The filter that finds the operation only while it is undecided, still held by `mine`'s call, and as that call knows it. */
export const heldBy = (mine: OperationDoc) => ({
	_id: mine._id,
	outcome: null,
	decidingUntil: mine.decidingUntil,
	reference: mine.reference,
});

/** Takes over an undecided operation whose time is up (compare-and-set): the taken document, or null. */
export async function takeOver(ctx: LedgerContext, previous: OperationDoc, ms: number): Promise<OperationDoc | null> {
	if (previous.outcome || previous.decidingUntil.getTime() > ctx.now().getTime()) return null;
	const decidingUntil = later(ctx, ms);
	const taken = await ctx.db.operations.updateOne(heldBy(previous), { $set: { decidingUntil } });
	return taken.modifiedCount === 1 ? { ...previous, decidingUntil } : null;
}

/**
 * Writes the outcome once, with a transaction id of ours, while `mine`'s call still holds the operation. Taken over
 * meanwhile: the outcome recorded by the call that took it over, or, while there is none, OPERATION_IN_PROGRESS (an
 * unknown outcome: the key is asked again later), never this call's own, which the ledger does not hold.
 */
export async function record(ctx: LedgerContext, mine: OperationDoc, outcome: ConnectorOutcome): Promise<PaymentOutcome> {
	const { db } = ctx;
	const recorded: PaymentOutcome = {
		status: outcome.status,
		processorTransactionId: mine.transactionId,
		processorReference: outcome.reference,
		reason: outcome.reason,
		hardDecline: outcome.hardDecline,
		...(outcome.authentication !== undefined ? { authentication: outcome.authentication } : {}),
		...(outcome.networkTransactionId ? { networkTransactionId: outcome.networkTransactionId } : {}),
	};
	const done = await raw(db.operations).updateOne(heldBy(mine), { $set: { outcome: recorded } });
	if (done.modifiedCount === 1) return recorded;
	return (await db.operations.findById(mine._id).lean())?.outcome ?? failed(OPERATION_IN_PROGRESS_REASON);
}

/**
 * Gives an undecided operation up. `forget`: nothing moved for it (its processor said so), so the key is free again;
 * else the record stays with what was remembered, free to be taken over at once and looked up.
 */
export async function giveUp(ctx: LedgerContext, mine: OperationDoc, forget: boolean): Promise<void> {
	if (forget) await ctx.db.operations.deleteOne(heldBy(mine));
	else await ctx.db.operations.updateOne(heldBy(mine), { $set: { decidingUntil: ctx.now() } });
}

/** Keeps the processor's reference for the object being made, so a call that takes over can look it up. */
export async function remember(ctx: LedgerContext, mine: OperationDoc, reference: string): Promise<OperationDoc> {
	const kept = await ctx.db.operations.updateOne(heldBy(mine), { $set: { reference } });
	if (kept.modifiedCount !== 1) throw new Error("the operation was taken over while it was being decided");
	return { ...mine, reference };
}

/** The buyer is asked for a challenge: the operation is held for it until `challengeUntil`; a takeover meanwhile wins. */
export async function awaitBuyer(
	ctx: LedgerContext,
	mine: OperationDoc,
	asked: ChallengeAsked,
	challengeUntil: Date,
): Promise<PaymentOutcome | AwaitingBuyer> {
	const awaiting = { challengeUrl: asked.challengeUrl, until: challengeUntil };
	const held = await ctx.db.operations.updateOne(heldBy(mine), {
		$set: { reference: asked.reference, awaiting, decidingUntil: challengeUntil },
	});
	if (held.modifiedCount === 1) return awaitingOf({ ...mine, awaiting })!;
	const current = await ctx.db.operations.findById(mine._id).lean();
	return current?.outcome ?? (current && awaitingOf(current)) ?? failed(OPERATION_IN_PROGRESS_REASON);
}
