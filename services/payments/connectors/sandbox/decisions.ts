// What the sandbox answers each operation, by its test card (test-cards.ts):
// an expired card is declined, a test card answers as it is made to, and any
// other card is approved.
import { isCardExpired } from "../../../../shared/card-expiry";
import { AUTHENTICATION_REQUIRED_REASON } from "../../../../shared/contracts/payments";
import type { ChallengeAsked, Connector, ConnectorOutcome, MoneyOperation, Remember, VaultCard } from "../connector";
import type { SandboxCardStates } from "./card-state";
import { challengeUrl, type SandboxChallenges } from "./challenges";
import type { SandboxNotices } from "./disputes";
import { AUTHENTICATIONS, approved, declined, unavailable, withNetworkId } from "./outcomes";
import { TEST_CARDS, type TestCard } from "./test-cards";

/** What the decisions share: the cards' state, the challenges and notices test cards bring, and the clock. */
export interface SandboxContext {
	states: SandboxCardStates;
	challenges: SandboxChallenges;
	notices: SandboxNotices;
	now: () => Date;
}

type CardRule = (behaviour: TestCard) => ConnectorOutcome | null | Promise<ConnectorOutcome | null>;

/** An expired card's decline, else the test card's rule; approved when the rule says nothing (null). */
export async function decideFor(ctx: SandboxContext, card: VaultCard, rule: CardRule, at: Date = ctx.now()): Promise<ConnectorOutcome> {
	if (isCardExpired(card.expiry, at)) return declined("expired_card");
	return (await rule(TEST_CARDS[card.pan] ?? {})) ?? approved();
}

export function verify(ctx: SandboxContext, op: Parameters<Connector["verify"]>[0]): Promise<ConnectorOutcome> {
	return decideFor(ctx, op.card, async b => {
		if (b.verify) return declined(b.verify);
		// The MID that will refuse this card's renewals: the one it was first verified on.
		if (b.refusedByFirstMid) await ctx.states.keepFirstMid(op.card.cardToken, op.mid.midId);
		return null;
	});
}

export async function charge(ctx: SandboxContext, op: Parameters<Connector["charge"]>[0]): Promise<ConnectorOutcome> {
	const at = op.at ?? ctx.now();
	const outcome = await decideFor(
		ctx,
		op.card,
		b => {
			if (b.error) return unavailable();
			if (b.charge) return declined(b.charge);
			return op.initiator === "merchant" ? merchantChargeDecision(ctx, op.card, op.mid.midId, b, op.networkTransactionId) : null;
		},
		at,
	);
	// A dispute test card's charge is disputed days later (disputes.ts).
	const card = TEST_CARDS[op.card.pan];
	if (outcome.status === "APPROVED" && card) await ctx.notices.scheduleFor({ ...op, accountId: op.mid.accountId }, card, at);
	return outcome;
}

export function authorize(ctx: SandboxContext, op: MoneyOperation & { at?: Date }): Promise<ConnectorOutcome> {
	return decideFor(
		ctx,
		op.card,
		b => {
			if (b.error) return unavailable();
			if (b.charge) return declined(b.charge);
			return null;
		},
		op.at,
	);
}

/** A first payment: a challenge card opens a challenge; the others are decided at once, authenticated as their card says. */
export async function pay(
	ctx: SandboxContext,
	op: Parameters<Connector["pay"]>[0],
	remember: Remember,
): Promise<ConnectorOutcome | ChallengeAsked> {
	const threeDS = TEST_CARDS[op.card.pan]?.threeDS;
	if (threeDS === "challenge") {
		const challengeId = await ctx.challenges.open(op.challengeUntil);
		await remember(challengeId);
		return { status: "AWAITING_BUYER", reference: challengeId, challengeUrl: challengeUrl(challengeId) };
	}
	const outcome = await firstPaymentDecision(ctx, op);
	// Asked always, an issuer that does not insist authenticates without a challenge.
	const authentication = AUTHENTICATIONS[threeDS ?? (op.authenticate === "ALWAYS" ? "frictionless" : "none")];
	return { ...withNetworkId(outcome), authentication };
}

function firstPaymentDecision(ctx: SandboxContext, op: Parameters<Connector["pay"]>[0]): Promise<ConnectorOutcome> {
	if (op.kind === "setup") return decideFor(ctx, op.card, b => (b.error ? unavailable() : null), op.at);
	return op.kind === "charge" ? charge(ctx, { ...op, initiator: "customer" }) : authorize(ctx, op);
}

/** The merchant's charge of a test card that declines some of them (the ledger decides each operation once). */
async function merchantChargeDecision(
	ctx: SandboxContext,
	card: VaultCard,
	midId: number,
	b: TestCard,
	networkId: string | undefined,
): Promise<ConnectorOutcome | null> {
	if (b.merchantCharge) return declined(b.merchantCharge);
	// A 3-D Secure card's issuer exempts a merchant's charge only when it refers to the authenticated first payment.
	if (b.threeDS && !networkId) return declined(AUTHENTICATION_REQUIRED_REASON);
	if (b.refusedByFirstMid && midId === (await ctx.states.firstMidId(card.cardToken))) return declined("merchant_account_refused");
	if (b.merchantDeclinesFirst && (await ctx.states.countMerchantCharge(card.cardToken)) < b.merchantDeclinesFirst)
		return declined("insufficient_funds");
	return null;
}
