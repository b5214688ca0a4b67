// Customers (subscriptions), transactions and the payment processors. The
// checkout service calls the checkout steps; the gateway calls the reads.

import { Cron } from "croner";
import { LRUCache } from "lru-cache";
import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, domainErrors, errorAsValue, idempotent } from "../../shared/action";
import { call, callsThrough } from "../../shared/call";
import { config } from "../../shared/config";
import type { RenewalTerms } from "../../shared/contracts/accounts";
import type { FirstPaymentResult } from "../../shared/contracts/billing";
import { DisputeError } from "../../shared/contracts/billing";
import { StripeEventError } from "../../shared/contracts/payments";
import { dbMixin } from "../../shared/db.mixin";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { pageOrBadRequest } from "../../shared/list-page";
import { sleep } from "../../shared/poll";
import { createCardExpirySchedule, expiryListings } from "./card-updates/card-expiry";
import { cardUpdateTarget, continueCardUpdate, updateCard } from "./card-updates/card-update";
import { recoveryOf } from "./card-updates/recovery";
import { recoveryMetrics } from "./card-updates/recovery-metrics";
import type { BillingDeps } from "./deps";
import { getDispute, submitEvidence } from "./disputes/disputes";
import { type DisputeDeps, NoticeError } from "./disputes/notices";
import { applySandboxNotices } from "./disputes/sandbox-notices";
import { applyStripeEvent, type StripeEventRefusal } from "./disputes/stripe-events";
import { handOverLegacySandbox } from "./legacy-sandbox";
import { listCustomersPage, listDisputesPage, listTransactionsPage, type TransactionListQuery } from "./lists/pages";
import { getCustomer, getTransaction, listCustomers, listTransactions } from "./lists/reads";
import { midHealth, monthVolumes } from "./merchant-accounts/mid-health";
import { midStatsMetrics } from "./merchant-accounts/mid-stats";
import { type BillingDb, createBillingModels } from "./models";
import { createOutboxSchedule, listEarlierEvents } from "./outbox/outbox";
import { createOutboxRelay, type OutboxRelay, type RelayTargets } from "./outbox/outbox-relay";
import { paymentsThrough } from "./payments";
import { refundTransaction } from "./refunds/refund-ledger";
import { type RecoveryReport, recoverRefunds } from "./refunds/refund-recovery";
import { createCapTracker } from "./renewals/mid-caps";
import { type CycleOptions, type CycleReport, type RenewalDeps, renewalStatus, runRenewalCycle } from "./renewals/renewal-cycle";
import { claimRenewal, releaseRenewal } from "./renewals/renewal-lease";
import { createRenewalSchedule, scheduleEarlierCustomers } from "./renewals/renewal-schedule";
import { schemas } from "./schemas";
import { abandonSubscription, continueFirstPayment, firstPayment, openSubscription } from "./subscriptions/checkout-payments";
import { createCheckoutSchedule, recoverCheckouts } from "./subscriptions/checkout-recovery";
import { unsubscribe } from "./subscriptions/unsubscribe";

interface Locals {
	db: BillingDb;
	connection: import("mongoose").Connection;
	deps: DisputeDeps;
	relay: OutboxRelay;
	cron: Cron;
	cycle: Promise<CycleReport> | null;
	/** Aborted when the node drains (SIGTERM): cycles stop claiming customers. */
	draining: AbortController;
	runCycle(options: Omit<CycleOptions, "owner">): Promise<CycleReport>;
	cycleShare(): { index: number; count: number };
	/** The refund recovery sweep's timer, and the sweep running on this node, if any (refund-recovery.ts). */
	refundRecovery: NodeJS.Timeout;
	recovery: Promise<RecoveryReport> | null;
	recoverRefunds(): Promise<RecoveryReport>;
	/** The sweep for checkouts left PENDING running on this node, if any (checkout-recovery.ts). */
	checkoutRecovery: Promise<void> | null;
	recoverCheckouts(): Promise<void>;
	/** Applies the sandbox's disputes and fraud warnings due by `until` (one account's: its test clock). */
	applySandboxNotices(until: Date, accountId?: number): Promise<void>;
}

/** A dispute's errors as the API's 404, 409 or 503. */
const disputeErrors = domainErrors<DisputeError>({
	[DisputeError.NotFound]: { type: ApiErrorType.NotFound, message: "Dispute not found" },
	[DisputeError.NotAwaitingEvidence]: {
		type: ApiErrorType.Conflict,
		message: "Evidence is taken once, while the dispute's status is NEEDS_RESPONSE",
	},
	[DisputeError.EvidenceOverdue]: { type: ApiErrorType.Conflict, message: "The dispute's evidence was due by its evidenceDueBy" },
	[DisputeError.ProcessorRefused]: { type: ApiErrorType.Conflict, message: "The processor refused the evidence" },
	[DisputeError.ProcessorUnavailable]: {
		type: ApiErrorType.ServiceUnavailable,
		message: "The processor could not be reached: nothing was submitted; try again",
	},
});

/** Stripe could not be read for the event: its retry will apply it, once Stripe answers or the MID's key is fixed. */
const STRIPE_UNREAD: readonly StripeEventRefusal[] = [StripeEventError.Unavailable, StripeEventError.KeyRefused];

/**
 * Why an event Stripe sent was refused: 400, which Stripe retries for days and then gives up (the event cannot be
 * ours), or 503 when Stripe could not be read.
 */
const stripeEventErrors = domainErrors<StripeEventRefusal>({
	[StripeEventError.NotStripeMid]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account is not on Stripe: it takes no Stripe events",
	},
	[StripeEventError.NoWebhookSecret]: {
		type: ApiErrorType.BadRequest,
		message: "This merchant account has no webhook signing secret (processor.webhookSecret): its events cannot be verified",
	},
	[StripeEventError.BadSignature]: {
		type: ApiErrorType.BadRequest,
		message:
			"The Stripe-Signature header is missing, was not made with this merchant account's webhook signing secret, or is more than 5 minutes old",
	},
	[StripeEventError.Malformed]: { type: ApiErrorType.BadRequest, message: "The body is not a Stripe event" },
	[StripeEventError.NotThisAccount]: {
		type: ApiErrorType.BadRequest,
		message: "The event names a payment this merchant account's Stripe account does not have",
	},
	[NoticeError.OtherMerchantAccount]: {
		type: ApiErrorType.BadRequest,
		message: "The event's charge was made on another merchant account",
	},
	[StripeEventError.Unavailable]: {
		type: ApiErrorType.ServiceUnavailable,
		message: "Stripe could not be reached to read the event's payment: nothing was applied; send it again",
	},
	[StripeEventError.KeyRefused]: {
		type: ApiErrorType.ServiceUnavailable,
		message:
			"Stripe refused this merchant account's key when reading the event's payment (revoked, or restricted from reading payments): nothing was applied; send it again",
	},
});

/** Actions that write outbox events relay the documents they wrote them on, so webhooks go out at once. */
function thenRelay<P, R>(
	params: object,
	fn: (deps: BillingDeps, input: P) => Promise<R>,
	changed: (input: P, result: R) => RelayTargets,
): ActionSchema<Service & Locals> {
	return {
		params: params as ActionSchema["params"],
		async handler(ctx: Context<P>) {
			const result = await fn(this.deps, ctx.params);
			this.relay.kick(changed(ctx.params, result));
			return errorAsValue(result as string);
		},
	};
}

const ofObject = <R extends object>(result: R | string): R | null => (typeof result === "object" ? result : null);

/** A first payment's or a card update's: its customer, and its charge or hold when one was attempted. */
const paymentChanges = (_: unknown, result: Pick<FirstPaymentResult, "customer" | "transaction"> | string): RelayTargets => {
	const done = ofObject(result);
	return { customers: done ? [done.customer.id] : [], transactions: done?.transaction ? [done.transaction.id] : [] };
};

/**
 * A renewal run goes at most two years ahead (a yearly product renews twice): further is a typing slip, and would charge each
 * sandbox customer for every period up to it. 409, as for a clock moved backwards: the limit depends on the time now, not on the request alone.
 */
const MAX_RUN_AHEAD_MS = 731 * 24 * 3_600_000;

function cycleTime(text: string, name: string): Date {
	const at = new Date(text);
	if (at.getTime() > Date.now() + MAX_RUN_AHEAD_MS) throw new ApiError(ApiErrorType.Conflict, `${name} must be at most 731 days ahead`);
	return at;
}

const BillingService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "billing",
	mixins: [dbMixin("billing", createBillingModels)],

	actions: {
		openSubscription: domainAction(schemas.openSubscription, openSubscription, errorAsValue),
		abandonSubscription: domainAction(schemas.abandonSubscription, abandonSubscription, errorAsValue),
		// These relay what they wrote themselves (settleFirstPayment), as written: nothing is read again for the webhooks.
		firstPayment: domainAction(schemas.firstPayment, firstPayment, errorAsValue),
		continueFirstPayment: domainAction(schemas.continueFirstPayment, continueFirstPayment, errorAsValue),
		refundTransaction: thenRelay(schemas.refundTransaction, refundTransaction, (_, result) => {
			const done = ofObject(result);
			return { transactions: done ? [done.refundTransactionId] : [] };
		}),
		unsubscribe: thenRelay(schemas.unsubscribe, unsubscribe, input => ({ customers: [input.customerId] })),
		// A card update session's new card (card-update.ts); errors come back as values the checkout maps to codes.
		cardUpdateTarget: domainAction(schemas.cardUpdateTarget, cardUpdateTarget, errorAsValue),
		updateCard: thenRelay(schemas.updateCard, updateCard, paymentChanges),
		continueCardUpdate: thenRelay(schemas.continueCardUpdate, continueCardUpdate, paymentChanges),
		// The renewal engine's claim and release, as an action so any billing node (or ops) can take part.
		claimRenewal: {
			params: schemas.claimRenewal,
			async handler(ctx: Context<{ customerId: number; owner: string; at: string; leaseMs: number }>) {
				const claimed = await claimRenewal(this.deps, { ...ctx.params, at: new Date(ctx.params.at) });
				return { claimed: claimed !== null };
			},
		},
		releaseRenewal: domainAction(schemas.releaseRenewal, releaseRenewal),
		runRenewals: {
			params: schemas.runRenewals,
			handler(ctx: Context<{ at?: string }>) {
				return this.runCycle({ at: cycleTime(ctx.params.at ?? new Date().toISOString(), "at") });
			},
		},
		renewalStatus: {
			params: schemas.runRenewals,
			handler(ctx: Context<{ at?: string }>) {
				return renewalStatus(this.deps, { at: ctx.params.at ? new Date(ctx.params.at) : undefined });
			},
		},
		// The sandbox test clock: runs what falls due for one account up to `advanceTo`.
		advanceClock: {
			params: schemas.advanceClock,
			async handler(ctx: Context<{ accountId: number; advanceTo: string }>) {
				const account = await call(ctx, "accounts.get", { accountId: ctx.params.accountId });
				if (account.environment !== "sandbox") throw new ApiError(ApiErrorType.Conflict, "Only sandbox accounts have a test clock");
				const at = cycleTime(ctx.params.advanceTo, "advanceTo");
				if (at.getTime() < Date.now())
					throw new ApiError(ApiErrorType.Conflict, "advanceTo must not be in the past: the clock only moves forward");
				// Disputes due before the renewals (a disputed customer is unsubscribed before its next renewal), then those of
				// the charges the renewals just made.
				await this.applySandboxNotices(at, ctx.params.accountId);
				const report = await this.runCycle({ at, accountId: ctx.params.accountId });
				await this.applySandboxNotices(at, ctx.params.accountId);
				return report;
			},
		},
		getCustomer: idempotent(domainAction(schemas.getById, getCustomer)),
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
		// Checkout nodes: what capped MIDs sold this month (checkout/mid-routing.ts).
		midVolumes: idempotent(
			domainAction(schemas.midVolumes, async (deps: DisputeDeps, input: { midIds: number[] }) => ({
				volumes: await monthVolumes(deps, input),
			})),
		),
		getDispute: idempotent(disputeErrors.action(schemas.getById, getDispute)),
		submitDisputeEvidence: {
			params: schemas.submitDisputeEvidence,
			async handler(ctx: Context<Parameters<typeof submitEvidence>[1]>) {
				const submitted = disputeErrors.orFail(await submitEvidence(this.deps, ctx.params));
				if (submitted.changed !== null) this.relay.kick({ disputes: [submitted.changed] });
				return submitted.dispute;
			},
		},
		// POST /api/processors/stripe/{midId}/events: Stripe's disputes and fraud warnings (disputes/stripe-events.ts).
		stripeEvent: {
			params: schemas.stripeEvent,
			async handler(ctx: Context<Parameters<typeof applyStripeEvent>[1]>) {
				const outcome = await applyStripeEvent(this.deps, ctx.params);
				// Stripe sends it again, for days: the operator sees why before it gives up.
				if (typeof outcome === "string" && STRIPE_UNREAD.includes(outcome))
					this.logger.warn(`A Stripe event for MID ${ctx.params.midId} waits for Stripe's retry: ${outcome}`);
				const received = stripeEventErrors.orFail(outcome);
				this.relay.kick(received.changed);
				return { received: true };
			},
		},
		// Ops: settle the refunds crashes left RESERVED now, instead of at the next timer (refund-recovery.ts).
		// Ops: the account's customers in recovery and its recovery rate (recovery.ts).
		recovery: idempotent(domainAction(schemas.recovery, recoveryOf)),
		recoverRefunds: {
			params: schemas.recoverRefunds,
			handler() {
				return this.recoverRefunds();
			},
		},
	},

	events: {
		// Sent by stopOnSignals before the broker waits for in-flight requests, so a running cycle ends soon.
		"broker.draining"() {
			this.cron?.stop();
			this.draining.abort();
		},
	},

	methods: {
		/** Runs a renewal cycle on this node; each product's renewal terms are read once per cycle. */
		async runCycle(options: Omit<CycleOptions, "owner">): Promise<CycleReport> {
			const terms = new Map<string, Promise<RenewalTerms | null>>();
			const deps: RenewalDeps = {
				...this.deps,
				caps: createCapTracker(this.deps),
				termsOf: (accountId, productId) => {
					const key = `${accountId}:${productId}`;
					if (!terms.has(key)) terms.set(key, call(this.broker, "accounts.renewalTerms", { accountId, productId }));
					return terms.get(key)!;
				},
			};
			const report = await runRenewalCycle(deps, {
				leaseMs: config().renewalLeaseMs,
				...options,
				owner: this.broker.nodeID,
				signal: this.draining.signal,
				share: this.cycleShare(),
			});
			if (report.charged + report.declined + report.suspended > 0) this.logger.info("Renewal cycle:", report);
			return report;
		},

		/** This node's place among the billing nodes it knows of: the cycle renews its own share first. */
		cycleShare(): { index: number; count: number } {
			const services = this.broker.registry.getServiceList({ onlyAvailable: true, withActions: false }) as {
				name: string;
				nodeID: string;
			}[];
			const nodes = [...new Set(services.filter(s => s.name === "billing").map(s => s.nodeID))].sort();
			const index = nodes.indexOf(this.broker.nodeID);
			return index < 0 ? { index: 0, count: 1 } : { index, count: nodes.length };
		},

		/** One sweep for checkouts left PENDING on this node at a time. */
		recoverCheckouts(): Promise<void> {
			this.checkoutRecovery ??= recoverCheckouts(this.deps, {
				signal: this.draining.signal,
				onError: (customerId, err) =>
					this.logger.warn(`Checkout recovery: customer ${customerId} stays PENDING for the next sweep:`, err.message),
			})
				.then(report => {
					if (report.activated + report.declined + report.abandoned > 0) this.logger.info("Checkout recovery:", report);
				})
				.catch(err => this.logger.warn("Checkout recovery failed:", (err as Error).message))
				.finally(() => {
					this.checkoutRecovery = null;
				});
			return this.checkoutRecovery;
		},

		async applySandboxNotices(until: Date, accountId?: number): Promise<void> {
			const report = await applySandboxNotices(this.deps, {
				until,
				accountId,
				onError: (noticeId, err) => this.logger.warn(`Sandbox notice ${noticeId} is applied again next time:`, err.message),
			});
			this.relay.kick(report.changed);
			if (report.applied + report.failed > 0)
				this.logger.info("Sandbox disputes and fraud warnings:", { applied: report.applied, failed: report.failed });
		},

		/** One recovery sweep on this node at a time; a call while one runs gets its report. */
		recoverRefunds(): Promise<RecoveryReport> {
			this.recovery ??= recoverRefunds(this.deps, {
				owner: this.broker.nodeID,
				signal: this.draining.signal,
				onError: (refundId, err) => this.logger.warn(`Refund recovery: ${refundId} stays RESERVED for the next sweep:`, err.message),
			})
				.then(report => {
					if (report.refundTransactionIds.length > 0) this.relay.kick({ transactions: report.refundTransactionIds });
					if (report.completed + report.failed > 0)
						this.logger.info("Refund recovery:", { completed: report.completed, failed: report.failed, skipped: report.skipped });
					return report;
				})
				.catch(err => {
					this.logger.warn("Refund recovery failed:", (err as Error).message);
					throw err;
				})
				.finally(() => {
					this.recovery = null;
				});
			return this.recovery;
		},
	},

	created() {
		this.draining = new AbortController();
	},

	async started() {
		const renewals = createRenewalSchedule(this.db);
		const cardExpiry = createCardExpirySchedule(this.db);
		this.deps = {
			db: this.db,
			renewals,
			outbox: createOutboxSchedule(this.db),
			checkouts: createCheckoutSchedule(this.db),
			cardExpiry,
			metrics: recoveryMetrics(this.broker),
			midMetrics: midStatsMetrics(this.broker),
			payments: paymentsThrough(callsThrough(this.broker)),
			relay: targets => this.relay.kick(targets),
			justOpened: new LRUCache({ max: 10_000, ttl: config().requestTimeoutMs }),
			now: () => new Date(),
			productOf: (accountId, productId) => call(this.broker, "accounts.getProduct", { accountId, productId }),
			merchantAccountsOf: accountId => call(this.broker, "accounts.listMerchantAccounts", { accountId }),
			refundGraceMs: config().refundRecoveryGraceMs,
			protectionOf: async accountId => (await call(this.broker, "accounts.get", { accountId })).disputeProtection,
			blockBuyer: async input => {
				await call(this.broker, "accounts.blockBuyer", input);
			},
		};
		const listed = await scheduleEarlierCustomers(this.db, renewals, this.deps.now());
		if (listed) this.logger.info(`Renewal schedule: listed ${listed} customers of an earlier version's data`);
		const expiring = await scheduleEarlierCustomers(this.db, cardExpiry, this.deps.now(), customers =>
			expiryListings(customers, this.deps.now()),
		);
		if (expiring) this.logger.info(`Card expiry schedule: listed ${expiring} customers of an earlier version's data`);
		// Earlier versions' sandbox vault and ledger go to payments, in the background: payments may start later.
		void (async () => {
			while (!this.draining.signal.aborted) {
				try {
					const moved = await handOverLegacySandbox(this.connection, callsThrough(this.broker));
					if (moved.cards + moved.operations > 0)
						this.logger.info(`Sandbox data of an earlier version handed to payments: ${moved.cards} cards, ${moved.operations} operations`);
					return;
				} catch {
					await sleep(2000);
				}
			}
		})();
		const events = await listEarlierEvents(this.deps);
		if (events) this.logger.info(`Outbox schedule: listed ${events} waiting events of an earlier version's data`);
		this.relay = createOutboxRelay({
			...this.deps,
			enqueueAll: events => call(this.broker, "notifications.enqueueAll", { events }),
			logger: this.logger,
		});
		this.relay.start();
		// Every billing node sweeps for refunds and checkouts an outage or a crash left unsettled; the refunds' leases
		// and the customers' compare-and-set share the work.
		this.refundRecovery = setInterval(() => {
			void this.recoverRefunds().catch(() => undefined);
			void this.recoverCheckouts();
		}, config().refundRecoveryIntervalMs);
		this.refundRecovery.unref();
		// Every billing node runs the cycle; the leases share the work.
		this.cron = new Cron(config().renewalCron, { timezone: config().timeZone, protect: true }, async () => {
			const at = new Date();
			this.cycle = this.runCycle({ at }).catch(err => {
				this.logger.error("Renewal cycle failed:", (err as Error).message);
				return { charged: 0, declined: 0, suspended: 0, skipped: 0, cardExpiryWarnings: 0 };
			});
			await this.cycle;
			this.cycle = null;
			await this.applySandboxNotices(at).catch(err => this.logger.warn("Sandbox notices wait for the next cycle:", (err as Error).message));
		});
	},

	async stopped() {
		clearInterval(this.refundRecovery);
		this.cron?.stop();
		this.draining.abort();
		// A recovery sweep in progress finishes the refund it holds, and the checkout it settles.
		await this.recovery?.catch(() => undefined);
		await this.checkoutRecovery;
		// A cycle in progress finishes the renewals it holds before the node stops.
		await this.cycle;
		await this.relay?.stop();
	},
};

export default BillingService;
