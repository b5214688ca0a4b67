// The ledger: every gateway operation is recorded under our idempotency key
// before its gateway is asked, and decided once. A repeat of the key answers
// the first outcome. A call that died while deciding is taken over once its
// time is up: what it remembered of the gateway's object is looked up first,
// so an answer that was lost is found again instead of charging twice.
// A first payment may wait for the buyer's challenge (3-D Secure): it is then
// held until the challenge's end (`awaiting`), and read again afterwards
// (docs/authentication.md).
import {
	type AwaitingBuyer,
	OPERATION_IN_PROGRESS_REASON,
	OUTCOME_UNKNOWN_REASON,
	type PaymentOutcome,
} from "../../shared/contracts/payments";
import { insertOnce, raw } from "../../shared/persistence";
import { pollUntil } from "../../shared/poll";
import type { ChallengeAsked, ConnectorOutcome, Remember } from "./connectors/connector";
import type { OperationDoc, PaymentsDb } from "./models";

export type OperationRecord = Omit<OperationDoc, "_id" | "reference" | "outcome" | "awaiting" | "decidingUntil" | "createdAt">;

export const failed = (reason: string): PaymentOutcome => ({
	status: "ERROR",
	processorTransactionId: null,
	processorReference: null,
	reason,
	hardDecline: false,
});

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
	/** A first payment: as `once`, but the gateway may ask for a challenge, which holds the operation until `until`. */
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
}

/** `threw`: told of a connector call that threw instead of answering (a bug, or our database): it answers ERROR. */
const failedOutcome: ConnectorOutcome = { status: "ERROR", reference: null, reason: "processor_unavailable", hardDecline: false };

export function createLedger(db: PaymentsDb, now: () => Date = () => new Date(), threw: (err: Error) => void = () => undefined): Ledger {
	const until = (ms: number) => new Date(now().getTime() + ms);
	const awaitingOf = (doc: OperationDoc): AwaitingBuyer | null =>
		doc.awaiting && !doc.outcome
			? { status: "AWAITING_BUYER", challengeUrl: doc.awaiting.challengeUrl, until: new Date(doc.awaiting.until).toISOString() }
			: null;

	/** Takes over an undecided operation whose time is up (compare-and-set): the taken document, or null. */
	async function takeOver(previous: OperationDoc, ms: number): Promise<OperationDoc | null> {
		if (previous.outcome || previous.decidingUntil.getTime() > now().getTime()) return null;
		const decidingUntil = until(ms);
		const taken = await db.operations.updateOne(
			{ _id: previous._id, outcome: null, decidingUntil: previous.decidingUntil },
			{ $set: { decidingUntil } },
		);
		return taken.modifiedCount === 1 ? { ...previous, decidingUntil } : null;
	}

	/** Writes the outcome once, with a transaction id of ours; a concurrent writer's outcome wins. */
	async function record(mine: OperationDoc, outcome: ConnectorOutcome): Promise<PaymentOutcome> {
		const id = await db.ids.next();
		// Indexed before it is recorded: an index entry without an outcome finds nothing, never the wrong operation.
		await insertOnce(db.transactions, { _id: id, operation: mine._id });
		const recorded: PaymentOutcome = {
			status: outcome.status,
			processorTransactionId: id,
			processorReference: outcome.reference,
			reason: outcome.reason,
			hardDecline: outcome.hardDecline,
			...(outcome.authentication !== undefined ? { authentication: outcome.authentication } : {}),
			...(outcome.networkTransactionId ? { networkTransactionId: outcome.networkTransactionId } : {}),
		};
		const done = await raw(db.operations).updateOne({ _id: mine._id, outcome: null }, { $set: { outcome: recorded } });
		if (done.modifiedCount === 1) return recorded;
		return (await db.operations.findById(mine._id).lean())?.outcome ?? recorded;
	}

	/**
	 * Gives an undecided operation up. `forget`: nothing moved for it (its gateway said so), so the key is free again;
	 * else the record stays with what was remembered, free to be taken over at once and looked up.
	 */
	async function giveUp(mine: OperationDoc, forget: boolean): Promise<void> {
		const held = { _id: mine._id, outcome: null, decidingUntil: mine.decidingUntil };
		if (forget) await db.operations.deleteOne(held);
		else await db.operations.updateOne(held, { $set: { decidingUntil: now() } });
	}

	/** The buyer is asked for a challenge: the operation is held for it until `challengeUntil`; a takeover meanwhile wins. */
	async function awaitBuyer(mine: OperationDoc, asked: ChallengeAsked, challengeUntil: Date): Promise<PaymentOutcome | AwaitingBuyer> {
		const awaiting = { challengeUrl: asked.challengeUrl, until: challengeUntil };
		const held = await db.operations.updateOne(
			{ _id: mine._id, outcome: null, decidingUntil: mine.decidingUntil },
			{ $set: { reference: asked.reference, awaiting, decidingUntil: challengeUntil } },
		);
		if (held.modifiedCount === 1) return awaitingOf({ ...mine, awaiting })!;
		const now = await db.operations.findById(mine._id).lean();
		return now?.outcome ?? (now && awaitingOf(now)) ?? failed(OPERATION_IN_PROGRESS_REASON);
	}

	/** `takenOver`: another call recorded it and died; what it may have done at the gateway is looked up first. */
	async function decideOwned(
		mine: OperationDoc,
		decision: Decision<ConnectorOutcome | ChallengeAsked>,
		takenOver: boolean,
		challengeUntil?: Date,
	): Promise<PaymentOutcome | AwaitingBuyer> {
		if (takenOver) {
			const found = await decision.resume(mine);
			if (found && found.status !== "ERROR") return record(mine, found);
			if (found?.status === "ERROR") {
				await giveUp(mine, false);
				return failed(OUTCOME_UNKNOWN_REASON);
			}
		}
		const remember = async (reference: string) => {
			const kept = await db.operations.updateOne(
				{ _id: mine._id, outcome: null, decidingUntil: mine.decidingUntil },
				{ $set: { reference } },
			);
			if (kept.modifiedCount !== 1) throw new Error("the operation was taken over while it was being decided");
			mine = { ...mine, reference };
		};
		let outcome: ConnectorOutcome | ChallengeAsked;
		try {
			outcome = await decision.decide(remember);
		} catch (err) {
			threw(err as Error);
			outcome = { status: "ERROR", reference: null, reason: "processor_error", hardDecline: false };
		}
		if (outcome.status === "AWAITING_BUYER") {
			if (challengeUntil) return awaitBuyer(mine, outcome, challengeUntil);
			// Only a first payment may ask the buyer: anything else asking is a connector's bug, and moved no money.
			outcome = { status: "ERROR", reference: outcome.reference, reason: "processor_error", hardDecline: false };
		}
		// An error: whether money moved is asked at once. Nothing moved: the key may be tried again. The gateway cannot tell
		// now: the record stays, its object remembered, and the caller is told the outcome is unknown (looked up later).
		if (outcome.status === "ERROR") {
			const found = await decision.resume(mine).catch(() => failedOutcome);
			if (found && found.status !== "ERROR") return record(mine, found);
			await giveUp(mine, found === null);
			return failed(found ? OUTCOME_UNKNOWN_REASON : (outcome.reason ?? "processor_unavailable"));
		}
		return record(mine, outcome);
	}

	async function run(
		key: string,
		fields: OperationRecord,
		decision: Decision<ConnectorOutcome | ChallengeAsked>,
		challengeUntil?: Date,
	): Promise<PaymentOutcome | AwaitingBuyer> {
		const fresh: OperationDoc = {
			_id: key,
			...fields,
			reference: null,
			outcome: null,
			awaiting: null,
			decidingUntil: until(decision.decidingMs),
			createdAt: now(),
		};
		if (await insertOnce(db.operations, fresh)) return decideOwned(fresh, decision, false, challengeUntil);
		const waited = await pollUntil<PaymentOutcome | AwaitingBuyer | OperationDoc | "gone">(
			async () => {
				const previous = await db.operations.findById(key).lean();
				if (!previous) return "gone";
				if (previous.outcome) return previous.outcome;
				// The buyer is at the challenge: the same answer again (a second tab, a repeat).
				const awaiting = awaitingOf(previous);
				if (awaiting && previous.decidingUntil.getTime() > now().getTime()) return awaiting;
				return (await takeOver(previous, decision.decidingMs)) ?? undefined;
			},
			{ intervalMs: 50, timeoutMs: 1000 },
		);
		if (waited === "gone") return run(key, fields, decision, challengeUntil);
		// Still being decided by a live call: the caller tries again later with the same key.
		if (waited === undefined) return failed(OPERATION_IN_PROGRESS_REASON);
		if ("status" in waited) return waited;
		return decideOwned(waited, decision, true, challengeUntil);
	}

	/** Takes over a first payment whose time is up and looks it up; null when no money moved (the key is free again). */
	async function lookUp(previous: OperationDoc, resumption: Resumption | null): Promise<PaymentOutcome | null> {
		if (!resumption) return failed("no_processor");
		const mine = await takeOver(previous, resumption.decidingMs);
		if (!mine) return failed(OPERATION_IN_PROGRESS_REASON);
		const found = await resumption.resume(mine);
		if (found && found.status !== "ERROR") return record(mine, found);
		if (found?.status === "ERROR") {
			await giveUp(mine, false);
			return failed(OUTCOME_UNKNOWN_REASON);
		}
		// Nothing moved: the key is free again.
		await giveUp(mine, true);
		return null;
	}

	return {
		once: (key, fields, decision) => run(key, fields, decision) as Promise<PaymentOutcome>,
		pay: run,

		async afterChallenge(key, readerOf, resumptionOf) {
			const previous = await db.operations.findById(key).lean();
			if (!previous) return null;
			if (previous.outcome) return previous.outcome;
			const awaiting = awaitingOf(previous);
			if (!awaiting || !previous.reference) return failed(OPERATION_IN_PROGRESS_REASON);
			// The challenge's time is over: the buyer's answer comes too late, and the operation is looked up.
			if (new Date(awaiting.until).getTime() <= now().getTime()) return lookUp(previous, await resumptionOf(previous));
			const read = await readerOf(previous);
			if (!read) return failed("no_processor");
			// A read only: two calls at once both read, and the first to record wins (record() is a compare-and-set).
			const found = await read({ ...previous, reference: previous.reference }).catch(() => failedOutcome);
			if (found.status === "AWAITING_BUYER") return awaiting;
			if (found.status === "ERROR") return failed(OUTCOME_UNKNOWN_REASON);
			return record(previous, found);
		},

		async lookup(key, resumptionOf) {
			const previous = await db.operations.findById(key).lean();
			if (!previous) return null;
			if (previous.outcome) return previous.outcome;
			return lookUp(previous, await resumptionOf(previous));
		},

		async operationOf(processorTransactionId) {
			const entry = await db.transactions.findById(processorTransactionId).lean();
			const operation = entry ? await db.operations.findById(entry.operation).lean() : null;
			return operation?.outcome?.processorTransactionId === processorTransactionId ? operation : null;
		},
	};
}
