// The two network steps of a Stripe event (the pure reading is events.ts):
// its signature checked with the MID's webhook secret, and the key of ours
// on the payment it concerns read with the MID's key.
import Stripe from "stripe";
import { StripeEventError } from "../../../../shared/contracts/payments";
import type { MidContext } from "../connector";
import type { StripeClients } from "./client";
import type { EventConcerns } from "./events";
import { isKeyRefused } from "./outcomes";

export function verifyEvent(payload: string, signature: string | undefined, webhookSecret: string): unknown | StripeEventError {
	try {
		return Stripe.webhooks.constructEvent(payload, signature ?? "", webhookSecret);
	} catch (err) {
		// Anything else is thrown once the signature matched: a body that is not JSON, or not a snapshot event.
		return err instanceof Stripe.errors.StripeSignatureVerificationError ? StripeEventError.BadSignature : StripeEventError.Malformed;
	}
}

/** payByIntent puts our key on every intent it creates (metadata.idempotency_key). */
export async function chargeKeyOf(
	clients: StripeClients,
	mid: MidContext,
	concerns: EventConcerns,
): Promise<{ chargeKey: string | null } | StripeEventError> {
	const stripe = clients.clientOf(mid);
	if (!stripe) return StripeEventError.Unavailable;
	try {
		const intentId = concerns.paymentIntent ?? intentOf(await stripe.charges.retrieve(concerns.charge!));
		// A charge made without an intent (Stripe's older Charges API): not one of ours.
		if (intentId === null) return { chargeKey: null };
		const intent = await stripe.paymentIntents.retrieve(intentId);
		return { chargeKey: intent.metadata?.idempotency_key ?? null };
	} catch (err) {
		if (!(err instanceof Stripe.errors.StripeError)) throw err;
		// Unknown to the MID's Stripe account: another account's payment (localstripe's 404 has no code, Stripe's resource_missing).
		if (err.statusCode === 404) return StripeEventError.NotThisAccount;
		if (isKeyRefused(err)) return StripeEventError.KeyRefused;
		return StripeEventError.Unavailable;
	}
}

/** A charge's PaymentIntent id, expanded or not. */
function intentOf(charge: Stripe.Charge): string | null {
	const intent = charge.payment_intent;
	return typeof intent === "string" ? intent : (intent?.id ?? null);
}
