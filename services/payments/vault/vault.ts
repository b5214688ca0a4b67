// The card vault: a card number is sealed under a data key of its own, wrapped
// by the master key (VAULT_KEY). Only this service unseals, one card for one
// payment operation, and every unseal is counted (payments.vault.unseals).
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import { insertDoc } from "../../../shared/persistence";
import type { VaultCard } from "../connectors/connector";
import type { PaymentsDb, VaultCardDoc } from "../models";
import { type MasterKeys, rewrap, sealEnvelope, unsealEnvelope } from "./sealing";

export interface Vault {
	/** Seals the card and answers its token. */
	store(card: { pan: string; expiry: string }): Promise<string>;
	/** The card for one operation, or null for a token the vault does not hold. */
	unseal(cardToken: string): Promise<VaultCard | null>;
	/** Re-wraps the data keys of cards sealed under a previous master key; answers how many (runs in the background). */
	rewrapAll(batch?: number): Promise<number>;
}

/** Cards this node sealed lately, as stored (sealed): a checkout's payment follows its card's storing within seconds. */
const RECENT_CARDS_MS = 10 * 60_000;

export function createVault(db: PaymentsDb, keys: MasterKeys, counted: () => void, now: () => Date = () => new Date()): Vault {
	const recent = new LRUCache<string, VaultCardDoc>({ max: 10_000, ttl: RECENT_CARDS_MS });
	return {
		async store(card) {
			const cardToken = `card_${randomBytes(16).toString("hex")}`;
			const doc: VaultCardDoc = {
				_id: cardToken,
				pan: sealEnvelope(keys, card.pan),
				bin: card.pan.slice(0, 6),
				last4: card.pan.slice(-4),
				expiry: card.expiry,
				createdAt: now(),
			};
			await insertDoc(db.vault, doc);
			recent.set(cardToken, doc);
			return cardToken;
		},

		async unseal(cardToken) {
			const doc = recent.get(cardToken) ?? (await db.vault.findById(cardToken).lean());
			if (!doc) return null;
			counted();
			return { cardToken, pan: unsealEnvelope(keys, doc.pan), expiry: doc.expiry };
		},

		async rewrapAll(batch = 500) {
			// By _id order, a batch at a time: rotation is rare and runs in the background, not on a hot path.
			let rewrapped = 0;
			let after = "";
			for (;;) {
				const docs = await db.vault
					.find({ _id: { $gt: after } }, { pan: 1 })
					.sort({ _id: 1 })
					.limit(batch)
					.lean();
				if (docs.length === 0) return rewrapped;
				for (const doc of docs) {
					if (doc.pan.kid === keys.current.kid) continue;
					// Compare-and-set on the old key id: a card re-wrapped meanwhile by another node is left as it is.
					const done = await db.vault.updateOne({ _id: doc._id, "pan.kid": doc.pan.kid }, { $set: { pan: rewrap(keys, doc.pan) } });
					rewrapped += done.modifiedCount;
				}
				after = docs[docs.length - 1]._id;
			}
		},
	};
}
