// The notifications service's contract: the events billing hands it. Types only.

export const EVENT_TYPES = [
	"TRANSACTION",
	"CONVERSION",
	"REFUND",
	"CANCELLATION",
	"SUSPENSION",
	"CARD_EXPIRING",
	"PAYMENT_METHOD_UPDATED",
	"REACTIVATION",
	"AUTHENTICATION_REQUIRED",
	"DISPUTE_OPENED",
	"DISPUTE_UPDATED",
	"DISPUTE_CLOSED",
	"SUBSCRIPTION_PAUSED",
	"SUBSCRIPTION_RESUMED",
	"CANCELLATION_SCHEDULED",
	"CANCELLATION_UNDONE",
	"SUBSCRIPTION_CHANGED",
	"SUBSCRIPTION_CHANGE_SCHEDULED",
	"SUBSCRIPTION_CHANGE_CANCELLED",
	"INVOICE_ISSUED",
	"CREDIT_NOTE_ISSUED",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A webhook event: exactly the envelope the merchant receives (transaction_id is left out when null). */
export interface WebhookEvent {
	/** A UUID; receivers dedupe on it. */
	id: string;
	type: EventType;
	/** Local date-time, as the API prints date-times. */
	createdAt: string;
	accountId: number;
	customerId: number;
	transaction_id: number | null;
	data: Record<string, unknown>;
}

export interface NotificationsActions {
	/**
	 * The outbox relay's batches: each event stored before it answers, keyed by its id (a repeat is a no-op), in a few
	 * commands; the first attempts go out in the batch's order.
	 */
	/** The customer portal's sign-in email to a buyer (docs/portal.md#email-sign-in); one per customer and minute. */
	"notifications.enqueuePortalSignIn": {
		params: { accountId: number; customerId: number; to: string; name: string; productId: number };
		result: { queued: boolean };
	};
	"notifications.enqueueAll": {
		/** `resent`: the sender may have sent these before (a sweep's hand-over), so each is looked up before it is listed. */
		params: { events: WebhookEvent[]; resent?: boolean };
		result: { accepted: number };
	};
}
