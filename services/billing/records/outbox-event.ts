// The event a customer, a transaction or a dispute carries in its outbox until
// the relay hands it over (outbox/outbox.ts, outbox/outbox-relay.ts).
import { Schema } from "mongoose";
import type { EventType } from "../../../shared/contracts/notifications";
import type { DisputeStatus, RefundStatus } from "../states";
import type { MetricsEntry } from "./metrics";

/** An event that only carries a metrics entry (a coupon attached, a renewal that moved MRR): the relay sends nothing. */
export const METRICS_ONLY = "METRICS";

/**
 * An event for the merchant's webhooks, written in the same single-record
 * update as the write it announces, so it exists exactly when the write
 * does. It is listed in the outbox schedule (outbox.ts) just before. The
 * outbox relay hands it to notifications, then moves its id to `relayed`.
 */
export interface OutboxEvent {
	id: string;
	/** A webhook event's type, or METRICS: a write no webhook announces that only counts in the metrics (never sent). */
	type: EventType | typeof METRICS_ONLY;
	createdAt: Date;
	/** The transaction a CONVERSION (its charge or hold) or an AUTHENTICATION_REQUIRED (the refused renewal) names; null: none (a scheduled first charge). Other events have none. */
	transactionId?: number | null;
	/** Every dispute's event: the dispute's status it announces (a later move must not show through an earlier event). */
	disputeStatus?: DisputeStatus;
	/** An open dispute's event: its transaction's refund status then (DISPUTED while the dispute holds it), for the same reason. */
	refundStatus?: RefundStatus;
	/** A SUBSCRIPTION_PAUSED's pause, as it was written (a resume since must not show through it). */
	pause?: { pausedAt: Date; resumeAt: Date | null };
	/** A SUBSCRIPTION_RESUMED's resume: when, and the next renewal it set. */
	resume?: { resumedAt: Date; nextRenewalTimestamp: Date };
	/** A subscription change's event: what changed, as it was then (changes/change-answers.ts formats it). */
	change?: ChangeDetails;
	/** A CANCELLATION_SCHEDULED's, _UNDONE's, or the CANCELLATION that ends it: the end and why, as they were then. */
	cancellation?: CancellationDetails;
	/** Who did what the event announces, when it was the buyer (the customer portal); absent: the merchant or the service. */
	by?: Actor;
	/** What the write counts in the subscription metrics, its entry (entries/), applied once under this event's id. */
	metrics?: MetricsEntry;
}

/** What a SUBSCRIPTION_CHANGED, _SCHEDULED or _CANCELLED event tells (minor units of `currency`). */
export interface ChangeDetails {
	quoteId: string | null;
	mode: string;
	currency: string;
	from: { productId: number; quantity: number };
	to: { productId: number; quantity: number };
	due: number;
	charged: number;
	creditUsed: number;
	creditAdded: number;
	creditAfter: number;
	/** When the new plan starts: the change's time, or the period's end. */
	effectiveAt: Date | null;
}

/** Who asked for a change: the merchant (its API, its dashboard) or the buyer (the customer portal). */
export type Actor = "merchant" | "buyer";

/** An event's `by`: present only when the buyer did it (the merchant's API and dashboard leave it out, as before). */
export const byWhom = (by: Actor | undefined): { by?: Actor } => (by === "buyer" ? { by } : {});

/** A cancellation at the period's end (subscriptions/period-end-cancel.ts): when, and the reason given, if any. */
export interface CancellationDetails {
	cancelAt: Date;
	reason: string | null;
	comment: string | null;
}

/** What an event may carry besides its type (outbox.ts). */
export type OutboxDetails = Pick<
	OutboxEvent,
	"transactionId" | "disputeStatus" | "refundStatus" | "pause" | "resume" | "change" | "cancellation" | "by" | "metrics"
>;

export const outboxEventSchema = new Schema<OutboxEvent>(
	{
		id: String,
		type: String,
		createdAt: Date,
		transactionId: { type: Number, required: false },
		disputeStatus: { type: String, required: false },
		refundStatus: { type: String, required: false },
		pause: { type: Schema.Types.Mixed, required: false },
		resume: { type: Schema.Types.Mixed, required: false },
		change: { type: Schema.Types.Mixed, required: false },
		cancellation: { type: Schema.Types.Mixed, required: false },
		by: { type: String, required: false },
		metrics: { type: Schema.Types.Mixed, required: false },
	},
	{ _id: false },
);
