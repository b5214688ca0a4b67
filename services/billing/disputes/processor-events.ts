// What processors send a MID's endpoint: Stripe's events (POST /api/processors/stripe/{midId}/events,
// docs/api.md#stripe-events) and Adyen's notifications (POST /api/processors/adyen/{midId}/notifications,
// docs/api.md#adyen-notifications). Payments verifies each with the MID's own
// secret and reads it in our words; billing applies the notices it brings
// (notices.ts), then records each event in processor_events, keyed
// `<midId>:<event id>`, so the processor's repeat of an applied event is
// answered without applying it again.
//
// The record is written after the notice is applied: a crash in between
// leaves no record, and the processor's retry applies the notice again, which
// changes nothing. Two copies at once may both apply it, for the same reason.
import { type AdyenNotificationError, type ProcessorNotice, StripeEventError } from "../../../shared/contracts/payments";
import { insertOnce } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import type { RelayTargets } from "../outbox/outbox-relay";
import { applyNotice, NoticeError } from "./notices";

/** Why an event is refused; Stripe retries a refused one for days, then gives up. */
export type StripeEventRefusal = StripeEventError | NoticeError.OtherMerchantAccount;

/** Stripe could not be read for the event: its retry will apply it, once Stripe answers or the MID's key is fixed. */
export const waitsForStripeRetry = (outcome: EventReceived | StripeEventRefusal): boolean =>
	outcome === StripeEventError.Unavailable || outcome === StripeEventError.KeyRefused;

/** Applied, or acknowledged without change (another type, a repeat, a payment this service did not make). */
export interface EventReceived {
	toRelay: RelayTargets;
}

export async function applyStripeEvent(
	deps: BillingDeps,
	input: { midId: number; payload: string; signature?: string },
): Promise<EventReceived | StripeEventRefusal> {
	const read = await deps.payments.stripeEvent(input);
	if ("error" in read) return read.error;
	if (read.notice === null) return { toRelay: {} };
	return applyOnce(deps, input.midId, read.eventId, read.notice);
}

/**
 * Each notice of an Adyen notification request, once. A notice about another MID's charge is acknowledged without
 * change: Adyen sends a whole request again until it is accepted, and one item must not hold back the others.
 */
export async function applyAdyenNotification(
	deps: BillingDeps,
	input: { midId: number; payload: string },
): Promise<EventReceived | AdyenNotificationError> {
	const read = await deps.payments.adyenNotification(input);
	if ("error" in read) return read.error;
	const toRelay = { customers: [] as number[], transactions: [] as number[], disputes: [] as number[] };
	for (const { eventId, notice } of read.notices) {
		const applied = await applyOnce(deps, input.midId, eventId, notice);
		if (typeof applied === "string") continue;
		for (const kind of ["customers", "transactions", "disputes"] as const) toRelay[kind].push(...(applied.toRelay[kind] ?? []));
	}
	return { toRelay };
}

/** Applies a notice unless its event was applied before; a charge the service did not make is acknowledged. */
async function applyOnce(
	deps: BillingDeps,
	midId: number,
	eventId: string,
	notice: ProcessorNotice,
): Promise<EventReceived | NoticeError.OtherMerchantAccount> {
	const key = `${midId}:${eventId}`;
	if (await deps.db.processorEvents.exists({ _id: key })) return { toRelay: {} };
	const applied = await applyNotice(deps, notice);
	// A charge of the MID's account that this service did not make: the processor would send it again for days if refused.
	if (applied === NoticeError.UnknownCharge) return { toRelay: {} };
	if (applied === NoticeError.OtherMerchantAccount) return applied;
	await insertOnce(deps.db.processorEvents, { _id: key, midId, reference: notice.reference, appliedAt: deps.now() });
	return applied;
}
