// The sandbox processor: a real processor's behaviour for the test cards, decided
// in this process. Sandbox accounts' MIDs use it; it is a product feature, not
// a test double. What it keeps of a card (the MID that first verified it, the
// renewals it declined so far) is in gateway_cards (card-state.ts).
import { EvidenceError } from "../../../../shared/contracts/payments";
import type { PaymentsDb } from "../../models";
import type { Vault } from "../../vault/vault";
import type { Connector } from "../connector";
import { createSandboxCardStates } from "./card-state";
import { challengeUrl, createSandboxChallenges, isSandboxChallenge } from "./challenges";
import { authorize, charge, pay, type SandboxContext, verify } from "./decisions";
import { createSandboxNotices, type SandboxNotices } from "./disputes";
import { afterChoice, approved, declined } from "./outcomes";
import { TEST_CARDS } from "./test-cards";

/** It decides in milliseconds: a call silent this long has died, and its operation is taken over. */
export const SANDBOX_DECIDING_MS = 1000;

export interface SandboxConnector extends Connector {
	chooseChallenge(challengeId: string, choice: "complete" | "fail"): Promise<boolean>;
	/** The disputes and fraud warnings its test cards bring (disputes.ts). */
	notices: SandboxNotices;
}

/** The connector: each operation's decision is in decisions.ts; what it answers beyond a decision is here. */
export function createSandboxConnector(db: PaymentsDb, vault: Vault, now: () => Date = () => new Date()): SandboxConnector {
	const ctx: SandboxContext = {
		states: createSandboxCardStates(db, now),
		challenges: createSandboxChallenges(db, now),
		notices: createSandboxNotices(db, now),
		now,
	};
	const { challenges, notices } = ctx;
	return {
		verify: op => verify(ctx, op),
		charge: op => charge(ctx, op),
		authorize: op => authorize(ctx, op),
		pay: (op, remember) => pay(ctx, op, remember),

		async afterChallenge(op) {
			const challenge = await challenges.get(op.reference);
			if (!challenge) return { status: "ERROR", reference: null, reason: "challenge_not_found", hardDecline: false };
			return (
				afterChoice(challenge.choice) ?? { status: "AWAITING_BUYER", reference: op.reference, challengeUrl: challengeUrl(op.reference) }
			);
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

		// The sandbox makes no object before it decides: an operation whose caller died moved nothing. A challenge's time
		// is over when it is looked up: what the tester chose stands, and nothing chosen moved nothing.
		async lookup(op) {
			if (!isSandboxChallenge(op.reference)) return null;
			return afterChoice((await challenges.get(op.reference))?.choice ?? null);
		},

		async submitDisputeEvidence(op) {
			return (await notices.evidenceSubmitted(op.reference)) ? { status: "UNDER_REVIEW" } : { error: EvidenceError.Refused };
		},

		/** The tester's choice on the challenge page. */
		chooseChallenge: (challengeId: string, choice: "complete" | "fail") => challenges.choose(challengeId, choice),
		notices,
	};
}
