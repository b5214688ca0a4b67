// What became of an operation whose answer was lost: Adyen's Checkout API has no
// read of a payment, so the notification Adyen sends for it tells
// (notifications.ts keeps it by our reference). Until it came, a lookup cannot
// tell: ERROR, the operation stays undecided, and it is never paid again. A
// first payment whose 3-D Secure challenge was asked (challenges.ts) is read
// after it the same way first, then by the buyer's redirectResult; a lookup
// cancels one whose buyer never came back.
import { OUTCOME_UNKNOWN_REASON } from "../../../../shared/contracts/payments";
import type { ChallengeAsked, Connector, ConnectorOutcome, MidContext } from "../connector";
import { cancelUnfinished, challengeOf, paymentDetails } from "./challenges";
import { type AdyenClients, referenceOf } from "./client";
import type { SettlingEvent } from "./notifications";
import { approved, declinedAs, failed, outcomeAfterChallenge, type PaymentAnswer } from "./outcomes";
import { outcomeOfRefusal } from "./refusals";

type LookupKind = Parameters<Connector["lookup"]>[0]["kind"];

/** The event whose notification tells an operation's outcome. */
const SETTLED_BY: Readonly<Record<LookupKind, SettlingEvent>> = Object.freeze({
	verify: "AUTHORISATION",
	setup: "AUTHORISATION",
	charge: "AUTHORISATION",
	authorize: "AUTHORISATION",
	capture: "CAPTURE",
	void: "CANCELLATION",
	refund: "REFUND",
});

/** The operations a challenge may have been asked for: the buyer's first payments (a renewal's charge never asks). */
const FIRST_PAYMENTS: ReadonlySet<LookupKind> = new Set(["charge", "authorize", "setup"]);

export async function lookup(clients: AdyenClients, op: Parameters<Connector["lookup"]>[0]): Promise<ConnectorOutcome | null> {
	const found = await notified(clients, op.mid, op.idempotencyKey, SETTLED_BY[op.kind]);
	const challenge = FIRST_PAYMENTS.has(op.kind) ? await challengeOf(clients, op) : null;
	if (found) return challenge ? outcomeAfterChallenge(answerOf(found)) : outcomeOfNotification(found);
	if (!challenge) return failed(OUTCOME_UNKNOWN_REASON, op.reference);
	// The challenge's time is over: the buyer's redirectResult tells, else nothing will.
	const { redirectResult } = challenge;
	return redirectResult ? paymentDetails(clients, op, { ...challenge, redirectResult }) : cancelUnfinished(clients, op);
}

/**
 * A first payment after its challenge: Adyen's AUTHORISATION notification, else the buyer's redirectResult read at
 * Adyen; while neither is there the buyer is still at it (the ledger keeps the challenge's address it stored).
 */
export async function afterChallenge(
	clients: AdyenClients,
	op: Parameters<Connector["afterChallenge"]>[0],
): Promise<ConnectorOutcome | ChallengeAsked> {
	const found = await notified(clients, op.mid, op.idempotencyKey, "AUTHORISATION");
	if (found) return outcomeAfterChallenge(answerOf(found));
	const challenge = await challengeOf(clients, op);
	const redirectResult = challenge?.redirectResult;
	if (!challenge || !redirectResult) return { status: "AWAITING_BUYER", reference: op.reference, challengeUrl: "" };
	return paymentDetails(clients, op, { ...challenge, redirectResult });
}

type Notified = NonNullable<Awaited<ReturnType<AdyenClients["outcomes"]["get"]>>>;

/** What Adyen notified of the operation our key names, if it did. */
async function notified(clients: AdyenClients, mid: MidContext, key: string, event: SettlingEvent): Promise<Notified | null> {
	const merchantAccount = mid.adyen?.merchantAccount;
	return merchantAccount ? clients.outcomes.get({ accountId: mid.accountId, merchantAccount }, referenceOf(key), event) : null;
}

function outcomeOfNotification(found: Notified): ConnectorOutcome {
	if (found.success) return approved(found.pspReference);
	const refusal = outcomeOfRefusal(null, found.reason);
	return declinedAs(found.pspReference, refusal.reason, refusal.hardDecline);
}

/** A payment's notification as the answer it stands for: authorised, or refused with Adyen's reason text. */
const answerOf = (found: Notified): PaymentAnswer => ({
	resultCode: found.success ? "Authorised" : "Refused",
	pspReference: found.pspReference,
	refusalReason: found.reason ?? undefined,
});
