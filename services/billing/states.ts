// The billing state machines, each in one place.

/**
 * Customer (one subscription of one buyer to one product):
 *   PENDING  -> ACTIVE       first charge approved, hold placed, or first charge scheduled
 *   PENDING  -> DECLINED     first charge or hold declined or failed (final)
 *   PENDING  -> ABANDONED    the checkout lost its session before paying (final)
 *   ACTIVE   -> SUSPENDED    renewal attempts exhausted, or a hard decline (lost, stolen, expired card)
 *   SUSPENDED -> ACTIVE      a new card (card update session) paid the renewal owed (card-update.ts)
 *   ACTIVE   -> PAUSED       the merchant paused it: no renewal runs (subscriptions/pause.ts)
 *   PAUSED   -> ACTIVE       resumed, by the merchant or at its resumeAt by the renewal cycle (pause.ts)
 *   ACTIVE, PAUSED, SUSPENDED, DECLINED, ABANDONED -> UNSUBSCRIBED  the merchant unsubscribed the customer (final)
 *   PENDING  -> UNSUBSCRIBED only once older than 10 minutes: its checkout died (unsubscribe.ts
 *                            checks the age; a younger one is mid-checkout and must settle first)
 * Updates are built from this table by lifecycle.ts.
 */
export enum CustomerStatus {
	Pending = "PENDING",
	Active = "ACTIVE",
	Declined = "DECLINED",
	Abandoned = "ABANDONED",
	Unsubscribed = "UNSUBSCRIBED",
	/** Renewals failed until the retry days ran out, or a hard decline; no more charges until a new card pays what is owed. */
	Suspended = "SUSPENDED",
	/** The merchant paused it: no renewal runs until it is resumed; the paid time left is kept (subscriptions/pause.ts). */
	Paused = "PAUSED",
}

export const CUSTOMER_TRANSITIONS: Record<CustomerStatus, CustomerStatus[]> = {
	[CustomerStatus.Pending]: [CustomerStatus.Active, CustomerStatus.Declined, CustomerStatus.Abandoned, CustomerStatus.Unsubscribed],
	[CustomerStatus.Active]: [CustomerStatus.Unsubscribed, CustomerStatus.Suspended, CustomerStatus.Paused],
	[CustomerStatus.Paused]: [CustomerStatus.Active, CustomerStatus.Unsubscribed],
	[CustomerStatus.Suspended]: [CustomerStatus.Active, CustomerStatus.Unsubscribed],
	[CustomerStatus.Declined]: [CustomerStatus.Unsubscribed],
	[CustomerStatus.Abandoned]: [CustomerStatus.Unsubscribed],
	[CustomerStatus.Unsubscribed]: [],
};

/** A subscription holds its duplicate-check lock while in these states (a paused one is still the buyer's subscription). */
export const HOLDS_SUBSCRIPTION: CustomerStatus[] = [CustomerStatus.Pending, CustomerStatus.Active, CustomerStatus.Paused];

export enum TransactionType {
	/** The first charge of a subscription (at checkout, or when a trial ends). */
	SubscriptionStart = "SUBSCRIPTION_START",
	/** An authorization hold placed at checkout for PREAUTHORIZE products. */
	Preauthorization = "PREAUTHORIZATION",
	/** A merchant-initiated charge of a later period. */
	Renewal = "RENEWAL",
	Refunded = "REFUNDED",
	/** What a subscription's change in place charged at once: an upgrade's prorated difference (changes/). */
	SubscriptionChange = "SUBSCRIPTION_CHANGE",
	/** A lost dispute: the disputed amount, negative, taken back by the card network (disputes/notices.ts). */
	Chargeback = "CHARGEBACK",
	/** The usage of an ended subscription's last period, charged at its end with no base fee (usage/final-usage.ts). */
	FinalUsage = "FINAL_USAGE",
}

export enum TransactionStatus {
	Approved = "APPROVED",
	Declined = "DECLINED",
	/** The processor failed or timed out; nothing was charged. */
	Error = "ERROR",
}

/**
 * Refund status of a transaction:
 *   REFUNDABLE     -> REFUNDED      its whole amount has been refunded (stays REFUNDABLE while anything is left)
 *   REFUNDABLE     -> DISPUTED      the buyer disputed it: no refund until the dispute is decided
 *   DISPUTED       -> REFUNDABLE    the dispute was won and something is left to refund
 *   DISPUTED       -> REFUNDED      the dispute was won and nothing is left to refund
 *   DISPUTED       -> CHARGED_BACK  the dispute was lost: the network took the money back
 *   NOT_REFUNDABLE -> VOIDED        a hold was released before capture
 * NOT_REFUNDABLE: declined and failed transactions, holds, refunds and chargebacks themselves.
 */
export enum RefundStatus {
	Refundable = "REFUNDABLE",
	Refunded = "REFUNDED",
	NotRefundable = "NOT_REFUNDABLE",
	Voided = "VOIDED",
	Disputed = "DISPUTED",
	ChargedBack = "CHARGED_BACK",
}

export const REFUND_STATUS_TRANSITIONS: Record<RefundStatus, RefundStatus[]> = {
	[RefundStatus.Refundable]: [RefundStatus.Refunded, RefundStatus.Disputed],
	[RefundStatus.Disputed]: [RefundStatus.Refundable, RefundStatus.Refunded, RefundStatus.ChargedBack],
	[RefundStatus.NotRefundable]: [RefundStatus.Voided],
	[RefundStatus.Refunded]: [],
	[RefundStatus.Voided]: [],
	[RefundStatus.ChargedBack]: [],
};

/**
 * A dispute (a chargeback the buyer asked their bank for), as its processor reports it:
 *   NEEDS_RESPONSE -> UNDER_REVIEW  evidence was submitted (or the processor says it is reviewing)
 *   NEEDS_RESPONSE, UNDER_REVIEW -> WON, LOST  the network decided (final)
 * A dispute never goes back: a processor's late notice of an earlier stage changes nothing.
 */
export enum DisputeStatus {
	NeedsResponse = "NEEDS_RESPONSE",
	UnderReview = "UNDER_REVIEW",
	Won = "WON",
	Lost = "LOST",
}

export const DISPUTE_TRANSITIONS: Record<DisputeStatus, DisputeStatus[]> = {
	[DisputeStatus.NeedsResponse]: [DisputeStatus.UnderReview, DisputeStatus.Won, DisputeStatus.Lost],
	[DisputeStatus.UnderReview]: [DisputeStatus.Won, DisputeStatus.Lost],
	[DisputeStatus.Won]: [],
	[DisputeStatus.Lost]: [],
};

/**
 * A refund (billing's own record of one refund operation, keyed by its refund id):
 *   (none)   -> RESERVED   recorded, then its amount reserved on the transaction
 *   RESERVED -> COMPLETED  the processor refunded: the REFUNDED transaction is recorded
 *   RESERVED -> FAILED     the processor did not refund (or the refund never reserved
 *                          anything): the reservation is given back
 *   RESERVED -> (deleted)  its request found nothing to reserve: the refund never existed
 * A RESERVED refund is settled by its request, a repeat with its key, or the
 * recovery sweep, whichever holds its lease.
 */
export enum RefundRecordStatus {
	Reserved = "RESERVED",
	Completed = "COMPLETED",
	Failed = "FAILED",
}

export const REFUND_RECORD_TRANSITIONS: Record<RefundRecordStatus, RefundRecordStatus[]> = {
	[RefundRecordStatus.Reserved]: [RefundRecordStatus.Completed, RefundRecordStatus.Failed],
	[RefundRecordStatus.Completed]: [],
	[RefundRecordStatus.Failed]: [],
};
