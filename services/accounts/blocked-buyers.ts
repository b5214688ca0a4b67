// The account's blocked buyers: cards (by the checkout's keyed fingerprint,
// never a number) and emails it refuses at checkout, beside the BIN
// blacklist. Billing blocks a disputing buyer; an operator may block an email
// by hand. The account is flagged (`buyerBlocks`) before its first entry is
// written, so a checkout of an account that never blocked anyone asks nothing;
// a crash in between leaves the flag without an entry, which costs a read.
// The flag stays once set: clearing it would race with a concurrent block.
import type { BlockBuyerInput, BlockedBuyer, BlockedBuyerKind } from "../../shared/contracts/accounts";
import { isDuplicateKey } from "../../shared/persistence";
import { formatDateTime } from "../../shared/time";
import type { AccountsDeps } from "./deps";
import { AccountsError } from "./errors";
import { accountExists } from "./merchant-accounts";
import { type BlockedBuyerDoc, blockedBuyerKey } from "./models";

/** Operators' lists stop here: newest first. */
export const BLOCKED_BUYERS_LIST_LIMIT = 1000;

/** An email as the checkout and billing keep it. */
const normalEmail = (email: string) => email.trim().toLowerCase();

function toBlockedBuyer(doc: BlockedBuyerDoc): BlockedBuyer {
	return {
		accountId: doc.accountId,
		kind: doc.kind,
		value: doc.value,
		cardBin: doc.cardBin,
		cardLast4: doc.cardLast4,
		reason: doc.reason,
		disputeId: doc.disputeId,
		transactionId: doc.transactionId,
		createdAt: formatDateTime(doc.createdAt),
	};
}

type Entry = Omit<BlockedBuyerDoc, "createdAt">;

function entriesOf(input: BlockBuyerInput): Entry[] {
	const common = {
		accountId: input.accountId,
		reason: input.reason,
		disputeId: input.disputeId ?? null,
		transactionId: input.transactionId ?? null,
	};
	const entry = (kind: BlockedBuyerKind, value: string, card: { bin: string; last4: string } | null): Entry => ({
		_id: blockedBuyerKey(input.accountId, kind, value),
		kind,
		value,
		cardBin: card?.bin ?? null,
		cardLast4: card?.last4 ?? null,
		...common,
	});
	return [
		...(input.card ? [entry("CARD", input.card.fingerprint, input.card)] : []),
		...(input.email ? [entry("EMAIL", normalEmail(input.email), null)] : []),
	];
}

/** Stores the entry unless it is there; an entry already there keeps its first reason and date. */
async function storeOnce(deps: AccountsDeps, { _id, ...fields }: Entry): Promise<void> {
	await deps.db.blockedBuyers
		.updateOne({ _id }, { $setOnInsert: { ...fields, createdAt: deps.now() } }, { upsert: true })
		.catch((err: unknown) => {
			// Two concurrent first blocks: one upsert inserts, the other hits the key; both mean "blocked".
			if (!isDuplicateKey(err)) throw err;
		});
}

/** Billing, when a dispute opens: the card, the email or both. Repeating it changes nothing. */
export async function blockBuyer(deps: AccountsDeps, input: BlockBuyerInput): Promise<{ blocked: number } | AccountsError> {
	const entries = entriesOf(input);
	if (entries.length === 0) return AccountsError.NothingToBlock;
	// The flag first: an entry never exists that the account's checkouts would not ask about.
	const { matchedCount } = await deps.db.accounts.updateOne({ _id: input.accountId }, { $set: { buyerBlocks: true } });
	if (matchedCount === 0) return AccountsError.UnknownAccount;
	await Promise.all(entries.map(entry => storeOnce(deps, entry)));
	return { blocked: entries.length };
}

/** An operator blocks an email by hand (the admin API); a card is blocked only by a dispute, by its fingerprint. */
export async function addBlockedBuyer(
	deps: AccountsDeps,
	input: { accountId: number; email: string },
): Promise<BlockedBuyer | AccountsError> {
	const blocked = await blockBuyer(deps, { accountId: input.accountId, email: input.email, reason: "MANUAL" });
	if (typeof blocked === "string") return blocked;
	const doc = await deps.db.blockedBuyers.findById(blockedBuyerKey(input.accountId, "EMAIL", normalEmail(input.email))).lean();
	return doc ? toBlockedBuyer(doc) : AccountsError.UnknownBlockedBuyer;
}

/** The checkout's question, one read by key: is the card, or the email, blocked? */
export async function isBuyerBlocked(
	deps: AccountsDeps,
	input: { accountId: number; fingerprint: string; email?: string },
): Promise<boolean> {
	const keys = [blockedBuyerKey(input.accountId, "CARD", input.fingerprint)];
	if (input.email) keys.push(blockedBuyerKey(input.accountId, "EMAIL", normalEmail(input.email)));
	return (
		(
			await deps.db.blockedBuyers
				.find({ _id: { $in: keys } }, { _id: 1 })
				.limit(1)
				.lean()
		).length > 0
	);
}

/** The operators' list, newest first (a search by account: off the checkout's path). */
export async function listBlockedBuyers(deps: AccountsDeps, input: { accountId: number }): Promise<BlockedBuyer[] | AccountsError> {
	if (!(await accountExists(deps, input.accountId))) return AccountsError.UnknownAccount;
	const docs = await deps.db.blockedBuyers
		.find({ accountId: input.accountId })
		.sort({ createdAt: -1, _id: 1 })
		.limit(BLOCKED_BUYERS_LIST_LIMIT)
		.lean();
	return docs.map(toBlockedBuyer);
}

/** Lifts a block; `kind` as the path names it (`card` or `email`). */
export async function removeBlockedBuyer(
	deps: AccountsDeps,
	input: { accountId: number; kind: "card" | "email"; value: string },
): Promise<BlockedBuyer | AccountsError> {
	const kind: BlockedBuyerKind = input.kind === "card" ? "CARD" : "EMAIL";
	const value = kind === "EMAIL" ? normalEmail(input.value) : input.value;
	const doc = await deps.db.blockedBuyers.findOneAndDelete({ _id: blockedBuyerKey(input.accountId, kind, value) }).lean();
	return doc ? toBlockedBuyer(doc) : AccountsError.UnknownBlockedBuyer;
}
