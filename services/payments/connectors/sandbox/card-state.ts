// What the sandbox keeps of a card, in gateway_cards under `sandbox:<cardToken>`:
// the MID that first verified it (which refuses its renewals, for the
// refusedByFirstMid card) and how many merchant charges it was asked so far
// (for the cards that decline the first ones).
import type { PaymentsDb } from "../../models";

interface SandboxCardState {
	firstMidId?: number;
	merchantDeclines?: number;
}

export interface SandboxCardStates {
	firstMidId(cardToken: string): Promise<number | undefined>;
	/** Keeps the MID a card is verified on, unless one was kept already. */
	keepFirstMid(cardToken: string, midId: number): Promise<void>;
	/** Counts a merchant's charge of the card: how many were counted before it. */
	countMerchantCharge(cardToken: string): Promise<number>;
}

export function createSandboxCardStates(db: PaymentsDb, now: () => Date): SandboxCardStates {
	const stateKey = (cardToken: string) => `sandbox:${cardToken}`;
	async function stateOf(cardToken: string): Promise<SandboxCardState> {
		return ((await db.processorCards.findById(stateKey(cardToken)).lean())?.value ?? {}) as SandboxCardState;
	}
	return {
		firstMidId: async cardToken => (await stateOf(cardToken)).firstMidId,

		async keepFirstMid(cardToken, midId) {
			if ((await stateOf(cardToken)).firstMidId !== undefined) return;
			await db.processorCards.updateOne(
				{ _id: stateKey(cardToken) },
				{ $set: { "value.firstMidId": midId }, $setOnInsert: { createdAt: now() } },
				{ upsert: true },
			);
		},

		async countMerchantCharge(cardToken) {
			const before = await db.processorCards
				.findByIdAndUpdate(
					stateKey(cardToken),
					{ $inc: { "value.merchantDeclines": 1 }, $setOnInsert: { createdAt: now() } },
					{ upsert: true },
				)
				.lean();
			return (before?.value as SandboxCardState | undefined)?.merchantDeclines ?? 0;
		},
	};
}
