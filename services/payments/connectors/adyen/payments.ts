// Payments through Adyen's /payments: the card's verification (zero amount),
// the checkout's first payment (a charge, a hold, or the card's set-up for
// later), and renewals, merchant-initiated with the stored card and the
// network's transaction id. One request per operation, under Adyen's
// Idempotency-Key for our key, so a repeat of it gets Adyen's first answer.
import type { Types } from "@adyen/api-library";
import type { ConnectorOutcome, FirstPaymentKind, MoneyOperation, Remember } from "../connector";
import { type AdyenApis, type AdyenClients, idempotencyOf, referenceOf, shopperReferenceOf } from "./client";
import { declinedAs, MERCHANT_REFUSED, outcomeOfError, outcomeOfPayment, type PaymentAnswer } from "./outcomes";

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
}

/** Stored cards come back under either name, depending on the merchant account's settings. */
const STORED_ID_KEYS = ["tokenization.storedPaymentMethodId", "recurring.recurringDetailReference"];

export async function payAtAdyen(
	clients: AdyenClients,
	op: MoneyOperation,
	how: AdyenPayment,
	remember: Remember,
	step: FirstPaymentKind | "verify" | "charge",
): Promise<ConnectorOutcome> {
	const apis = clients.apisOf(op.mid);
	if (!apis) return declinedAs(null, MERCHANT_REFUSED, false);
	const stored = await clients.cards.get(op.mid.midId, op.card.cardToken);
	const request = paymentRequest(apis, op, how, stored?.storedPaymentMethodId ?? null, clients.returnUrl);
	let answer: PaymentAnswer;
	try {
		answer = await apis.checkout.PaymentsApi.payments(request, idempotencyOf(op.idempotencyKey, step));
	} catch (err) {
		return outcomeOfError(err, null);
	}
	if (answer.pspReference) await remember(answer.pspReference);
	const outcome = outcomeOfPayment(answer);
	const storedId = STORED_ID_KEYS.map(key => answer.additionalData?.[key]).find(Boolean);
	if (outcome.status === "APPROVED" && storedId && request.shopperReference)
		await clients.cards.set(op.mid.midId, op.card.cardToken, {
			storedPaymentMethodId: storedId,
			shopperReference: request.shopperReference,
		});
	return outcome;
}

/**
 * The request: the raw card (the merchant account must be allowed to send card numbers), or the card Adyen stored at
 * this merchant account; stored for later at every payment the buyer makes, as a subscription's.
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
