// The customers collection: one buyer's subscription to one product, keyed by
// its numeric id, with its card, its schedule, its renewal lease and its
// outbox.

import { Schema } from "mongoose";
import type { CapReservation, CardUpdateOutcome, FirstPaymentInput } from "../../../shared/contracts/billing";
import { type Lease, leaseSchema } from "../../../shared/persistence";
import type { PeriodDiscount, SubscriptionPeriod } from "../changes/rules/subscription-period";
import type { CustomerCoupon } from "../coupons/discount";
import { CustomerStatus } from "../states";
import type { Contribution } from "./metrics";
import { type Actor, type CancellationDetails, type OutboxEvent, outboxEventSchema } from "./outbox-event";

/** What a card update makes the customer's: the card, and the MID that takes it. */
export type CardFields = Pick<
	CustomerDoc,
	"cardToken" | "cardFingerprint" | "cardBin" | "cardLast4" | "cardType" | "cardExpiredTime" | "midId" | "midName" | "refusedMids"
>;

/** A paused subscription: the time left until `dueAt` at `pausedAt` is kept, and counted again from the resume. */
export interface CustomerPause {
	pausedAt: Date;
	resumeAt: Date | null;
	/** The nextRenewalTimestamp it had when it was paused. */
	dueAt: Date;
}

/** A cancellation at the period's end, as scheduled: when it ends, why, and who asked. */
export interface ScheduledCancellation extends CancellationDetails {
	scheduledAt: Date;
	by: Actor;
}

/**
 * The usage of an ended subscription's last period, charged at once (usage/final-usage.ts): DUE until charged
 * (CHARGED, DECLINED: not retried) or found to come to nothing (NONE).
 */
export interface FinalUsage {
	period: number;
	start: Date;
	end: Date;
	state: "DUE" | "CHARGED" | "DECLINED" | "NONE";
}

/** A card update paused for the buyer's challenge on the renewal owed (card-update.ts). */
export interface AwaitingCardUpdate {
	attemptId: string;
	/** The card update session, released if the update ends unpaid without its frame. */
	sessionId: string;
	card: CardFields;
	/** True when it pays the renewal owed; false when it only sets the card up for later charges. */
	owes: boolean;
	/** The duplicate-subscription lock the update took for the new card; let go if it ends unpaid. */
	newLock: string | null;
	/** The challenge's end (the card update session's). */
	until: Date;
}

/** Credit being paid back after the customer unsubscribed (changes/credit-refund.ts): the refunds, by their ids. */
export interface CreditRefund {
	currency: string;
	refunds: { transactionId: number; amount: number; refundId: string }[];
}

/** A change's charge sent to the processor: its quote, and when it was listed for the recovery sweep. */
export interface ChangeInFlight {
	quoteId: string;
	listedAt: Date;
}

export interface CustomerDoc {
	_id: number;
	accountId: number;
	/** The account's environment at signup: which processor bills this subscription. */
	environment: "sandbox" | "production";
	email: string;
	name: string;
	lastName: string;
	status: CustomerStatus;
	productId: number;
	subscriptionTimestamp: Date;
	nextRenewalTimestamp: Date | null;
	lastTimeBilled: Date | null;
	unsubscriptionTimestamp: Date | null;
	renewalActive: boolean;
	attempts: number;
	cardBin: string;
	cardLast4: string;
	cardType: string;
	/** MMYY */
	cardExpiredTime: string;
	/** The processor's vault reference: renewals charge it without the card number. */
	cardToken: string;
	/** Keyed hash of the card number, for the duplicate check. */
	cardFingerprint: string;
	midId: number;
	midName: string;
	/** The card token a CARD_EXPIRING warning was sent for (once per card); see expiry-warnings.ts. */
	expiryWarnedCard?: string | null;
	/** The MIDs that refused this period's renewal (MERCHANT_ACCOUNT declines); cleared once it is approved. */
	refusedMids?: number[];
	/** When this period's renewal was first declined: every retry day counts from it (renewals/retry-state.ts); null once paid. */
	firstDeclinedAt?: Date | null;
	/** The key of this period's last declined try: a retry asks under its own key only once this one is known not approved (renewals/period-keys.ts). */
	lastTryKey?: string | null;
	sessionId: string;
	/** The checkout attempt that opened it: names its first payment at the processor (checkout-recovery.ts). */
	attemptId?: string | null;
	additionalData: Record<string, unknown> | null;
	/** The PREAUTHORIZE hold to capture when the trial ends, if any. */
	authorizationId: number | null;
	/** A first payment waiting for the buyer's challenge (3-D Secure): the product's terms it settles by afterwards. */
	awaitingChallenge?: { product: FirstPaymentInput["product"] } | null;
	/** A card update whose renewal owed waits for the buyer's challenge: what it writes once paid (card-update.ts). */
	awaitingCardUpdate?: AwaitingCardUpdate | null;
	/**
	 * The card network's id of the card's first payment or set-up, the buyer present: each renewal refers to it, which
	 * keeps renewals exempt from authentication (docs/authentication.md). Null when the processor keeps it itself.
	 */
	networkTransactionId?: string | null;
	/** The last card update that paid or paused, and what it came to: a repeated continuation answers it again. */
	lastCardUpdate?: { attemptId: string; outcome: CardUpdateOutcome } | null;
	outbox: OutboxEvent[];
	/** The ids of the events relayed so far: a listing whose event is here is done. */
	relayed: string[];
	/** The first charge's date (made or scheduled): period n is due at anchor + n periods, so month ends do not drift. */
	billingAnchor: Date | null;
	/** Charges made on the schedule so far. */
	periodsBilled: number;
	/**
	 * The value of periodsBilled when billingAnchor's period began: period n is due at anchor + (n - anchorPeriod)
	 * periods. 0 (or absent) unless a resume restarted the schedule from the resume (subscriptions/pause.ts).
	 */
	anchorPeriod?: number;
	/** While PAUSED: when it was paused, when it resumes by itself (null: only when the merchant resumes it), and the renewal that was due then. */
	pause?: CustomerPause | null;
	/**
	 * A cancellation scheduled for the period's end (subscriptions/period-end-cancel.ts): while ACTIVE, it equals
	 * nextRenewalTimestamp, where the renewal cycle ends the subscription instead of charging it. Absent or null: none.
	 */
	cancellation?: ScheduledCancellation | null;
	/** An ended subscription's final usage charge (usage/final-usage.ts); absent or null: none. */
	finalUsage?: FinalUsage | null;
	/** Held by the billing node renewing this customer right now; see renewal-lease.ts. */
	renewalLease: Lease | null;
	/** Seats (issue 36): the amount of each charge is the product's price × quantity. Absent: 1. */
	quantity?: number;
	/** Minor units of the period's currency, never negative: what a downgrade gave back, spent by later charges first. Absent: 0. */
	credit?: number;
	/**
	 * The current period as a change in place counts it (changes/rules/subscription-period.ts): written by the first change,
	 * moved on by each renewal after. Absent for a customer that never changed: its period is derived from its product
	 * and schedule (changes/customer-period.ts). Trusted only while its `end` is the customer's nextRenewalTimestamp.
	 */
	period?: SubscriptionPeriod | null;
	/**
	 * The coupon in force (docs/coupons.md): its terms and the charges it still discounts. Written with the PENDING
	 * customer when its checkout brings one (so a crashed checkout's redemption is given back), or by the merchant.
	 */
	coupon?: CustomerCoupon | null;
	/** The MID cap's reservation of a checkout's first charge, written with the PENDING customer (subscriptions/checkout-cap.ts). */
	capReservation?: CapReservation | null;
	/** The coupon the current period's charge was discounted by: a change prorates what was paid (changes/customer-period.ts). Absent or null: none. */
	periodCoupon?: PeriodDiscount | null;
	/** The last quote applied to this customer (changes/): a repeat of it is refused as used. */
	lastQuoteId?: string | null;
	/**
	 * A change whose charge was sent and not yet settled (changes/change-charge.ts): while set, the change keeps
	 * the renewal lease and no renewal claims the customer; a change whose node died is settled by the recovery sweep.
	 */
	changeInFlight?: ChangeInFlight | null;
	/** The credit's refunds while they are being made; the credit they take is already off `credit`. */
	creditRefund?: CreditRefund | null;
	/**
	 * What the metrics last counted of this customer (entries/customer-entry.ts): each update counts the movement
	 * from it to the new state, and writes the new state here in the same update. Absent: never counted (a customer
	 * older than the metrics until the backfill counts it).
	 */
	counted?: Contribution | null;
	createdAt: Date;
}

const options = { versionKey: false } as const;

export const customerSchema = new Schema<CustomerDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		environment: { type: String, enum: ["sandbox", "production"], required: true },
		email: { type: String, required: true },
		name: { type: String, required: true },
		lastName: { type: String, default: "" },
		status: { type: String, enum: Object.values(CustomerStatus), required: true },
		productId: { type: Number, required: true },
		subscriptionTimestamp: { type: Date, required: true },
		nextRenewalTimestamp: { type: Date, default: null },
		lastTimeBilled: { type: Date, default: null },
		unsubscriptionTimestamp: { type: Date, default: null },
		renewalActive: { type: Boolean, required: true },
		attempts: { type: Number, required: true },
		cardBin: { type: String, required: true },
		cardLast4: { type: String, required: true },
		cardType: { type: String, required: true },
		cardExpiredTime: { type: String, required: true },
		cardToken: { type: String, required: true },
		cardFingerprint: { type: String, required: true },
		midId: { type: Number, required: true },
		midName: { type: String, required: true },
		refusedMids: { type: [Number], default: undefined },
		firstDeclinedAt: { type: Date, default: null },
		lastTryKey: { type: String, default: null },
		expiryWarnedCard: { type: String, default: null },
		sessionId: { type: String, required: true },
		attemptId: { type: String, default: null },
		additionalData: { type: Schema.Types.Mixed, default: null },
		authorizationId: { type: Number, default: null },
		awaitingChallenge: { type: Schema.Types.Mixed, default: null },
		awaitingCardUpdate: { type: Schema.Types.Mixed, default: null },
		lastCardUpdate: { type: Schema.Types.Mixed, default: null },
		networkTransactionId: { type: String, default: null },
		outbox: { type: [outboxEventSchema], default: [] },
		relayed: { type: [String], default: [] },
		counted: { type: Schema.Types.Mixed, default: undefined },
		billingAnchor: { type: Date, default: null },
		periodsBilled: { type: Number, default: 0 },
		anchorPeriod: { type: Number, default: 0 },
		pause: { type: Schema.Types.Mixed, default: null },
		cancellation: { type: Schema.Types.Mixed, default: undefined },
		finalUsage: { type: Schema.Types.Mixed, default: undefined },
		renewalLease: { type: leaseSchema(), default: null },
		quantity: { type: Number, default: undefined },
		credit: { type: Number, default: undefined },
		period: { type: Schema.Types.Mixed, default: undefined },
		lastQuoteId: { type: String, default: undefined },
		changeInFlight: { type: Schema.Types.Mixed, default: undefined },
		creditRefund: { type: Schema.Types.Mixed, default: undefined },
		coupon: { type: Schema.Types.Mixed, default: undefined },
		capReservation: { type: Schema.Types.Mixed, default: undefined },
		periodCoupon: { type: Schema.Types.Mixed, default: undefined },
		createdAt: { type: Date, required: true },
	},
	options,
);
// Production (MongoDB) indexes for the queries that are not by key: the merchant's
// lists and the operators' renewal status. mongo-java-server ignores them.
customerSchema.index({ accountId: 1 });
customerSchema.index({ renewalActive: 1, nextRenewalTimestamp: 1 });

/** A declined renewal of this period is being retried (a MID's refusal included): the period is owed, not paid. */
export const renewalOwed = (customer: Pick<CustomerDoc, "attempts" | "firstDeclinedAt" | "refusedMids">) =>
	customer.attempts > 0 || Boolean(customer.firstDeclinedAt) || (customer.refusedMids?.length ?? 0) > 0;

/** A renewal try was the period's first decline: no decline before it in this period. */
export const firstDecline = (customer: Pick<CustomerDoc, "attempts" | "refusedMids">) =>
	customer.attempts === 0 && !customer.refusedMids?.length;
