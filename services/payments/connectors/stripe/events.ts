// Stripe's events in our words (docs/api.md#stripe-events): the dispute's
// three (charge.dispute.created, .updated, .closed) and the early fraud
// warning's (radar.early_fraud_warning.created) become a ProcessorNotice; any
// other type is acknowledged and ignored. Pure: the event's signature was
// verified before (webhooks.ts verifyEvent), and the charge's key is
// read from its PaymentIntent after, by the event's `concerns`.
import { type DisputeNotice, type FraudWarningNotice, type ProcessorNotice, StripeEventError } from "../../../../shared/contracts/payments";
import { disputeStatusOf } from "./disputes";

export const DISPUTE_EVENT_TYPES: readonly string[] = ["charge.dispute.created", "charge.dispute.updated", "charge.dispute.closed"];
export const FRAUD_WARNING_EVENT_TYPE = "radar.early_fraud_warning.created";

/** The payment an event is about: its PaymentIntent, or its charge when it names no intent. */
export interface EventConcerns {
	paymentIntent: string | null;
	charge: string | null;
}

/** An event of a type we ignore (`concerns` null), or one about a charge, whose notice needs the charge's key. */
export type EventReading =
	| { eventId: string; concerns: null }
	| { eventId: string; concerns: EventConcerns; notice(midId: number, chargeKey: string): ProcessorNotice };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 && value.length <= 255 ? value : null);
/** Amounts (minor units) and times (Unix seconds). */
const whole = (value: unknown): number | null => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null);
const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();
/** An expandable field: the id, or the object expanded in its place. */
const idOf = (value: unknown): string | null => text(isObject(value) ? value.id : value);

/** What the event asks of us; MALFORMED when it is not an event as Stripe sends them. */
export function readEvent(event: unknown): EventReading | StripeEventError.Malformed {
	if (!isObject(event) || !isObject(event.data) || !isObject(event.data.object)) return StripeEventError.Malformed;
	const eventId = text(event.id);
	const type = text(event.type);
	const created = whole(event.created);
	if (eventId === null || type === null || created === null) return StripeEventError.Malformed;
	const object = event.data.object;
	if (DISPUTE_EVENT_TYPES.includes(type)) return readDispute(eventId, isoOf(created), object);
	if (type === FRAUD_WARNING_EVENT_TYPE) return readFraudWarning(eventId, isoOf(created), object);
	return { eventId, concerns: null };
}

function concernsOf(object: Json): EventConcerns | null {
	const concerns = { paymentIntent: idOf(object.payment_intent), charge: idOf(object.charge) };
	return concerns.paymentIntent === null && concerns.charge === null ? null : concerns;
}

/** A Stripe dispute object (https://docs.stripe.com/api/disputes/object). */
function readDispute(eventId: string, at: string, dispute: Json): EventReading | StripeEventError.Malformed {
	const reference = text(dispute.id);
	const reason = text(dispute.reason);
	const status = text(dispute.status);
	const amount = whole(dispute.amount);
	const currency = typeof dispute.currency === "string" && /^[A-Za-z]{3}$/.test(dispute.currency) ? dispute.currency.toUpperCase() : null;
	const dueBy = isObject(dispute.evidence_details) ? dispute.evidence_details.due_by : null;
	const concerns = concernsOf(dispute);
	if (reference === null || reason === null || status === null || amount === null || currency === null || concerns === null)
		return StripeEventError.Malformed;
	if (dueBy !== null && dueBy !== undefined && whole(dueBy) === null) return StripeEventError.Malformed;
	const evidenceDueBy = typeof dueBy === "number" ? isoOf(dueBy) : null;
	return {
		eventId,
		concerns,
		notice: (midId, chargeKey): DisputeNotice => ({
			kind: "dispute",
			id: eventId,
			midId,
			chargeKey,
			reference,
			at,
			status: disputeStatusOf(status),
			reason,
			amount,
			currency,
			evidenceDueBy,
		}),
	};
}

/** A Stripe early fraud warning (https://docs.stripe.com/api/radar/early_fraud_warnings/object). */
function readFraudWarning(eventId: string, at: string, warning: Json): EventReading | StripeEventError.Malformed {
	const reference = text(warning.id);
	const fraudType = text(warning.fraud_type);
	const concerns = concernsOf(warning);
	if (reference === null || fraudType === null || concerns === null) return StripeEventError.Malformed;
	return {
		eventId,
		concerns,
		notice: (midId, chargeKey): FraudWarningNotice => ({
			kind: "earlyFraudWarning",
			id: eventId,
			midId,
			chargeKey,
			reference,
			at,
			fraudType,
		}),
	};
}
