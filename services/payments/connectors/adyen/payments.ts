// Payments through Adyen's /payments: the card's verification (zero amount),
// the checkout's first payment (a charge, a hold, or the card's set-up for
// later), and renewals, merchant-initiated with the stored card and the
// network's transaction id. One request per operation, under Adyen's
// Idempotency-Key for our key, so a repeat of it gets Adyen's first answer. A
// first payment's redirect to the issuer's page is a challenge (challenges.ts);
// every other buyer action, and any on a renewal or a verification, a decline.
import type { Types } from "@adyen/api-library";
import type { ChallengeAsked, ConnectorOutcome, FirstPaymentKind, MoneyOperation, Remember } from "../connector";
import { challengeAsked } from "./challenges";
import { type AdyenApis, type AdyenClients, idempotencyOf, referenceOf, shopperReferenceOf } from "./client";
import { challengeUrlOf, declinedAs, MERCHANT_REFUSED, outcomeOfError, outcomeOfPayment, type PaymentAnswer } from "./outcomes";
import { keepStoredCard } from "./stored-cards";

type PaymentRequest = Types.checkout.PaymentRequest;
/** A card, as `paymentMethod` takes it (the library types `type` as its enum). */
type Card = Types.checkout.CardDetails;

/** How a payment is made: who is present, and whether it is held for a later capture. */
export interface AdyenPayment {
	/** `customer`: the buyer at the checkout (a first payment, a card update); `merchant`: a renewal, off session. */
	initiator: "customer" | "merchant";
	hold: boolean;
	/** The card's CVC, at its verification only (used there, never kept). */
	cvc?: string;
	/** A renewal's reference to the card's first payment, sent when the card is not stored at this merchant account. */
	networkTransactionId?: string;
	/** The product asks the issuer to authenticate every first payment. */
	authenticateAlways?: boolean;
	/** The buyer can take the issuer's challenge in the card frame (a first payment): Adyen's redirect to it is asked of the buyer. */
	challenge?: true;
}

type Step = FirstPaymentKind | "verify" | "charge";

export function payAtAdyen(
	clients: AdyenClients,
	op: MoneyOperation,
	how: AdyenPayment & { challenge?: undefined },
	remember: Remember,
	step: Step,
): Promise<ConnectorOutcome>;
export function payAtAdyen(
	clients: AdyenClients,
	op: MoneyOperation,
	how: AdyenPayment,
	remember: Remember,
	step: Step,
): Promise<ConnectorOutcome | ChallengeAsked>;
export async function payAtAdyen(
	clients: AdyenClients,
	op: MoneyOperation,
	how: AdyenPayment,
	remember: Remember,
	step: Step,
): Promise<ConnectorOutcome | ChallengeAsked> {
	const apis = clients.apisOf(op.mid);
	if (!apis) return declinedAs(null, MERCHANT_REFUSED, false);
	const stored = await clients.cards.get(op.mid.midId, op.card.cardToken);
	const returnUrl = clients.returnUrlOf(op.mid.midId, op.idempotencyKey);
	const request = paymentRequest(apis, op, how, stored?.storedPaymentMethodId ?? null, returnUrl);
	let answer: PaymentAnswer;
	try {
		answer = await apis.checkout.PaymentsApi.payments(request, idempotencyOf(op.idempotencyKey, step));
	} catch (err) {
		return outcomeOfError(err, null);
	}
	if (answer.pspReference) await remember(answer.pspReference);
	const challengeUrl = how.challenge ? challengeUrlOf(answer) : null;
	if (challengeUrl) return challengeAsked(clients, op, answer.pspReference, challengeUrl);
	const outcome = outcomeOfPayment(answer);
	if (outcome.status === "APPROVED") await keepStoredCard(clients, op.mid.midId, op.card.cardToken, answer);
	return outcome;
}

/**
 * The request: the raw card (the merchant account must be allowed to send card numbers), or the card Adyen stored at
 * this merchant account; stored for later at every payment the buyer makes, as a subscription's. 3-D Secure, when the
 * issuer asks, by redirect (no native 3-D Secure is asked for): `returnUrl` is the operation's return route.
 */
export function paymentRequest(
	apis: AdyenApis,
	op: MoneyOperation,
	how: AdyenPayment,
	storedPaymentMethodId: string | null,
	returnUrl: string,
): PaymentRequest {
	const shopperReference = shopperReferenceOf(op.card.cardToken);
	const buyerPresent = how.initiator === "customer";
	const additionalData: Record<string, string> = {};
	if (how.hold) additionalData.manualCapture = "true";
	if (!buyerPresent && !storedPaymentMethodId && how.networkTransactionId) additionalData.networkTxReference = how.networkTransactionId;
	const request: PaymentRequest = {
		merchantAccount: apis.merchantAccount,
		reference: referenceOf(op.idempotencyKey),
		amount: { currency: op.currency, value: op.amount },
		returnUrl,
		paymentMethod: storedPaymentMethodId ? ({ type: "scheme", storedPaymentMethodId } as Card) : cardOf(op, how.cvc),
		shopperReference,
		shopperInteraction: (buyerPresent ? "Ecommerce" : "ContAuth") as PaymentRequest["shopperInteraction"],
		recurringProcessingModel: "Subscription" as PaymentRequest["recurringProcessingModel"],
		...(buyerPresent && !storedPaymentMethodId ? { storePaymentMethod: true } : {}),
		...(Object.keys(additionalData).length > 0 ? { additionalData } : {}),
		...(buyerPresent && how.authenticateAlways ? { authenticationData: { attemptAuthentication: "always" as never } } : {}),
	};
	return request;
}

function cardOf(op: MoneyOperation, cvc: string | undefined): Card {
	return {
		type: "scheme",
		number: op.card.pan,
		expiryMonth: op.card.expiry.slice(0, 2),
		expiryYear: `20${op.card.expiry.slice(2, 4)}`,
		...(cvc ? { cvc } : {}),
	} as Card;
}
