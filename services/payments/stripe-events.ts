// An event Stripe sent to a MID's endpoint (POST /api/processors/stripe/{midId}/events),
// verified and read in our words for billing, which applies it. Verified with
// the MID's own webhook secret before anything is read from it; the charge it
// concerns is found with the MID's own key, through the metadata our
// PaymentIntents carry, so an event can only touch a payment the MID's Stripe
// account made. Nothing is written here: billing keeps the events it applied.
import { type ProcessorNotice, StripeEventError } from "../../shared/contracts/payments";
import { readEvent } from "./connectors/stripe/events";
import type { PaymentsDeps } from "./deps";

export async function stripeEvent(
	deps: PaymentsDeps,
	input: { midId: number; payload: string; signature?: string },
): Promise<{ eventId: string; notice: ProcessorNotice | null } | StripeEventError> {
	const processor = await deps.processors.processorFor(input.midId);
	if (processor?.name !== "stripe") return StripeEventError.NotStripeMid;
	const webhookSecret = await deps.webhookSecretOf(input.midId);
	if (webhookSecret === null) return StripeEventError.NoWebhookSecret;
	const event = deps.stripe.verifyEvent(input.payload, input.signature, webhookSecret);
	if (event === StripeEventError.BadSignature || event === StripeEventError.Malformed) return event;
	const reading = readEvent(event);
	if (reading === StripeEventError.Malformed) return reading;
	if (reading.concerns === null) return { eventId: reading.eventId, notice: null };
	const charge = await deps.stripe.chargeKeyOf(processor.mid, reading.concerns);
	if (typeof charge === "string") return charge;
	// An intent without our key: a payment the merchant made on its Stripe account outside this service.
	return { eventId: reading.eventId, notice: charge.chargeKey === null ? null : reading.notice(input.midId, charge.chargeKey) };
}
