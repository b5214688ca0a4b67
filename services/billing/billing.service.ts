// Subscriptions and their money, by card token: customers, transactions,
// refunds, renewals and their retries, card updates, disputes, changes in
// place, pauses, coupons on customers and a sandbox account's test clock;
// money moves through the payments service (payments.ts). The checkout
// service calls the checkout and card update steps, refunds calls
// refundTransaction, sessions asks whether a customer can take a card update,
// metrics asks for an account's now, and the gateway calls the reads, the
// operator's actions and Stripe's events. Billing writes every event in an
// outbox and its relay hands them on: webhooks to notifications, metrics
// entries to metrics, invoice requests to invoicing (outbox/). What runs
// besides the actions (relay, sweeps, renewal cron, sandbox notices) is in
// wiring/.

import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import type { CheckoutStepError, FirstPaymentResult } from "../../shared/contracts/billing";
import { dbMixin } from "../../shared/db.mixin";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { pageOrBadRequest } from "../../shared/list-page";
import { cardUpdateTarget, updateCard } from "./card-updates/card-update";
import { continueCardUpdate } from "./card-updates/card-update-challenge";
import { quoteView } from "./changes/change-answers";
import type { PlanChangeError } from "./changes/change-api-errors";
import { type ChangeDeclined, type ChangeDone, cancelPendingChange, changeSubscription } from "./changes/change-apply";
import { storeQuote } from "./changes/change-quote";
import { type CreditRefundDone, refundCredit } from "./changes/credit-refund";
import type { BillingDeps } from "./deps";
import { getDispute, submitEvidence } from "./disputes/disputes";
import { applyAdyenNotification, applyStripeEvent, waitsForStripeRetry } from "./disputes/processor-events";
import { billingErrors } from "./errors";
import { listCustomersPage, listDisputesPage, listTransactionsPage, type TransactionListQuery } from "./lists/pages";
import { buyerByEmail, buyerSubscriptions, getCustomer, getTransaction, listCustomers, listTransactions } from "./lists/reads";
import { midHealth } from "./mid-stats/mid-health";
import { type BillingDb, createBillingModels } from "./models";
import type { RelayTargets } from "./outbox/outbox-relay";
import { refundTransaction } from "./refunds/refund-ledger";
import { recoveryOf } from "./renewals/recovery";
import { renewalStatus } from "./renewals/renewal-cycle";
import { advanceClock, type RenewalRunError, type RenewalRuns, runRenewals, runTimeoutMs } from "./renewals/renewal-runs";
import { schemas } from "./schemas";
import { releaseForCheckout, reserveForCheckout } from "./subscriptions/checkout-cap";
import {
	abandonSubscription,
	continueFirstPayment,
	firstPayment,
	openSubscription,
	type SettledFirstPayment,
} from "./subscriptions/checkout-payments";
import { attachCoupon, removeCoupon } from "./subscriptions/customer-coupon";
import { pauseCustomer, resumeCustomer } from "./subscriptions/pause";
import { scheduleCancellation, undoCancellation } from "./subscriptions/period-end-cancel";
import { unsubscribe } from "./subscriptions/unsubscribe";
import { foundOrNotFound, usagePreview } from "./usage/usage-preview";
import { usageSubjects } from "./usage/usage-subjects";
import { type Background, startBackground } from "./wiring/background";

interface Locals {
	db: BillingDb;
	deps: BillingDeps;
	background: Background;
}

type BillingAction = ActionSchema<Service & Locals>;

/**
 * The one way an action hands the outbox events it wrote to the relay, so their webhooks go out at once: its domain
 * function writes them and returns, `toRelay` names the records it wrote them on (or gives them as written), the
 * relay is kicked with those, and then the action answers (`answer`: by default, errors as values). The domain
 * functions of these actions never kick the relay themselves; only the node's background work does, where it writes
 * (renewal batches, also those runRenewals asks for, the sweeps and the sandbox's notices: wiring/).
 */
function thenRelay<P, R>(
	params: object,
	fn: (deps: Locals["deps"], input: P) => Promise<R>,
	toRelay: (input: P, result: R) => RelayTargets,
	answer: (this: Service & Locals, result: R, input: P) => unknown = result => errorAsValue(result as string),
): BillingAction {
	return {
		params: params as ActionSchema["params"],
		async handler(ctx: Context<P>) {
			const result = await fn(this.deps, ctx.params);
			this.deps.relay(toRelay(ctx.params, result));
			return answer.call(this, result, ctx.params);
		},
	};
}

/**
 * A renewal run on this node (renewals/renewal-runs.ts); its refusals answer 409. It may take a while: its callers wait
 * runTimeoutMs (Moleculer's action `timeout`, which its types leave out; read when the service registers its actions,
 * once the configuration is set).
 */
function renewalRunAction<P, R>(
	params: object,
	fn: (runs: RenewalRuns, input: P) => Promise<R | RenewalRunError>,
): BillingAction & { timeout: number } {
	return {
		params: params as ActionSchema["params"],
		get timeout() {
			return runTimeoutMs();
		},
		async handler(ctx: Context<P>) {
			return billingErrors.orFail(await fn(this.background, ctx.params));
		},
	};
}

const ofObject = <R extends object>(result: R | string): R | null => (typeof result === "object" ? result : null);

/** A first payment's: its transaction and customer as written (settleFirstPayment); nothing when it failed or waits for the buyer. */
const firstPaymentRelay = (_: unknown, result: SettledFirstPayment | string): RelayTargets => ofObject(result)?.toRelay ?? {};
const firstPaymentAnswer = (result: SettledFirstPayment | CheckoutStepError) =>
	errorAsValue(ofObject(result)?.answer ?? (result as string));

/** A card update's: its customer, and its charge when one was attempted. */
const cardUpdateRelay = (_: unknown, result: Pick<FirstPaymentResult, "customer" | "transaction"> | string): RelayTargets => {
	const done = ofObject(result);
	return { customers: done ? [done.customer.id] : [], transactions: done?.transaction ? [done.transaction.id] : [] };
};

/** A coupon attached or removed: its customer (a METRICS event may wait on it). */
const couponRelay = (input: { id: number }, result: unknown): RelayTargets => (typeof result === "object" ? { customers: [input.id] } : {});

/** A change's: its customer, and its charge when one was made (a declined one's too). */
const changeRelay = (_: unknown, result: ChangeDone | ChangeDeclined | string): RelayTargets => ofObject(result)?.toRelay ?? {};
/** What the change made, a refusal's error, or a declined charge's 402 with its reason (once its transaction is relayed). */
const changeAnswer = (result: ChangeDone | ChangeDeclined | PlanChangeError) => {
	const done = billingErrors.orFail(result);
	if ("declined" in done) throw new ApiError(ApiErrorType.PaymentDeclined, done.declined);
	return done.answer;
};

const BillingService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "billing",
	mixins: [dbMixin("billing", createBillingModels)],

	actions: {
		openSubscription: domainAction(schemas.openSubscription, openSubscription, errorAsValue),
		abandonSubscription: domainAction(schemas.abandonSubscription, abandonSubscription, errorAsValue),
		// What these wrote is relayed as written (settleFirstPayment): nothing is read again for the webhooks.
		firstPayment: thenRelay(schemas.firstPayment, firstPayment, firstPaymentRelay, firstPaymentAnswer),
		continueFirstPayment: thenRelay(schemas.continueFirstPayment, continueFirstPayment, firstPaymentRelay, firstPaymentAnswer),
		refundTransaction: thenRelay(schemas.refundTransaction, refundTransaction, (_, result) => {
			const done = ofObject(result);
			return { transactions: done ? [done.refundTransactionId] : [] };
		}),
		unsubscribe: thenRelay(schemas.unsubscribe, unsubscribe, input => ({ customers: [input.customerId] })),
		cancelNow: thenRelay(schemas.cancelNow, unsubscribe, input => ({ customers: [input.customerId] })),
		// POST /api/customer/{id}/pause and /resume (subscriptions/pause.ts): the customer as it is now, or a 404 or 409.
		pauseCustomer: thenRelay(
			schemas.pauseCustomer,
			pauseCustomer,
			input => ({ customers: [input.id] }),
			result => billingErrors.orFail(result),
		),
		resumeCustomer: thenRelay(
			schemas.resumeCustomer,
			resumeCustomer,
			input => ({ customers: [input.id] }),
			result => billingErrors.orFail(result),
		),
		// POST and DELETE /api/customer/{id}/cancel-at-period-end (subscriptions/period-end-cancel.ts).
		scheduleCancellation: thenRelay(
			schemas.scheduleCancellation,
			scheduleCancellation,
			input => ({ customers: [input.id] }),
			result => billingErrors.orFail(result),
		),
		undoCancellation: thenRelay(
			schemas.undoCancellation,
			undoCancellation,
			input => ({ customers: [input.id] }),
			result => billingErrors.orFail(result),
		),
		// A subscription's change in place (changes/, docs/subscriptions.md): a binding quote, the change, a scheduled one cancelled.
		quoteChange: billingErrors.action(schemas.changeQuote, async (deps: BillingDeps, input: Parameters<typeof storeQuote>[1]) => {
			const quote = await storeQuote(deps, input);
			return typeof quote === "string" ? quote : quoteView(quote);
		}),
		changeSubscription: thenRelay(schemas.changeSubscription, changeSubscription, changeRelay, changeAnswer),
		cancelPendingChange: thenRelay(schemas.getById, cancelPendingChange, changeRelay, changeAnswer),
		refundCredit: thenRelay(
			schemas.getById,
			refundCredit,
			(_, result) => ({ transactions: ofObject(result)?.transactions ?? [] }),
			(result: CreditRefundDone | PlanChangeError) => billingErrors.orFail<CreditRefundDone>(result).answer,
		),
		// POST and DELETE /api/customer/{id}/coupon (subscriptions/customer-coupon.ts): no webhook, but what MRR moved is relayed.
		attachCoupon: thenRelay(schemas.attachCoupon, attachCoupon, couponRelay, result => billingErrors.orFail(result)),
		removeCoupon: thenRelay(schemas.getById, removeCoupon, couponRelay, result => billingErrors.orFail(result)),
		// A card update session's new card (card-update.ts); errors come back as values the checkout maps to codes.
		cardUpdateTarget: domainAction(schemas.cardUpdateTarget, cardUpdateTarget, errorAsValue),
		updateCard: thenRelay(schemas.updateCard, updateCard, cardUpdateRelay),
		continueCardUpdate: thenRelay(schemas.continueCardUpdate, continueCardUpdate, cardUpdateRelay),
		runRenewals: renewalRunAction(schemas.runRenewals, runRenewals),
		renewalStatus: {
			params: schemas.runRenewals,
			handler(ctx: Context<{ at?: string }>) {
				return renewalStatus(this.deps, { at: ctx.params.at ? new Date(ctx.params.at) : undefined });
			},
		},
		// The sandbox test clock: moves the account's now to `advanceTo`, doing what falls due on the way (renewals/clock-run.ts).
		advanceClock: renewalRunAction(schemas.advanceClock, advanceClock),
		// Another billing node moved a sandbox account's test clock (account-time.ts).
		clockMoved: {
			params: schemas.clockMoved,
			handler(ctx: Context<{ accountId: number; at: string }>) {
				this.deps?.clocks.heard(ctx.params.accountId, new Date(ctx.params.at));
				return { heard: true };
			},
		},
		// A metrics node's first read of an account: its now, which the moves then keep up to date (metrics.clockMoved).
		clockOf: idempotent({
			params: schemas.clockOf,
			async handler(this: Service & Locals, ctx: Context<{ accountId: number }>) {
				return { at: (await this.deps.clocks.now(ctx.params.accountId)).toISOString() };
			},
		}),
		getCustomer: idempotent(domainAction(schemas.getById, getCustomer)),
		// GET /api/customer/{id}/usage, and the usage service hearing of customers (docs/usage.md).
		customerUsage: idempotent(domainAction(schemas.getById, usagePreview, foundOrNotFound)),
		usageSubjects: idempotent(domainAction(schemas.usageSubjects, usageSubjects)),
		// The customer portal's buyer: the named customer and its email's other subscriptions (lists/reads.ts).
		buyerSubscriptions: idempotent(domainAction(schemas.buyerSubscriptions, buyerSubscriptions)),
		buyerByEmail: idempotent(domainAction(schemas.buyerByEmail, buyerByEmail)),
		getTransaction: idempotent(domainAction(schemas.getById, getTransaction)),
		listCustomers: idempotent(domainAction(schemas.listCustomers, listCustomers)),
		listTransactions: idempotent(domainAction(schemas.listTransactions, listTransactions)),
		// The merchant's lists (lists/pages.ts): a page, or a 400 for a bad cursor or date range.
		customers: idempotent(domainAction(schemas.customers, listCustomersPage, pageOrBadRequest)),
		transactions: idempotent(domainAction(schemas.transactions, listTransactionsPage, pageOrBadRequest)),
		customerTransactions: idempotent(
			domainAction(
				schemas.customerTransactions,
				(deps: BillingDeps, { id, ...query }: TransactionListQuery & { id: number }) =>
					listTransactionsPage(deps, { ...query, customerId: id }),
				pageOrBadRequest,
			),
		),
		disputes: idempotent(domainAction(schemas.disputes, listDisputesPage, pageOrBadRequest)),
		// Ops and the dashboard: each MID's month and last 30 days (mid-health.ts).
		midHealth: idempotent(domainAction(schemas.recovery, midHealth)),
		// Checkout nodes: a capped MID's reservation for a checkout's first charge, or its release (subscriptions/checkout-cap.ts).
		reserveMidCap: idempotent(domainAction(schemas.reserveMidCap, reserveForCheckout, errorAsValue)),
		releaseMidCap: idempotent(domainAction(schemas.releaseMidCap, releaseForCheckout)),
		getDispute: idempotent(billingErrors.action(schemas.getById, getDispute)),
		submitDisputeEvidence: thenRelay(
			schemas.submitDisputeEvidence,
			submitEvidence,
			(_, result) => {
				const moved = ofObject(result)?.moved ?? null;
				return { disputes: moved === null ? [] : [moved] };
			},
			result => billingErrors.orFail(result).dispute,
		),
		// POST /api/processors/stripe/{midId}/events: Stripe's disputes and fraud warnings (disputes/processor-events.ts).
		stripeEvent: thenRelay(
			schemas.stripeEvent,
			applyStripeEvent,
			(_, outcome) => ofObject(outcome)?.toRelay ?? {},
			function (outcome, input) {
				// Stripe sends it again, for days: the operator sees why before it gives up.
				if (waitsForStripeRetry(outcome)) this.logger.warn(`A Stripe event for MID ${input.midId} waits for Stripe's retry: ${outcome}`);
				billingErrors.orFail(outcome);
				return { received: true };
			},
		),
		// POST /api/processors/adyen/{midId}/notifications: Adyen's disputes, fraud reports and outcomes (disputes/processor-events.ts).
		adyenNotification: thenRelay(
			schemas.adyenNotification,
			applyAdyenNotification,
			(_, outcome) => ofObject(outcome)?.toRelay ?? {},
			outcome => {
				billingErrors.orFail(outcome);
				// What Adyen's documentation asks a notification endpoint to answer.
				return { notificationResponse: "[accepted]" };
			},
		),
		// Ops: the account's customers in recovery and its recovery rate (recovery.ts).
		recovery: idempotent(domainAction(schemas.recovery, recoveryOf)),
		// Ops: settle the refunds crashes left RESERVED now, instead of at the next timer (refund-recovery.ts).
		recoverRefunds: {
			params: schemas.recoverRefunds,
			handler() {
				return this.background.recoverRefunds();
			},
		},
		// Ops: count what existed before the metrics, once, from where the last run got to (backfill/metrics-backfill.ts).
		backfillMetrics: {
			params: schemas.backfillMetrics,
			handler(ctx: Context<{ pages?: number; pageSize?: number }>) {
				return this.background.backfillMetrics(ctx.params);
			},
		},
	},

	events: {
		// Sent by stopOnSignals before the broker waits for in-flight requests, so a running cycle ends soon.
		"broker.draining"() {
			this.background?.drain();
		},
	},

	async started() {
		this.background = await startBackground(this.broker, this.db, this.logger);
		this.deps = this.background.deps;
	},

	async stopped() {
		await this.background?.stop();
	},
};

export default BillingService;
