// The billing service's collections: customers (subscriptions), their
// transactions, the locks that keep one active subscription per (product,
// email, card), refunds, disputes, the Stripe events applied, the MIDs' and
// recovery's counters, the four schedules (renewals, card-expiry warnings,
// the outbox, checkouts to recover), the timelines the merchant's lists page
// through, and the id sequences. The card vault and the payments ledger are
// the payments service's (services/payments/models.ts).
import { type Connection, type Model, Schema } from "mongoose";
import { type CardUpdateOutcome, DeclineCategory, type FirstPaymentInput } from "../../shared/contracts/billing";
import type { EventType } from "../../shared/contracts/notifications";
import type { Authentication, DisputeEvidence } from "../../shared/contracts/payments";
import { createIdAllocator, type IdAllocator } from "../../shared/id-allocator";
import { type Lease, leaseSchema } from "../../shared/persistence";
import { type ScheduleSlotDoc, scheduleSchema } from "../../shared/schedule";
import { createTimelines, type Timelines } from "../../shared/timeline";
import { CustomerStatus, DisputeStatus, RefundRecordStatus, RefundStatus, TransactionStatus, TransactionType } from "./states";

/**
 * An event for the merchant's webhooks, written in the same single-document
 * update as the change it announces, so it exists exactly when the change
 * does. It is listed in the outbox schedule (outbox.ts) just before. The
 * outbox relay hands it to notifications, then moves its id to `relayed`.
 */
export interface OutboxEvent {
	id: string;
	type: EventType;
	createdAt: Date;
	/** The transaction a CONVERSION (its charge or hold) or an AUTHENTICATION_REQUIRED (the refused renewal) names; null: none (a scheduled first charge). Other events have none. */
	transactionId?: number | null;
	/** Every dispute's event: the dispute's status it announces (a later change must not show through an earlier event). */
	disputeStatus?: DisputeStatus;
	/** An open dispute's event: its transaction's refund status then (DISPUTED while the dispute holds it), for the same reason. */
	refundStatus?: RefundStatus;
}

/** What a card update makes the customer's: the card, and the MID that takes it. */
export type CardFields = Pick<
	CustomerDoc,
	"cardToken" | "cardFingerprint" | "cardBin" | "cardLast4" | "cardType" | "cardExpiredTime" | "midId" | "midName" | "refusedMids"
>;

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
	/** The card token a CARD_EXPIRING warning was sent for (once per card); see card-expiry.ts. */
	expiryWarnedCard?: string | null;
	/** The MIDs that refused this period's renewal (MERCHANT_ACCOUNT declines); cleared once it is approved. */
	refusedMids?: number[];
	/** When this period's renewal was first declined: every retry day counts from it (renewals/retry-state.ts); null once paid. */
	firstDeclinedAt?: Date | null;
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
	/** Held by the billing node renewing this customer right now; see renewal-lease.ts. */
	renewalLease: Lease | null;
	createdAt: Date;
}

export interface TransactionDoc {
	_id: number;
	accountId: number;
	customerId: number;
	timestamp: Date;
	success: boolean;
	type: TransactionType;
	/** Minor units; negative for refunds. */
	amount: number;
	currency: string;
	currencyId: number;
	productId: number;
	/** The payments service's number of the payment operation: the API shows it as the transaction's `transactionId`. */
	processorTransactionId: number | null;
	/** The processor's own id of it (Stripe `pi_…`, `re_…`; sandbox `sbx_…`); absent on transactions of earlier versions. */
	processorReference?: string | null;
	/** A first payment's 3-D Secure authentication; absent on the others and on transactions of earlier versions. */
	authentication?: Authentication | null;
	midId: number;
	midName: string;
	refundStatus: RefundStatus;
	status: TransactionStatus;
	paymentMethod: string;
	declineReason: string | null;
	declineCategory: DeclineCategory | null;
	idempotencyKey: string;
	/** Minor units that can still be refunded; reserved atomically before the processor is asked. */
	refundableRemaining: number;
	/**
	 * Refunds holding a reservation on `refundableRemaining` that is not settled
	 * yet: added in the reserving update, removed in the update that gives the
	 * amount back or after the REFUNDED transaction is recorded (refund-ledger.ts).
	 */
	pendingRefunds: string[];
	/** For a REFUNDED transaction: the transaction it refunds. */
	originalTransactionId: number | null;
	outbox: OutboxEvent[];
	relayed: string[];
}

/** A refund: reserved on the original transaction, then done by the processor, or given back. */
export interface RefundDoc {
	_id: string;
	accountId: number;
	transactionId: number;
	amount: number;
	status: RefundRecordStatus;
	refundTransactionId: number | null;
	createdAt: Date;
	settledAt: Date | null;
	/**
	 * Who may settle a RESERVED refund right now: the request that made it, a
	 * repeat of that request, or a billing node's recovery sweep (refund-recovery.ts).
	 * One at a time; a holder that dies lets it expire.
	 */
	lease: Lease | null;
}

/** A dispute of one transaction, as its processor reported it (disputes/notices.ts), with its events' outbox. */
export interface DisputeDoc {
	_id: number;
	accountId: number;
	customerId: number;
	/** The disputed transaction (ours). */
	transactionId: number;
	midId: number;
	/** `<midId>:<the processor's dispute id>`: a processor's notices find their dispute by it (unique). */
	processorKey: string;
	/** The processor's id of the dispute (Stripe `du_…`, the sandbox `sbxdp_…`). */
	processorReference: string;
	status: DisputeStatus;
	reason: string;
	/** Minor units of `currency`. */
	amount: number;
	currency: string;
	evidenceDueBy: Date | null;
	evidence: DisputeEvidence | null;
	evidenceSubmittedAt: Date | null;
	/** A lost dispute's CHARGEBACK transaction. */
	chargebackTransactionId: number | null;
	openedAt: Date;
	updatedAt: Date;
	closedAt: Date | null;
	outbox: OutboxEvent[];
	relayed: string[];
}

export interface SubscriptionLockDoc {
	/** Hash of (account, product, email, card fingerprint). */
	_id: string;
	customerId: number;
	createdAt: Date;
}

const options = { versionKey: false } as const;

const outboxEventSchema = new Schema<OutboxEvent>(
	{
		id: String,
		type: String,
		createdAt: Date,
		transactionId: { type: Number, required: false },
		disputeStatus: { type: String, required: false },
		refundStatus: { type: String, required: false },
	},
	{ _id: false },
);

const customerSchema = new Schema<CustomerDoc>(
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
		billingAnchor: { type: Date, default: null },
		periodsBilled: { type: Number, default: 0 },
		renewalLease: { type: leaseSchema(), default: null },
		createdAt: { type: Date, required: true },
	},
	options,
);
// Production (MongoDB) indexes for the queries that are not by key: the merchant's
// lists and the operators' renewal status. mongo-java-server ignores them.
customerSchema.index({ accountId: 1 });
customerSchema.index({ renewalActive: 1, nextRenewalTimestamp: 1 });

const transactionSchema = new Schema<TransactionDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		timestamp: { type: Date, required: true },
		success: { type: Boolean, required: true },
		type: { type: String, enum: Object.values(TransactionType), required: true },
		amount: { type: Number, required: true },
		currency: { type: String, required: true },
		currencyId: { type: Number, required: true },
		productId: { type: Number, required: true },
		processorTransactionId: { type: Number, default: null },
		processorReference: { type: String, default: null },
		authentication: { type: Schema.Types.Mixed, default: null },
		midId: { type: Number, required: true },
		midName: { type: String, required: true },
		refundStatus: { type: String, enum: Object.values(RefundStatus), required: true },
		status: { type: String, enum: Object.values(TransactionStatus), required: true },
		paymentMethod: { type: String, required: true },
		declineReason: { type: String, default: null },
		declineCategory: { type: String, enum: [...Object.values(DeclineCategory), null], default: null },
		idempotencyKey: { type: String, required: true },
		refundableRemaining: { type: Number, required: true, min: 0 },
		pendingRefunds: { type: [String], default: [] },
		originalTransactionId: { type: Number, default: null },
		outbox: { type: [outboxEventSchema], default: [] },
		relayed: { type: [String], default: [] },
	},
	options,
);
// One transaction per processor operation, even if a step is retried.
transactionSchema.index({ idempotencyKey: 1 }, { unique: true });
transactionSchema.index({ customerId: 1, _id: 1 });

const refundSchema = new Schema<RefundDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		transactionId: { type: Number, required: true },
		amount: { type: Number, required: true },
		status: { type: String, enum: Object.values(RefundRecordStatus), required: true },
		refundTransactionId: { type: Number, default: null },
		createdAt: { type: Date, required: true },
		settledAt: { type: Date, default: null },
		lease: { type: leaseSchema(), default: null },
	},
	options,
);
// The recovery sweep looks for RESERVED refunds, which are few.
refundSchema.index({ status: 1, createdAt: 1 });

const disputeSchema = new Schema<DisputeDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		transactionId: { type: Number, required: true },
		midId: { type: Number, required: true },
		processorKey: { type: String, required: true },
		processorReference: { type: String, required: true },
		status: { type: String, enum: Object.values(DisputeStatus), required: true },
		reason: { type: String, required: true },
		amount: { type: Number, required: true },
		currency: { type: String, required: true },
		evidenceDueBy: { type: Date, default: null },
		evidence: { type: Schema.Types.Mixed, default: null },
		evidenceSubmittedAt: { type: Date, default: null },
		chargebackTransactionId: { type: Number, default: null },
		openedAt: { type: Date, required: true },
		updatedAt: { type: Date, required: true },
		closedAt: { type: Date, default: null },
		outbox: { type: [outboxEventSchema], default: [] },
		relayed: { type: [String], default: [] },
	},
	options,
);
// One dispute per processor dispute, however often its notices come.
disputeSchema.index({ processorKey: 1 }, { unique: true });

/** An event Stripe sent to a MID's endpoint, once applied (disputes/stripe-events.ts): Stripe's repeat is not applied again. */
export interface StripeEventDoc {
	/** `<midId>:<Stripe's event id>`. */
	_id: string;
	midId: number;
	/** The dispute's or the warning's id at Stripe (`du_…`, `issfr_…`). */
	reference: string;
	appliedAt: Date;
}

const stripeEventSchema = new Schema<StripeEventDoc>({ _id: String, midId: Number, reference: String, appliedAt: Date }, options);

const subscriptionLockSchema = new Schema<SubscriptionLockDoc>(
	{ _id: String, customerId: { type: Number, required: true }, createdAt: { type: Date, required: true } },
	options,
);

export interface BillingDb {
	customers: Model<CustomerDoc>;
	transactions: Model<TransactionDoc>;
	subscriptionLocks: Model<SubscriptionLockDoc>;
	refunds: Model<RefundDoc>;
	disputes: Model<DisputeDoc>;
	/** Stripe's events applied, by `<midId>:<event id>`. */
	stripeEvents: Model<StripeEventDoc>;
	recoveryStats: Model<RecoveryStatsDoc>;
	/** Each MID's counts by day (mid-stats.ts). */
	midStats: Model<MidStatsDoc>;
	/** Customers by the hour they are due (shared/schedule.ts): the renewal cycle finds them by key. */
	renewalSchedule: Model<ScheduleSlotDoc>;
	/** Outbox events by the time they were written (outbox.ts): the relay's sweep finds them by key. */
	outboxSchedule: Model<ScheduleSlotDoc>;
	cardExpirySchedule: Model<ScheduleSlotDoc>;
	/** Checkouts by the time they opened (checkout-recovery.ts): the recovery finds one left PENDING by key. */
	checkoutSchedule: Model<ScheduleSlotDoc>;
	/** The merchant's lists of customers and transactions (lists/pages.ts). */
	timelines: Timelines;
	ids: { customers: IdAllocator; transactions: IdAllocator; disputes: IdAllocator };
}

/** A MID's counts for one day (mid-stats.ts), keyed `<midId>:<YYYY-MM-DD>`; amounts in minor units by currency. */
export interface MidStatsDoc {
	_id: string;
	midId: number;
	day: string;
	sales?: number;
	declined?: number;
	refunds?: number;
	disputes?: number;
	chargebacks?: number;
	salesAmount?: Record<string, number>;
	refundAmount?: Record<string, number>;
	disputeAmount?: Record<string, number>;
}

const midStatsSchema = new Schema<MidStatsDoc>(
	{
		_id: String,
		midId: Number,
		day: String,
		sales: Number,
		declined: Number,
		refunds: Number,
		disputes: Number,
		chargebacks: Number,
		salesAmount: Schema.Types.Mixed,
		refundAmount: Schema.Types.Mixed,
		disputeAmount: Schema.Types.Mixed,
	},
	{ versionKey: false, minimize: false },
);

/** Recovery counts of an account for a month (recovery.ts), keyed `<accountId>:<YYYY-MM>`. */
export interface RecoveryStatsDoc {
	_id: string;
	accountId: number;
	month: string;
	/** Renewals declined for the first time in their period. */
	entered: number;
	/** Renewals approved after a decline in their period. */
	recovered: number;
	/** Minor units recovered, by currency. */
	revenue: Record<string, number>;
}

const recoveryStatsSchema = new Schema<RecoveryStatsDoc>(
	{ _id: String, accountId: Number, month: String, entered: Number, recovered: Number, revenue: Schema.Types.Mixed },
	{ versionKey: false, minimize: false },
);

export function createBillingModels(connection: Connection): BillingDb {
	return {
		customers: connection.model("Customer", customerSchema, "customers"),
		transactions: connection.model("Transaction", transactionSchema, "transactions"),
		subscriptionLocks: connection.model("SubscriptionLock", subscriptionLockSchema, "subscription_locks"),
		refunds: connection.model("Refund", refundSchema, "refunds"),
		disputes: connection.model("Dispute", disputeSchema, "disputes"),
		stripeEvents: connection.model("StripeEvent", stripeEventSchema, "stripe_events"),
		recoveryStats: connection.model("RecoveryStats", recoveryStatsSchema, "recovery_stats"),
		midStats: connection.model("MidStats", midStatsSchema, "mid_stats"),
		renewalSchedule: connection.model("RenewalSchedule", scheduleSchema(), "renewal_schedule"),
		outboxSchedule: connection.model("OutboxSchedule", scheduleSchema(), "outbox_schedule"),
		cardExpirySchedule: connection.model("CardExpirySchedule", scheduleSchema(), "card_expiry_schedule"),
		checkoutSchedule: connection.model("CheckoutSchedule", scheduleSchema(), "checkout_schedule"),
		timelines: createTimelines(connection),
		ids: {
			customers: createIdAllocator(connection, "customers", 100),
			transactions: createIdAllocator(connection, "transactions", 100),
			disputes: createIdAllocator(connection, "disputes", 10),
		},
	};
}
