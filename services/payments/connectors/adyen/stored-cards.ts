// The card Adyen stores at a merchant account when a payment the buyer made asked
// it to (storePaymentMethod, a subscription's): kept per MID and vault card, so
// the renewals charge it (ContAuth) instead of sending the number again.
import { type AdyenClients, shopperReferenceOf } from "./client";
import type { PaymentAnswer } from "./outcomes";

/** Stored cards come back under either name, depending on the merchant account's settings. */
const STORED_ID_KEYS = ["tokenization.storedPaymentMethodId", "recurring.recurringDetailReference"];

/** Keeps the stored card an authorised payment's answer names, if it names one. */
export async function keepStoredCard(clients: AdyenClients, midId: number, cardToken: string, answer: PaymentAnswer): Promise<void> {
	const storedId = STORED_ID_KEYS.map(key => answer.additionalData?.[key]).find(Boolean);
	if (storedId)
		await clients.cards.set(midId, cardToken, { storedPaymentMethodId: storedId, shopperReference: shopperReferenceOf(cardToken) });
}
