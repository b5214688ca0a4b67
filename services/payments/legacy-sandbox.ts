// Versions before the payments service kept the sandbox processor's vault and
// ledger in billing's database. Billing hands them over when it starts
// (services/billing/legacy-sandbox.ts); this takes them in: each card sealed
// again as an envelope, each operation into the ledger under its old key and
// transaction id, so renewals and refunds of earlier customers go on.
import type { PaymentOutcome } from "../../shared/contracts/payments";
import { insertOnce } from "../../shared/persistence";
import type { PaymentsDeps } from "./deps";
import type { OperationKind } from "./models";
import { type MasterKeys, type Sealed, sealEnvelope, unseal } from "./sealing";

/**
 * Transaction ids start here: the sandbox of earlier versions numbered its operations from 0 in billing's database,
 * and those ids stay the transactions' `transactionId`s, so new ones never meet them.
 */
export const TRANSACTION_ID_FLOOR = 1_000_000_000;

export interface LegacyCard extends Sealed {
	_id: string;
	bin: string;
	last4: string;
	expiry: string;
	createdAt: string | Date;
	firstMidId?: number;
	merchantDeclines?: number;
}

export interface LegacyOperation {
	_id: string;
	kind: OperationKind;
	initiator: "customer" | "merchant" | null;
	cardToken: string | null;
	amount: number;
	currency: string | null;
	midId: number | null;
	outcome: Omit<PaymentOutcome, "processorReference"> | null;
	createdAt: string | Date;
}

/** The number as the old vault sealed it: AES-256-GCM straight under VAULT_KEY (a previous key during a rotation). */
function unsealLegacy(keys: MasterKeys, card: LegacyCard): string {
	for (const key of keys.byKid.values()) {
		try {
			return unseal(key, card).toString("utf8");
		} catch {
			// Sealed under another of the configured keys.
		}
	}
	throw new Error(`card ${card._id} of an earlier version is sealed under no configured VAULT_KEY`);
}

export async function importLegacySandbox(
	deps: PaymentsDeps & { keys: MasterKeys },
	input: { cards: LegacyCard[]; operations: LegacyOperation[] },
): Promise<{ cards: number; operations: number }> {
	const { db } = deps;
	for (const card of input.cards) {
		await insertOnce(db.vault, {
			_id: card._id,
			pan: sealEnvelope(deps.keys, unsealLegacy(deps.keys, card)),
			bin: card.bin,
			last4: card.last4,
			expiry: card.expiry,
			createdAt: new Date(card.createdAt),
		});
		const state = {
			...(card.firstMidId !== undefined ? { firstMidId: card.firstMidId } : {}),
			...(card.merchantDeclines !== undefined ? { merchantDeclines: card.merchantDeclines } : {}),
		};
		if (Object.keys(state).length > 0)
			await insertOnce(db.gatewayCards, { _id: `sandbox:${card._id}`, value: state, createdAt: new Date(card.createdAt) });
	}
	for (const op of input.operations) {
		// An operation left undecided by a crash of an earlier version moved nothing in the sandbox: not kept.
		if (!op.outcome) continue;
		const createdAt = new Date(op.createdAt);
		await insertOnce(db.operations, {
			_id: op._id,
			kind: op.kind,
			initiator: op.initiator,
			midId: op.midId,
			processor: "sandbox",
			cardToken: op.cardToken,
			amount: op.amount,
			currency: op.currency,
			target: null,
			reference: null,
			outcome: { ...op.outcome, processorReference: null },
			decidingUntil: createdAt,
			createdAt,
		});
		if (op.outcome.processorTransactionId !== null)
			await insertOnce(db.transactions, { _id: op.outcome.processorTransactionId, operation: op._id });
	}
	return { cards: input.cards.length, operations: input.operations.length };
}
