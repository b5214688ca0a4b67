// Adyen's 3-D Secure for a first payment, the buyer present (docs/authentication.md).
// Adyen's RedirectShopper with a GET redirect is the issuer's page, which the card
// frame shows; that a challenge was asked is kept by the operation's return token
// (client.ts, returnTokenOf) before the frame is told. The page sends the buyer
// back to our return route, which keeps the redirectResult Adyen appends, once
// (services/payments/adyen-returns.ts); the frame then asks what the payment came
// to, and lookups.ts reads it: Adyen's AUTHORISATION notification if one came,
// else /payments/details with that redirectResult (here). A challenge the buyer
// never came back from is cancelled by our reference once its time is over (here).
import { OUTCOME_UNKNOWN_REASON } from "../../../../shared/contracts/payments";
import type { ChallengeAsked, ConnectorOutcome, MidContext } from "../connector";
import { type AdyenChallenge, type AdyenClients, idempotencyOf, referenceOf, returnTokenOf } from "./client";
import { failed, MERCHANT_REFUSED, outcomeAfterChallenge, outcomeOfError, type PaymentAnswer } from "./outcomes";
import { keepStoredCard } from "./stored-cards";

interface FirstPayment {
	idempotencyKey: string;
	mid: MidContext;
}

/**
 * Keeps that Adyen asked the buyer to take the issuer's page at `challengeUrl`, then asks the ledger to wait for the
 * buyer. The payment's reference is Adyen's pspReference, else (an answer without one) the reference we sent.
 */
export async function challengeAsked(
	clients: AdyenClients,
	op: FirstPayment & { card: { cardToken: string } },
	pspReference: string | undefined,
	challengeUrl: string,
): Promise<ChallengeAsked> {
	const asked = { pspReference: pspReference ?? null, cardToken: op.card.cardToken };
	await clients.outcomes.challengeAsked(returnTokenOf(op.mid.midId, op.idempotencyKey), asked);
	return { status: "AWAITING_BUYER", reference: pspReference ?? referenceOf(op.idempotencyKey), challengeUrl };
}

/** The challenge asked for a first payment, with the buyer's redirectResult (null: not back yet); null when none was asked. */
export function challengeOf(clients: AdyenClients, op: FirstPayment): Promise<AdyenChallenge | null> {
	return clients.outcomes.challengeOf(returnTokenOf(op.mid.midId, op.idempotencyKey));
}

/**
 * What the payment came to, from the redirectResult the buyer brought back: /payments/details, under Adyen's
 * Idempotency-Key for our key, so asking again gets Adyen's first answer; the card Adyen stored for the renewals is
 * kept as a payment without a challenge keeps it. A failed request cannot tell: ERROR.
 */
export async function paymentDetails(
	clients: AdyenClients,
	op: FirstPayment & { reference: string | null },
	challenge: AdyenChallenge & { redirectResult: string },
): Promise<ConnectorOutcome> {
	const apis = clients.apisOf(op.mid);
	if (!apis) return failed(MERCHANT_REFUSED, op.reference);
	let answer: PaymentAnswer;
	try {
		answer = await apis.checkout.PaymentsApi.paymentsDetails(
			{ details: { redirectResult: challenge.redirectResult } },
			idempotencyOf(op.idempotencyKey, "details"),
		);
	} catch (err) {
		return outcomeOfError(err, op.reference, true);
	}
	const outcome = outcomeAfterChallenge(answer);
	if (outcome.status === "APPROVED") await keepStoredCard(clients, op.mid.midId, challenge.cardToken, answer);
	return outcome;
}

/**
 * A challenge whose buyer never came back, its time over, of which Adyen sent no word: Adyen's technical cancel by the
 * reference we sent (POST /cancels, `paymentReference`), so it can never complete. Taken ("received"): nothing moved,
 * null. Anything else: ERROR, looked up again later.
 */
export async function cancelUnfinished(
	clients: AdyenClients,
	op: FirstPayment & { reference: string | null },
): Promise<ConnectorOutcome | null> {
	const apis = clients.apisOf(op.mid);
	if (!apis) return failed(MERCHANT_REFUSED, op.reference);
	try {
		const answer = await apis.checkout.ModificationsApi.cancelAuthorisedPayment(
			{ merchantAccount: apis.merchantAccount, paymentReference: referenceOf(op.idempotencyKey) },
			idempotencyOf(op.idempotencyKey, "cancel"),
		);
		return String(answer.status) === "received" ? null : failed(OUTCOME_UNKNOWN_REASON, op.reference);
	} catch (err) {
		return outcomeOfError(err, op.reference, true);
	}
}
