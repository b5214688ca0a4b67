// Gapless numbers, one sequence per account and kind (docs/invoices.md#numbering).
//
// A number is taken for a key (the transaction's id) by one compare-and-set on
// the sequence document: `last` moves from n to n + 1 and {number: n + 1, key}
// joins `pending`, in the same update. The document is written with `_id` = key
// and a unique (account, sequence), then the pending entry is pulled.
//   - Before taking a number, the sequence is read, then the document: a key
//     with a pending entry gets that entry's number again; a key with a
//     document gets none. Pulls change no `last`, so a compare-and-set that
//     wins saw every pending entry there was: a key is never numbered twice.
//   - A crash after the number is taken leaves its pending entry: the next
//     issue for that key (billing's request again: it keeps each request
//     until invoicing.issue answers) writes the document with that number.
//   - The pull waits a moment for the others of that moment (releaseNumber);
//     invoicing.issue answers once its pulls are done.
//   - A call's documents are looked up together before their numbers are
//     taken (`absentSince`). That look-up stands in for a key's own read only
//     while it came after the sequence was last read from the database (the
//     compare-and-set then proves no other node numbered since) and after
//     this node last wrote that key's document.
// So every number given is used once, across nodes, retries and crashes.
// Billing's requests reach an account's numbers on one node (the shard
// strategy, invoicing.service.ts), where they are taken one at a time: the
// compare-and-set is lost only while nodes join or leave.

import type { DocumentKind } from "../../shared/contracts/invoicing";
import { perObject } from "../../shared/group-commit";
import { updateLater } from "../../shared/persistence";
import type { InvoicingDb } from "./models";

export type { DocumentKind };

export const sequenceKey = (accountId: number, kind: DocumentKind) => `${accountId}:${kind}`;

/** The number as printed: `<prefix>-<year>-<6 digits>` (more digits past 999,999). */
export const formatNumber = (prefix: string, year: number, sequence: number) => `${prefix}-${year}-${String(sequence).padStart(6, "0")}`;

export interface Numbered {
	sequence: number;
}

interface NumberingDeps {
	db: Pick<InvoicingDb, "documentSequences">;
	now: () => Date;
	/** Counts a compare-and-set lost to another node (invoicing_numbering_retries on /metrics). */
	lostCompareAndSet?(): void;
}

type Sequence = { _id: string; last: number; pending: { number: number; key: number; at: Date }[] };

/** This node's order of events: sequence reads, key look-ups and writes are compared by it. */
let ticks = 0;
/** A moment in this node's order of events: take it before a look-up, or after a read is answered. */
export const numberingMoment = () => ++ticks;

/** A sequence as this node knows it, and the moment it was last read from the database. */
type Known = Sequence & { readAt: number };

/**
 * Each sequence as this node last wrote it. Its numbers are taken on this node (the shard strategy), so the copy is
 * usually the stored one and the read is saved; when another node moved it meanwhile, the compare-and-set on `last`
 * fails and the sequence is read again. Kept per database (a test process runs several).
 */
const knownIn = perObject((_sequences: object) => new Map<string, Known>());
const knownOf = (deps: NumberingDeps) => knownIn(deps.db.documentSequences);

/**
 * When this node last wrote each key's document (releaseNumber), by `<sequence>/<key>`: the latest WRITTEN_KEPT, and
 * the latest moment forgotten (a look-up before it cannot tell). Kept per database, as the sequences are.
 */
const writtenIn = perObject((_sequences: object) => ({ at: new Map<string, number>(), forgottenUpTo: 0 }));
const WRITTEN_KEPT = 10_000;

function wrote(deps: NumberingDeps, id: string, key: number): void {
	const written = writtenIn(deps.db.documentSequences);
	const name = `${id}/${key}`;
	written.at.delete(name);
	written.at.set(name, numberingMoment());
	if (written.at.size <= WRITTEN_KEPT) return;
	const [oldest, at] = written.at.entries().next().value as [string, number];
	written.at.delete(oldest);
	written.forgottenUpTo = at;
}

/** Whether a look-up at `since` that found no document for the key still holds for a sequence read at `readAt`. */
function stillAbsent(deps: NumberingDeps, id: string, key: number, readAt: number, since: number | undefined): boolean {
	const written = writtenIn(deps.db.documentSequences);
	if (since === undefined || readAt > since || written.forgottenUpTo > since) return false;
	return (written.at.get(`${id}/${key}`) ?? 0) < since;
}

/**
 * Takes the key's number (or finds the one it was given); null: the key already has its document (`exists`, unless a
 * look-up at the moment `absentSince` found none and still holds).
 */
async function takeOnce(
	deps: NumberingDeps,
	id: string,
	key: number,
	exists: () => Promise<boolean>,
	absentSince: number | undefined,
): Promise<Numbered | null | "retry"> {
	const sequences = deps.db.documentSequences;
	const cache = knownOf(deps);
	let doc = cache.get(id);
	if (!doc) {
		const read = (await sequences.findById(id).lean()) ?? { _id: id, last: 0, pending: [] };
		doc = { ...read, readAt: numberingMoment() };
	}
	cache.delete(id);
	const mine = doc.pending.find(entry => entry.key === key);
	if (mine) return { sequence: mine.number };
	if (!stillAbsent(deps, id, key, doc.readAt, absentSince) && (await exists())) return null;
	const sequence = doc.last + 1;
	const entry = { number: sequence, key, at: deps.now() };
	const taken =
		doc.last === 0
			? await sequences
					.updateOne({ _id: id, last: 0 }, { $set: { last: 1 }, $push: { pending: entry } }, { upsert: true })
					.catch(() => null)
			: await sequences.updateOne({ _id: id, last: doc.last }, { $set: { last: sequence }, $push: { pending: entry } });
	const won = taken !== null && (taken.modifiedCount === 1 || taken.upsertedCount === 1);
	if (!won) deps.lostCompareAndSet?.();
	else cache.set(id, { _id: id, last: sequence, pending: [...doc.pending, entry], readAt: doc.readAt });
	return won ? { sequence } : "retry";
}

/** One number at a time per sequence on this node: its own issuers never race each other's compare-and-set. */
const queues = new Map<string, Promise<unknown>>();

function inTurn<T>(id: string, work: () => Promise<T>): Promise<T> {
	const turn = (queues.get(id) ?? Promise.resolve()).then(work, work);
	const settled = turn.catch(() => undefined);
	queues.set(id, settled);
	void settled.then(() => {
		if (queues.get(id) === settled) queues.delete(id);
	});
	return turn;
}

/**
 * The key's number in the account's sequence of `kind`, taken once; null when `exists` says its document is written.
 * `absentSince`: the moment (numberingMoment) before a look-up that found no document for the key.
 */
export function takeNumber(
	deps: NumberingDeps,
	accountId: number,
	kind: DocumentKind,
	key: number,
	exists: () => Promise<boolean>,
	absentSince?: number,
): Promise<Numbered | null> {
	const id = sequenceKey(accountId, kind);
	return inTurn(id, async () => {
		for (;;) {
			const taken = await takeOnce(deps, id, key, exists, absentSince);
			if (taken !== "retry") return taken;
		}
	});
}

/** The last number given in the account's sequence of `kind` (0: none yet): the top of its lists. */
export async function lastNumber(
	deps: { db: Pick<InvoicingDb, "documentSequences"> },
	accountId: number,
	kind: DocumentKind,
): Promise<number> {
	return (await deps.db.documentSequences.findById(sequenceKey(accountId, kind)).lean())?.last ?? 0;
}

/**
 * The document is written: its pending entry goes, with the others released on this node in the same moment
 * (updateLater: one command). Until then the entry is harmless: the key's number is the document's own.
 */
export function releaseNumber(deps: NumberingDeps, accountId: number, kind: DocumentKind, key: number): Promise<void> {
	const id = sequenceKey(accountId, kind);
	wrote(deps, id, key);
	const doc = knownOf(deps).get(id);
	if (doc) doc.pending = doc.pending.filter(entry => entry.key !== key);
	// A pull that fails leaves the entry (a database gone meanwhile): harmless, as above.
	return updateLater(deps.db.documentSequences, [{ updateOne: { filter: { _id: id }, update: { $pull: { pending: { key } } } } }]).catch(
		() => undefined,
	);
}
