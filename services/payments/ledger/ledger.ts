// The ledger: every payment operation is recorded under our idempotency key
// before its processor is asked, and decided once. A repeat of the key answers
// the first outcome. A call that died while deciding is taken over once its
// time is up: what it remembered of the processor's object is looked up first,
// so an answer that was lost is found again instead of charging twice.
// A first payment may wait for the buyer's challenge (3-D Secure): it is then
// held until the challenge's end (`awaiting`), and read again afterwards
// (docs/authentication.md).
import {
	type AwaitingBuyer,
	OPERATION_IN_PROGRESS_REASON,
	OUTCOME_UNKNOWN_REASON,
	type PaymentOutcome,
} from "../../../shared/contracts/payments";
import { insertOnce } from "../../../shared/persistence";
import { pollUntil } from "../../../shared/poll";
import type { ChallengeAsked, ConnectorOutcome, Remember } from "../connectors/connector";
import type { OperationDoc, PaymentsDb } from "../models";
import { decideOwned, settleFound } from "./ledger-decide";
import { awaitingOf, failed, failedOutcome, giveUp, type LedgerContext, later, record, takeOver } from "./ledger-writes";

export type OperationRecord = Omit<
	OperationDoc,
	"_id" | "transactionId" | "reference" | "outcome" | "awaiting" | "decidingUntil" | "createdAt"
>;

/** How a connector finds out what a call that died did (null: no money moved for it). */
export interface Resumption {
	resume(operation: OperationDoc): Promise<ConnectorOutcome | null>;
	/** How long a call may take to decide before another call may take it over. */
	decidingMs: number;
}

/** How a connector decides an operation; a first payment's may ask for the buyer's challenge. */
export interface Decision<T = ConnectorOutcome> extends Resumption {
	decide(remember: Remember): Promise<T>;
}

/** How a connector reads what a first payment came to once its challenge ended. */
export type ChallengeReader = (operation: OperationDoc & { reference: string }) => Promise<ConnectorOutcome | ChallengeAsked>;

export interface Ledger {
	once(key: string, record: OperationRecord, decision: Decision): Promise<PaymentOutcome>;
	/** A first payment: as `once`, but the processor may ask for a challenge, which holds the operation until `until`. */
	pay(
		key: string,
		record: OperationRecord,
		decision: Decision<ConnectorOutcome | ChallengeAsked>,
		until: Date,
	): Promise<PaymentOutcome | AwaitingBuyer>;
	/**
	 * A first payment after its challenge: its outcome, or AWAITING_BUYER while the buyer is still at it. Once the
	 * challenge's time is over it is looked up as `lookup` does (`resumptionOf`); null when no money moved.
	 */
	afterChallenge(
		key: string,
		readerOf: (operation: OperationDoc) => Promise<ChallengeReader | null>,
		resumptionOf: (operation: OperationDoc) => Promise<Resumption | null>,
	): Promise<PaymentOutcome | AwaitingBuyer | null>;
	/** The recorded outcome; an undecided operation whose caller died is looked up (never moved again); null when no money moved. */
	lookup(key: string, resumptionOf: (operation: OperationDoc) => Promise<Resumption | null>): Promise<PaymentOutcome | null>;
	/** The operation a transaction id belongs to. */
	operationOf(processorTransactionId: number): Promise<OperationDoc | null>;
	/**
	 * What a repeat of the key answers when no processor can be asked for it now: its recorded outcome, or
	 * OPERATION_IN_PROGRESS while it is undecided (looked up once a processor can be asked); null when the ledger holds
	 * nothing for it.
	 */
	recorded(key: string): Promise<PaymentOutcome | null>;
}

export function createLedger(db: PaymentsDb, now: () => Date = () => new Date(), threw: (err: Error) => void = () => undefined): Ledger {
	const ctx: LedgerContext = { db, now, threw };
	return {
		once: (key, fields, decision) => run(ctx, key, fields, decision) as Promise<PaymentOutcome>,
		pay: (key, fields, decision, challengeUntil) => run(ctx, key, fields, decision, challengeUntil),
		afterChallenge: (key, readerOf, resumptionOf) => afterChallenge(ctx, key, readerOf, resumptionOf),

		async lookup(key, resumptionOf) {
			const previous = await db.operations.findById(key).lean();
			if (!previous) return null;
			if (previous.outcome) return previous.outcome;
			return lookUp(ctx, previous, await resumptionOf(previous));
		},

		async recorded(key) {
			const previous = await db.operations.findById(key).lean();
			if (!previous) return null;
			return previous.outcome ?? failed(OPERATION_IN_PROGRESS_REASON);
		},

		async operationOf(processorTransactionId) {
			const operation = await db.operations.findOne({ transactionId: processorTransactionId }).lean();
			return operation?.outcome?.processorTransactionId === processorTransactionId ? operation : null;
		},
	};
}

/** Records the operation under its key and decides it; a repeat of the key waits for, or takes over, the first call. */
async function run(
	ctx: LedgerContext,
	key: string,
	fields: OperationRecord,
	decision: Decision<ConnectorOutcome | ChallengeAsked>,
	challengeUntil?: Date,
): Promise<PaymentOutcome | AwaitingBuyer> {
	const fresh: OperationDoc = {
		_id: key,
		// Given with the record, not with the outcome: no second write to index it, and a takeover keeps it.
		transactionId: await ctx.db.ids.next(),
		...fields,
		reference: null,
		outcome: null,
		awaiting: null,
		decidingUntil: later(ctx, decision.decidingMs),
		createdAt: ctx.now(),
	};
	if (await insertOnce(ctx.db.operations, fresh)) return decideOwned(ctx, fresh, decision, false, challengeUntil);
	const waited = await pollUntil(() => previousCall(ctx, key, decision.decidingMs), { intervalMs: 50, timeoutMs: 1000 });
	if (waited === "gone") return run(ctx, key, fields, decision, challengeUntil);
	// Still being decided by a live call: the caller tries again later with the same key.
	if (waited === undefined) return failed(OPERATION_IN_PROGRESS_REASON);
	if ("status" in waited) return waited;
	return decideOwned(ctx, waited, decision, true, challengeUntil);
}

/**
 * Where the first call with this key is: gone (its operation was forgotten), decided, at the buyer's challenge,
 * taken over by us (its time was up), or undefined while it is still deciding.
 */
async function previousCall(
	ctx: LedgerContext,
	key: string,
	decidingMs: number,
): Promise<PaymentOutcome | AwaitingBuyer | OperationDoc | "gone" | undefined> {
	const previous = await ctx.db.operations.findById(key).lean();
	if (!previous) return "gone";
	if (previous.outcome) return previous.outcome;
	// The buyer is at the challenge: the same answer again (a second tab, a repeat).
	const awaiting = awaitingOf(previous);
	if (awaiting && previous.decidingUntil.getTime() > ctx.now().getTime()) return awaiting;
	return (await takeOver(ctx, previous, decidingMs)) ?? undefined;
}

/** Takes over a first payment whose time is up and looks it up; null when no money moved (the key is free again). */
async function lookUp(ctx: LedgerContext, previous: OperationDoc, resumption: Resumption | null): Promise<PaymentOutcome | null> {
	if (!resumption) return failed("no_processor");
	const mine = await takeOver(ctx, previous, resumption.decidingMs);
	if (!mine) return failed(OPERATION_IN_PROGRESS_REASON);
	const settled = await settleFound(ctx, mine, await resumption.resume(mine));
	if (settled) return settled;
	// Nothing moved: the key is free again.
	await giveUp(ctx, mine, true);
	return null;
}

async function afterChallenge(
	ctx: LedgerContext,
	key: string,
	readerOf: (operation: OperationDoc) => Promise<ChallengeReader | null>,
	resumptionOf: (operation: OperationDoc) => Promise<Resumption | null>,
): Promise<PaymentOutcome | AwaitingBuyer | null> {
	const previous = await ctx.db.operations.findById(key).lean();
	if (!previous) return null;
	if (previous.outcome) return previous.outcome;
	const awaiting = awaitingOf(previous);
	if (!awaiting || !previous.reference) return failed(OPERATION_IN_PROGRESS_REASON);
	// The challenge's time is over: the buyer's answer comes too late, and the operation is looked up.
	if (new Date(awaiting.until).getTime() <= ctx.now().getTime()) return lookUp(ctx, previous, await resumptionOf(previous));
	const read = await readerOf(previous);
	if (!read) return failed("no_processor");
	// A read only: two calls at once both read, and the first to record wins (record() is a compare-and-set).
	const found = await read({ ...previous, reference: previous.reference }).catch(() => failedOutcome);
	if (found.status === "AWAITING_BUYER") return awaiting;
	if (found.status === "ERROR") return failed(OUTCOME_UNKNOWN_REASON);
	return record(ctx, previous, found);
}
