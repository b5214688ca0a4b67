// The billing service's collections: customers (subscriptions), their
// transactions, the locks that keep one active subscription per (product,
// email, card), refunds, disputes, the Stripe events applied, the MIDs' and
// recovery's counters, the six schedules (renewals, card-expiry warnings, the
// outbox, checkouts to recover, paused customers' resumes, invoicing's
// requests), change quotes, the metrics backfill's progress, sandbox accounts'
// test clocks, the timelines the merchant's lists page through, and the id
// sequences. What each record holds, and its key, is written beside its schema
// in records/ (customer.ts, transaction.ts, refund.ts, dispute.ts,
// subscription-lock.ts, counters.ts, outbox-event.ts, change-quote.ts,
// metrics.ts, test-clock.ts). The card vault and the payments ledger are the
// payments service's (services/payments/models.ts); invoices and credit notes
// are the invoicing service's (services/invoicing/models.ts).
import type { Connection, Model } from "mongoose";
import { createIdAllocator, type IdAllocator } from "../../shared/id-allocator";
import { type ScheduleSlotDoc, scheduleSchema } from "../../shared/schedule";
import { createTimelines, type Timelines } from "../../shared/timeline";
import { type ChangeQuoteDoc, changeQuoteSchema } from "./records/change-quote";
import {
	type MidCapDoc,
	type MidStatsDoc,
	midCapSchema,
	midStatsSchema,
	type RecoveryStatsDoc,
	recoveryStatsSchema,
} from "./records/counters";
import { type CustomerDoc, customerSchema } from "./records/customer";
import { type DisputeDoc, disputeSchema, type ProcessorEventDoc, processorEventSchema } from "./records/dispute";
import { type MetricsBackfillDoc, metricsBackfillSchema } from "./records/metrics";
import { type RefundDoc, refundSchema } from "./records/refund";
import { type SubscriptionLockDoc, subscriptionLockSchema } from "./records/subscription-lock";
import { type TestClockDoc, testClockSchema } from "./records/test-clock";
import { type TransactionDoc, transactionSchema } from "./records/transaction";

export interface BillingDb {
	customers: Model<CustomerDoc>;
	transactions: Model<TransactionDoc>;
	subscriptionLocks: Model<SubscriptionLockDoc>;
	refunds: Model<RefundDoc>;
	disputes: Model<DisputeDoc>;
	/** Stripe's events applied, by `<midId>:<event id>`. */
	processorEvents: Model<ProcessorEventDoc>;
	recoveryStats: Model<RecoveryStatsDoc>;
	/** Each MID's counts by day (mid-stats.ts). */
	midStats: Model<MidStatsDoc>;
	/** Each MID's cap counter by `<midId>:<YYYY-MM>`: sales and reservations (mid-stats/cap-reservations.ts). */
	midCaps: Model<MidCapDoc>;
	/** The backfill's progress, per collection it walks (backfill/metrics-backfill.ts). */
	metricsBackfill: Model<MetricsBackfillDoc>;
	/** Binding quotes of subscription changes, by their random id (changes/). */
	changeQuotes: Model<ChangeQuoteDoc>;
	/** Customers by the hour they are due (shared/schedule.ts): the renewal cycle finds them by key. */
	renewalSchedule: Model<ScheduleSlotDoc>;
	/** Outbox events by the time they were written (outbox.ts): the relay's sweep finds them by key. */
	outboxSchedule: Model<ScheduleSlotDoc>;
	cardExpirySchedule: Model<ScheduleSlotDoc>;
	/** Checkouts by the time they opened (checkout-recovery.ts): the recovery finds one left PENDING by key. */
	checkoutSchedule: Model<ScheduleSlotDoc>;
	/** Paused customers by the hour of their resumeAt (subscriptions/pause.ts): the renewal cycle resumes them by key. */
	resumeSchedule: Model<ScheduleSlotDoc>;
	/** Transactions whose invoice or credit note invoicing has not answered for yet, by when they were asked for (outbox/issue-requests.ts). */
	issueRequestSchedule: Model<ScheduleSlotDoc>;
	/** Sandbox accounts' test clocks, by the account's id (account-time.ts). */
	testClocks: Model<TestClockDoc>;
	/** The merchant's lists of customers and transactions (lists/pages.ts). */
	timelines: Timelines;
	ids: { customers: IdAllocator; transactions: IdAllocator; disputes: IdAllocator };
}

export function createBillingModels(connection: Connection): BillingDb {
	return {
		customers: connection.model("Customer", customerSchema, "customers"),
		transactions: connection.model("Transaction", transactionSchema, "transactions"),
		subscriptionLocks: connection.model("SubscriptionLock", subscriptionLockSchema, "subscription_locks"),
		refunds: connection.model("Refund", refundSchema, "refunds"),
		disputes: connection.model("Dispute", disputeSchema, "disputes"),
		processorEvents: connection.model("ProcessorEvent", processorEventSchema, "processor_events"),
		recoveryStats: connection.model("RecoveryStats", recoveryStatsSchema, "recovery_stats"),
		midStats: connection.model("MidStats", midStatsSchema, "mid_stats"),
		midCaps: connection.model("MidCap", midCapSchema, "mid_caps"),
		metricsBackfill: connection.model("MetricsBackfill", metricsBackfillSchema, "metrics_backfill"),
		changeQuotes: connection.model("ChangeQuote", changeQuoteSchema, "change_quotes"),
		renewalSchedule: connection.model("RenewalSchedule", scheduleSchema(), "renewal_schedule"),
		outboxSchedule: connection.model("OutboxSchedule", scheduleSchema(), "outbox_schedule"),
		cardExpirySchedule: connection.model("CardExpirySchedule", scheduleSchema(), "card_expiry_schedule"),
		checkoutSchedule: connection.model("CheckoutSchedule", scheduleSchema(), "checkout_schedule"),
		resumeSchedule: connection.model("ResumeSchedule", scheduleSchema(), "resume_schedule"),
		issueRequestSchedule: connection.model("IssueRequestSchedule", scheduleSchema(), "issue_request_schedule"),
		testClocks: connection.model("TestClock", testClockSchema, "test_clocks"),
		timelines: createTimelines(connection),
		ids: {
			customers: createIdAllocator(connection, "customers", 100),
			transactions: createIdAllocator(connection, "transactions", 100),
			disputes: createIdAllocator(connection, "disputes", 10),
		},
	};
}
