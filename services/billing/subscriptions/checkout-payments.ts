// Billing's part of a checkout, in the spec's order: open the subscription
// under the duplicate-check lock (step 4), then the first payment by product
// type (step 5), through the payments service, and its continuation after a
// 3-D Secure challenge. The card was vaulted and verified before (step 3: the
// checkout service's card-checks.ts calls payments.saveCard). The checkout
// service orchestrates (services/checkout/checkout-pipeline.ts).

import {
	CheckoutStepError,
	type FirstPaymentInput,
	FirstPaymentOutcome,
	type FirstPaymentResult,
	OpenSubscriptionError,
	type OpenSubscriptionInput,
} from "../../../shared/contracts/billing";
import {
	AUTHENTICATION_FAILED_REASON,
	type FirstPaymentKind,
	NO_PROCESSOR_REASON,
	type PaymentOutcome,
} from "../../../shared/contracts/payments";
import { insertDoc, raw } from "../../../shared/persistence";
import { withRetries } from "../../../shared/processor-retries";
import { NO_TAX } from "../../../shared/tax";
import { addDays, addPeriod } from "../../../shared/time";
import { periodsOf } from "../coupons/discount";
import { confirmCoupon, releaseCoupon } from "../coupons/redemption";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import { listExpiryWarning } from "../expiry-warnings";
import { customerMove } from "../lifecycle";
import { appendCustomer } from "../lists/pages";
import { outboxEvent, scheduledEvent } from "../outbox/outbox";
import type { Relayed, RelayTargets } from "../outbox/outbox-relay";
import type { CustomerDoc } from "../records/customer";
import type { MetricsEntry } from "../records/metrics";
import type { OutboxEvent } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { CustomerStatus, TransactionType } from "../states";
import { claimLock, lockKey, releaseLock } from "../subscription-lock";
import { recordCharge } from "../transaction-record";
import { toCustomerView, toTransactionView } from "../views";
import { keepCustomerCap, releaseCustomerCap } from "./checkout-cap";
import { type FirstCharge, firstCharge } from "./first-charge";

/** Declines the checkout answers with a code of their own. */
const UNPAID_REASONS: Record<string, FirstPaymentOutcome> = {
	[NO_PROCESSOR_REASON]: FirstPaymentOutcome.NoProcessor,
	[AUTHENTICATION_FAILED_REASON]: FirstPaymentOutcome.AuthenticationFailed,
};

/** Step 4: the duplicate check, then a PENDING customer. */
export async function openSubscription(
	deps: BillingDeps,
	input: OpenSubscriptionInput,
): Promise<{ customerId: number } | OpenSubscriptionError> {
	const customerId = await deps.db.ids.customers.next();
	if (!input.product.allowMultipleSubscriptions && !(await claimLock(deps, lockKey(input), customerId))) {
		return OpenSubscriptionError.AlreadySubscribed;
	}
	const now = deps.now();
	// Signed up in the account's time (a sandbox's test clock); the recovery below goes by the real time.
	const subscriptionTimestamp = await deps.clocks.now(input.accountId);
	// Listed before the customer exists: a checkout an outage or a crash leaves PENDING is found by key (checkout-recovery.ts).
	await deps.checkouts.add(customerId, now);
	await appendCustomer(deps, {
		_id: customerId,
		accountId: input.accountId,
		productId: input.product.id,
		email: input.buyer.email,
		subscriptionTimestamp,
	});
	const opened = await insertDoc(deps.db.customers, pendingCustomer(input, customerId, { now, subscriptionTimestamp }));
	deps.justOpened?.set(customerId, opened);
	return { customerId };
}

/** The PENDING customer of a checkout, as first written: signed up at the account's time, created at the real `now`. */
function pendingCustomer(
	input: OpenSubscriptionInput,
	customerId: number,
	{ now, subscriptionTimestamp }: { now: Date; subscriptionTimestamp: Date },
): CustomerDoc {
	return {
		_id: customerId,
		accountId: input.accountId,
		environment: input.environment,
		email: input.buyer.email,
		name: input.buyer.name,
		lastName: input.buyer.lastName,
		status: CustomerStatus.Pending,
		productId: input.product.id,
		subscriptionTimestamp,
		nextRenewalTimestamp: null,
		lastTimeBilled: null,
		unsubscriptionTimestamp: null,
		renewalActive: false,
		attempts: 0,
		cardBin: input.card.bin,
		cardLast4: input.card.last4,
		cardType: input.card.brand,
		cardExpiredTime: input.card.expiry,
		cardToken: input.card.cardToken,
		cardFingerprint: input.card.fingerprint,
		midId: input.mid.id,
		midName: input.mid.name,
		sessionId: input.sessionId,
		attemptId: input.attemptId,
		additionalData: input.additionalData,
		authorizationId: null,
		outbox: [],
		relayed: [],
		billingAnchor: null,
		periodsBilled: 0,
		renewalLease: null,
		// Before its redemption is taken: whatever settles the checkout (or the recovery) knows what to give back.
		...(input.coupon ? { coupon: { ...input.coupon, periodsLeft: periodsOf(input.coupon) } } : {}),
		// Likewise the MID cap's reservation of its first charge (checkout-cap.ts).
		...(input.capReservation ? { capReservation: input.capReservation } : {}),
		createdAt: now,
	} as CustomerDoc;
}

/** The checkout could not complete (its session was taken): PENDING -> ABANDONED, lock released. */
export async function abandonSubscription(
	deps: BillingDeps,
	input: { customerId: number },
): Promise<{ customerId: number } | CheckoutStepError> {
	const customer = await deps.db.customers.findById(input.customerId, { status: 1, coupon: 1, capReservation: 1 }).lean();
	if (customer?.status === CustomerStatus.Pending) {
		await releaseCoupon(deps, customer);
		await releaseCustomerCap(deps, customer);
	}
	const doc = await deps.db.customers
		.findOneAndUpdate({ _id: input.customerId, ...ABANDON.filter }, { $set: ABANDON.set }, { returnDocument: "after" })
		.lean();
	if (!doc) return CheckoutStepError.WrongState;
	await releaseLock(deps, doc);
	return { customerId: doc._id };
}

const ABANDON = customerMove(CustomerStatus.Pending, CustomerStatus.Abandoned);
const ACTIVATE = customerMove(CustomerStatus.Pending, CustomerStatus.Active);
const DECLINE = customerMove(CustomerStatus.Pending, CustomerStatus.Declined);

/**
 * PENDING -> ACTIVE (with its CONVERSION event, naming the charge or hold) or DECLINED, compare-and-set on the expected
 * state. `listed`: the CONVERSION listed already, with the charge's event (recordFirstTransaction).
 */
async function settle(
	deps: BillingDeps,
	customerId: number,
	move: typeof ACTIVATE | typeof DECLINE,
	fields: Partial<CustomerDoc> = {},
	activation: { transactionId: number | null; counts: MetricsEntry | null; listed: OutboxEvent | null } | null = null,
): Promise<CustomerDoc | null> {
	const $set = { ...move.set, ...fields };
	const details = { transactionId: activation?.transactionId ?? null, ...carrying(activation?.counts ?? null) };
	const conversion = async () =>
		activation?.listed ? { ...activation.listed, ...details } : await scheduledEvent(deps, "c", customerId, "CONVERSION", details);
	const update = move.set.status === CustomerStatus.Active ? { $set, $push: { outbox: await conversion() } } : { $set };
	return raw(deps.db.customers).findOneAndUpdate({ _id: customerId, ...move.filter }, update as never, {
		returnDocument: "after",
	});
}

/** A first payment's answer, and its transaction and customer as their writes answered them, for the outbox relay. */
export type SettledFirstPayment = Relayed<FirstPaymentResult>;

/** The first payment's transaction and customer, as their writes answered them: the relay does not read them again. */
function writtenTargets(transaction: TransactionDoc | null, customerId: number, customer: CustomerDoc | null): RelayTargets {
	// A customer another settled first (null) is read again: its events may wait too.
	return {
		customers: customer ? [] : [customerId],
		written: { transactions: transaction ? [transaction] : [], customers: customer ? [customer] : [] },
	};
}

/**
 * The customer this node opened for the checkout, as inserted, if that was less than a request's time ago: nothing
 * else changes a PENDING customer that soon (the checkout recovery waits a grace period longer than a request's time,
 * and the checkout abandons it only instead of paying), so it is still as inserted. Taken once.
 */
function takeJustOpened(deps: BillingDeps, customerId: number): CustomerDoc | null {
	const opened = deps.justOpened?.get(customerId);
	deps.justOpened?.delete(customerId);
	return opened ?? null;
}

/**
 * Step 5: charge now, hold now, or schedule the first charge, by the product's billing kind. The records it wrote
 * events on come back with the answer: the action hands them to the relay (billing.service.ts, thenRelay).
 */
export async function firstPayment(deps: BillingDeps, input: FirstPaymentInput): Promise<SettledFirstPayment | CheckoutStepError> {
	const customer = takeJustOpened(deps, input.customerId) ?? (await raw(deps.db.customers).findOne({ _id: input.customerId }));
	if (!customer) return CheckoutStepError.WrongState;
	if (customer.status !== CustomerStatus.Pending) return CheckoutStepError.WrongState;
	const { product } = input;
	// Paid at the account's time: the sandbox judges the card's expiry by it, and the period starts there.
	const at = await deps.clocks.now(customer.accountId);
	const { amount } = firstCharge(customer, product, at);
	// A SCHEDULE checkout charges nothing now: its card is set up for the charge after the trial; so is a charge a
	// coupon takes to 0, under the charge's own key (the recovery finds it there).
	const kind = amount === 0 ? "setup" : FIRST_PAYMENT_KINDS[product.billing];
	const idempotencyKey = firstPaymentKey(input.attemptId, product.billing);
	const money = {
		idempotencyKey,
		cardToken: customer.cardToken,
		amount,
		currency: product.currency,
		midId: customer.midId,
	};
	const outcome = await withRetries(() =>
		deps.payments.firstPayment({
			...money,
			kind,
			challengeUntil: input.challengeUntil,
			authenticate: product.authentication ?? "WHEN_REQUIRED",
			at,
		}),
	);
	if (outcome.status !== "AWAITING_BUYER") return settleFirstPayment(deps, customer, product, idempotencyKey, outcome, at);
	// The buyer takes the issuer's challenge; the product's terms are kept for the payment's end (continueFirstPayment).
	await deps.db.customers.updateOne({ _id: customer._id, status: CustomerStatus.Pending }, { $set: { awaitingChallenge: { product } } });
	return awaitingBuyer(customer, outcome.challengeUrl);
}

/** The answer while the buyer takes the issuer's challenge: nothing written for the relay yet. */
const awaitingBuyer = (customer: CustomerDoc, challengeUrl: string): SettledFirstPayment => ({
	answer: { outcome: FirstPaymentOutcome.AwaitingBuyer, customer: toCustomerView(customer), transaction: null, challengeUrl },
	toRelay: {},
});

/**
 * A first payment after the buyer's challenge: settled by what the processor recorded, as firstPayment would have.
 * A repeat (a second tab, a reload) reads the same outcome and settles nothing again. Nothing moved before the
 * challenge's time ran out: the customer is ABANDONED, as the checkout recovery would make it.
 */
export async function continueFirstPayment(
	deps: BillingDeps,
	input: { customerId: number; attemptId: string },
): Promise<SettledFirstPayment | CheckoutStepError> {
	const customer = await deps.db.customers.findById(input.customerId).lean();
	const product = customer?.awaitingChallenge?.product;
	if (!customer || !product || customer.attemptId !== input.attemptId) return CheckoutStepError.WrongState;
	const idempotencyKey = firstPaymentKey(input.attemptId, product.billing);
	const outcome = await withRetries(() => deps.payments.afterChallenge(idempotencyKey));
	if (outcome === null) {
		await abandonSubscription(deps, { customerId: customer._id });
		const after = await deps.db.customers.findById(customer._id).lean();
		return {
			answer: { outcome: FirstPaymentOutcome.Abandoned, customer: toCustomerView(after ?? customer), transaction: null },
			toRelay: {},
		};
	}
	if (outcome.status === "AWAITING_BUYER") return awaitingBuyer(customer, outcome.challengeUrl);
	return settleFirstPayment(deps, customer, product, idempotencyKey, outcome, await deps.clocks.now(customer.accountId));
}

/** What step 5 asks of the processor, by the product's billing kind. */
const FIRST_PAYMENT_KINDS: Record<FirstPaymentInput["product"]["billing"], FirstPaymentKind> = {
	CHARGE: "charge",
	PREAUTHORIZE: "authorize",
	SCHEDULE: "setup",
};

/** The processor's key of a checkout's first charge, hold or set-up. */
export function firstPaymentKey(attemptId: string, billing: FirstPaymentInput["product"]["billing"]): string {
	return `${attemptId}:${FIRST_PAYMENT_KINDS[billing]}`;
}

/**
 * Records what the processor did with the first charge or hold and settles the PENDING customer by it: ACTIVE, or
 * DECLINED with its lock released. Run by the checkout, and by the recovery for a checkout cut off after the
 * processor answered; the transaction is written once (by its key) and the customer settled once (compare-and-set).
 * Its caller hands what it wrote (`toRelay`) to the relay.
 */
export async function settleFirstPayment(
	deps: BillingDeps,
	customer: CustomerDoc,
	product: FirstPaymentInput["product"],
	idempotencyKey: string,
	outcome: PaymentOutcome,
	/** When the processor charged, in the account's time: now, or for a recovered checkout when it opened. */
	now: Date,
): Promise<SettledFirstPayment> {
	const charge = firstCharge(customer, product, now);
	// An approved payment's CONVERSION is listed with its charge's TRANSACTION, in one command.
	const conversion = outcome.status === "APPROVED" ? outboxEvent(deps, "CONVERSION") : null;
	const transaction = await recordFirstTransaction(deps, customer, product, { idempotencyKey, outcome, at: now }, charge, conversion);
	if (outcome.status !== "APPROVED") return declineCheckout(deps, customer, transaction, outcome);
	const discounted = charge.coupon
		? { coupon: charge.coupon, periodCoupon: { percentOff: charge.coupon.percentOff, amountOff: charge.coupon.amountOff } }
		: {};
	const schedule = { ...activeSchedule(product, outcome, now), ...discounted };
	if (schedule.nextRenewalTimestamp) {
		await deps.renewals.add(customer._id, schedule.nextRenewalTimestamp);
		await listExpiryWarning(deps, { ...customer, nextRenewalTimestamp: schedule.nextRenewalTimestamp }, now);
	}
	// A charge now makes a subscriber (new MRR, after the coupon its next charge takes); a trial counts from its first charge.
	const counted = await countUpdate(
		deps,
		customer,
		{ status: CustomerStatus.Active, periodsBilled: schedule.periodsBilled, ...("coupon" in schedule ? { coupon: schedule.coupon } : {}) },
		{ at: now, product: { ...product, id: customer.productId, tax: product.tax ?? NO_TAX } },
	);
	const activated = await settle(
		deps,
		customer._id,
		ACTIVATE,
		{ ...schedule, counted: counted.counted },
		{
			transactionId: transaction?._id ?? null,
			counts: counted.entry,
			// A set-up records no transaction: its CONVERSION was not listed with one.
			listed: transaction ? conversion : null,
		},
	);
	await confirmCoupon(deps, customer);
	await keepCustomerCap(deps, customer, charge.amount);
	return {
		answer: {
			outcome: FirstPaymentOutcome.Active,
			customer: toCustomerView(activated ?? customer),
			transaction: transaction && toTransactionView(transaction),
		},
		toRelay: writtenTargets(transaction, customer._id, activated),
	};
}

/** The first charge's or hold's transaction. A set-up (SCHEDULE) moves no money: none; the charge after the trial is its SUBSCRIPTION_START. */
async function recordFirstTransaction(
	deps: BillingDeps,
	customer: CustomerDoc,
	product: FirstPaymentInput["product"],
	{ idempotencyKey, outcome, at }: { idempotencyKey: string; outcome: PaymentOutcome; at: Date },
	charge: FirstCharge,
	conversion: OutboxEvent | null,
): Promise<TransactionDoc | null> {
	if (product.billing === "SCHEDULE") return null;
	const type = product.billing === "PREAUTHORIZE" ? TransactionType.Preauthorization : TransactionType.SubscriptionStart;
	const money = { ...product, amountMinor: charge.amount };
	const { discount, billed } = charge;
	const alsoListed = conversion ? [{ kind: "c" as const, docId: customer._id, event: conversion }] : [];
	return recordCharge(deps, { customer, money, type, idempotencyKey, outcome, discount, billed, alsoListed, at });
}

/** PENDING -> DECLINED, its lock released, answered with the checkout's code for the decline. */
async function declineCheckout(
	deps: BillingDeps,
	customer: CustomerDoc,
	transaction: TransactionDoc | null,
	outcome: PaymentOutcome,
): Promise<SettledFirstPayment> {
	await releaseCoupon(deps, customer);
	await releaseCustomerCap(deps, customer);
	const declined = await settle(deps, customer._id, DECLINE);
	await releaseLock(deps, customer);
	const code =
		outcome.status === "ERROR"
			? FirstPaymentOutcome.ProcessorError
			: (UNPAID_REASONS[outcome.reason ?? ""] ?? FirstPaymentOutcome.Declined);
	return {
		answer: { outcome: code, customer: toCustomerView(declined ?? customer), transaction: transaction && toTransactionView(transaction) },
		toRelay: writtenTargets(transaction, customer._id, declined),
	};
}

/**
 * The ACTIVE customer's schedule after an approved first payment, by the product's billing kind: a set-up's first
 * charge, or a hold's capture, when the trial ends; a charge now is the schedule's first period.
 */
function activeSchedule(product: FirstPaymentInput["product"], outcome: PaymentOutcome, now: Date): Partial<CustomerDoc> {
	// Renewals refer to this payment (docs/authentication.md).
	const networkTransactionId = outcome.networkTransactionId ?? null;
	if (product.billing === "CHARGE") {
		const next = product.renewal ? addPeriod(now, product.renewal) : null;
		const billed = { lastTimeBilled: now, authorizationId: null, billingAnchor: now, periodsBilled: 1 };
		return { nextRenewalTimestamp: next, renewalActive: next !== null, ...billed, networkTransactionId };
	}
	const trialEnd = addDays(now, product.trialDays);
	const trial = { nextRenewalTimestamp: trialEnd, renewalActive: true };
	if (product.billing === "SCHEDULE") return { ...trial, billingAnchor: trialEnd, periodsBilled: 0, networkTransactionId };
	const held = { lastTimeBilled: null, authorizationId: outcome.processorTransactionId, billingAnchor: trialEnd, periodsBilled: 0 };
	return { ...trial, ...held, networkTransactionId };
}
