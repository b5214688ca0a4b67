// Stripe's events for a MID (POST /api/processors/stripe/{midId}/events,
// docs/api.md#stripe-events). Payments verifies each with the MID's webhook
// secret and reads it in our words; billing applies the notice it brings
// (notices.ts), then records the event in stripe_events, keyed
// `<midId>:<event id>`, so Stripe's repeat of an applied event is answered
// without applying it again.
//
// The record is written after the notice is applied: a crash in between
// leaves no record, and Stripe's retry applies the notice again, which
// changes nothing. Two copies at once may both apply it, for the same reason.
import { StripeEventError } from "../../../shared/contracts/payments";
import { insertOnce } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import type { RelayTargets } from "../outbox/outbox-relay";
import { applyNotice, NoticeError } from "./notices";

/** Why an event is refused; Stripe retries a refused one for days, then gives up. */
export type StripeEventRefusal = StripeEventError | NoticeError.OtherMerchantAccount;

/** Stripe could not be read for the event: its retry will apply it, once Stripe answers or the MID's key is fixed. */
export const waitsForStripeRetry = (outcome: StripeEventReceived | StripeEventRefusal): boolean =>
	outcome === StripeEventError.Unavailable || outcome === StripeEventError.KeyRefused;

/** Applied, or acknowledged without change (another type, a repeat, a payment this service did not make). */
export interface StripeEventReceived {
	toRelay: RelayTargets;
}

export async function applyStripeEvent(
	deps: BillingDeps,
	input: { midId: number; payload: string; signature?: string },
): Promise<StripeEventReceived | StripeEventRefusal> {
	const read = await deps.payments.stripeEvent(input);
	if ("error" in read) return read.error;
	if (read.notice === null) return { toRelay: {} };
	const key = `${input.midId}:${read.eventId}`;
	if (await deps.db.stripeEvents.exists({ _id: key })) return { toRelay: {} };
	const applied = await applyNotice(deps, read.notice);
	// A charge of the MID's account that this service did not make: Stripe would send it again for days if refused.
	if (applied === NoticeError.UnknownCharge) return { toRelay: {} };
	if (applied === NoticeError.OtherMerchantAccount) return applied;
	await insertOnce(deps.db.stripeEvents, { _id: key, midId: input.midId, reference: read.notice.reference, appliedAt: deps.now() });
	return applied;
}
