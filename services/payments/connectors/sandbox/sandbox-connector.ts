// The sandbox gateway: a real gateway's behaviour for the test cards, decided
// in this process. Sandbox accounts' MIDs use it; it is a product feature, not
// a test double. What it keeps of a card (the MID that first verified it, the
// renewals it declined so far) is in gateway_cards under `sandbox:<cardToken>`.
import { randomBytes } from "node:crypto";
import { isCardExpired } from "../../../../shared/card-expiry";
import type { PaymentsDb } from "../../models";
import type { Vault } from "../../vault";
import type { Connector, ConnectorOutcome, VaultCard } from "../connector";
import { HARD_REASONS, TEST_CARDS, type TestCard } from "./test-cards";

/** It decides in milliseconds: a call silent this long has died, and its operation is taken over. */
export const SANDBOX_DECIDING_MS = 1000;

const reference = () => `sbx_${randomBytes(12).toString("hex")}`;
const approved = (): ConnectorOutcome => ({ status: "APPROVED", reference: reference(), reason: null, hardDecline: false });
const declined = (reason: string): ConnectorOutcome => ({
	status: "DECLINED",
	reference: reference(),
	reason,
	hardDecline: HARD_REASONS.has(reason),
});
const unavailable = (): ConnectorOutcome => ({ status: "ERROR", reference: null, reason: "processor_unavailable", hardDecline: false });

interface SandboxCardState {
	firstMidId?: number;
	merchantDeclines?: number;
}

export function createSandboxConnector(db: PaymentsDb, vault: Vault, now: () => Date = () => new Date()): Connector {
	const stateKey = (cardToken: string) => `sandbox:${cardToken}`;
	async function stateOf(cardToken: string): Promise<SandboxCardState> {
		return ((await db.gatewayCards.findById(stateKey(cardToken)).lean())?.value ?? {}) as SandboxCardState;
	}

	async function decideFor(
		card: VaultCard,
		test: (behaviour: TestCard) => ConnectorOutcome | null | Promise<ConnectorOutcome | null>,
		at: Date = now(),
	): Promise<ConnectorOutcome> {
		if (isCardExpired(card.expiry, at)) return declined("expired_card");
		return (await test(TEST_CARDS[card.pan] ?? {})) ?? approved();
	}

	/** The merchant's charge of a test card that declines some of them (the ledger decides each operation once). */
	async function merchantChargeDecision(card: VaultCard, midId: number, b: TestCard): Promise<ConnectorOutcome | null> {
		if (b.merchantCharge) return declined(b.merchantCharge);
		if (b.refusedByFirstMid && midId === (await stateOf(card.cardToken)).firstMidId) return declined("merchant_account_refused");
		if (b.merchantDeclinesFirst) {
			const before = await db.gatewayCards
				.findByIdAndUpdate(
					stateKey(card.cardToken),
					{ $inc: { "value.merchantDeclines": 1 }, $setOnInsert: { createdAt: now() } },
					{ upsert: true },
				)
				.lean();
			if (((before?.value as SandboxCardState | undefined)?.merchantDeclines ?? 0) < b.merchantDeclinesFirst)
				return declined("insufficient_funds");
		}
		return null;
	}

	return {
		verify(op) {
			return decideFor(op.card, async b => {
				if (b.verify) return declined(b.verify);
				// The MID that will refuse this card's renewals: the one it was first verified on.
				if (b.refusedByFirstMid && (await stateOf(op.card.cardToken)).firstMidId === undefined)
					await db.gatewayCards.updateOne(
						{ _id: stateKey(op.card.cardToken) },
						{ $set: { "value.firstMidId": op.mid.midId }, $setOnInsert: { createdAt: now() } },
						{ upsert: true },
					);
				return null;
			});
		},

		charge(op) {
			return decideFor(
				op.card,
				b => {
					if (b.error) return unavailable();
					if (b.charge) return declined(b.charge);
					return op.initiator === "merchant" ? merchantChargeDecision(op.card, op.mid.midId, b) : null;
				},
				op.initiator === "merchant" ? op.at : undefined,
			);
		},

		authorize(op) {
			return decideFor(op.card, b => {
				if (b.error) return unavailable();
				if (b.charge) return declined(b.charge);
				return null;
			});
		},

		async capture() {
			return approved();
		},

		async void() {
			return approved();
		},

		async refund(op) {
			// The refund goes back to the card of the charge it refunds.
			const card = op.cardToken ? await vault.unseal(op.cardToken) : null;
			const reason = card ? TEST_CARDS[card.pan]?.refund : "charge_not_found";
			return reason ? declined(reason) : approved();
		},

		// The sandbox makes no object before it decides: an operation whose caller died moved nothing.
		async lookup() {
			return null;
		},
	};
}
