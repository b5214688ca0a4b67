// The sandbox gateway: a real gateway's behaviour for the test cards, decided
// in this process. Sandbox accounts' MIDs use it; it is a product feature, not
// a test double. What it keeps of a card (the MID that first verified it, the
// renewals it declined so far) is in gateway_cards under `sandbox:<cardToken>`.
import { randomBytes, randomInt } from "node:crypto";
import { isCardExpired } from "../../../../shared/card-expiry";
import {
	AUTHENTICATION_FAILED_REASON,
	AUTHENTICATION_REQUIRED_REASON,
	type Authentication,
	AuthenticationOutcome,
	EvidenceError,
} from "../../../../shared/contracts/payments";
import type { PaymentsDb } from "../../models";
import type { Vault } from "../../vault";
import type { Connector, ConnectorOutcome, MoneyOperation, VaultCard } from "../connector";
import { challengeUrl, createSandboxChallenges, isSandboxChallenge } from "./challenges";
import { createSandboxNotices, type SandboxNotices } from "./disputes";
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
/** A network's transaction id, as Visa's: 15 digits. */
const networkTransactionId = () => `5${String(randomInt(0, 100_000_000_000_000)).padStart(14, "0")}`;
/** The buyer present and the payment approved: the network's id that later merchant-initiated charges refer to. */
const withNetworkId = (outcome: ConnectorOutcome): ConnectorOutcome =>
	outcome.status === "APPROVED" ? { ...outcome, networkTransactionId: networkTransactionId() } : outcome;
const unavailable = (): ConnectorOutcome => ({ status: "ERROR", reference: null, reason: "processor_unavailable", hardDecline: false });

/** How the sandbox authenticates a first payment by its test card (docs/authentication.md). */
const AUTHENTICATIONS: Record<NonNullable<TestCard["threeDS"]> | "none", Authentication> = {
	frictionless: { version: "2.2.0", outcome: AuthenticationOutcome.Frictionless, eci: "05" },
	challenge: { version: "2.2.0", outcome: AuthenticationOutcome.Challenged, eci: "05" },
	notEnrolled: { version: "2.2.0", outcome: AuthenticationOutcome.Attempted, eci: "06" },
	// The directory server did not answer: the payment goes on unauthenticated (the documented fallback).
	unavailable: { version: null, outcome: AuthenticationOutcome.Unavailable, eci: "07" },
	none: { version: null, outcome: AuthenticationOutcome.NotRequired, eci: null },
};
const FAILED: Authentication = { version: "2.2.0", outcome: AuthenticationOutcome.Failed, eci: "07" };

/** What a challenge came to: approved when completed, declined when failed, nothing yet (null) when not chosen. */
function afterChoice(choice: "complete" | "fail" | null): ConnectorOutcome | null {
	if (choice === "complete") return { ...withNetworkId(approved()), authentication: AUTHENTICATIONS.challenge };
	if (choice === "fail") return { ...declined(AUTHENTICATION_FAILED_REASON), authentication: FAILED };
	return null;
}

interface SandboxCardState {
	firstMidId?: number;
	merchantDeclines?: number;
}

export interface SandboxConnector extends Connector {
	chooseChallenge(challengeId: string, choice: "complete" | "fail"): Promise<boolean>;
	/** The disputes and fraud warnings its test cards bring (disputes.ts). */
	notices: SandboxNotices;
}

export function createSandboxConnector(db: PaymentsDb, vault: Vault, now: () => Date = () => new Date()): SandboxConnector {
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
	async function merchantChargeDecision(
		card: VaultCard,
		midId: number,
		b: TestCard,
		networkId: string | undefined,
	): Promise<ConnectorOutcome | null> {
		if (b.merchantCharge) return declined(b.merchantCharge);
		// A 3-D Secure card's issuer exempts a merchant's charge only when it refers to the authenticated first payment.
		if (b.threeDS && !networkId) return declined(AUTHENTICATION_REQUIRED_REASON);
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

	const challenges = createSandboxChallenges(db, now);
	const notices = createSandboxNotices(db, now);

	const charge: Connector["charge"] = async op => {
		const at = op.initiator === "merchant" ? op.at : undefined;
		const outcome = await decideFor(
			op.card,
			b => {
				if (b.error) return unavailable();
				if (b.charge) return declined(b.charge);
				return op.initiator === "merchant" ? merchantChargeDecision(op.card, op.mid.midId, b, op.networkTransactionId) : null;
			},
			at,
		);
		// A dispute test card's charge is disputed days later (disputes.ts).
		const card = TEST_CARDS[op.card.pan];
		if (outcome.status === "APPROVED" && card) await notices.scheduleFor({ ...op, accountId: op.mid.accountId }, card, at ?? now());
		return outcome;
	};

	const authorize = (op: MoneyOperation) =>
		decideFor(op.card, b => {
			if (b.error) return unavailable();
			if (b.charge) return declined(b.charge);
			return null;
		});

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

		charge,
		authorize,

		async pay(op, remember) {
			const threeDS = TEST_CARDS[op.card.pan]?.threeDS;
			if (threeDS === "challenge") {
				const challengeId = await challenges.open(op.challengeUntil);
				await remember(challengeId);
				return { status: "AWAITING_BUYER", reference: challengeId, challengeUrl: challengeUrl(challengeId) };
			}
			const outcome =
				op.kind === "setup"
					? await decideFor(op.card, b => (b.error ? unavailable() : null))
					: await (op.kind === "charge" ? charge({ ...op, initiator: "customer" }, remember) : authorize(op));
			// Asked always, an issuer that does not insist authenticates without a challenge.
			const authentication = AUTHENTICATIONS[threeDS ?? (op.authenticate === "ALWAYS" ? "frictionless" : "none")];
			return { ...withNetworkId(outcome), authentication };
		},

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
