// Billing's part of a checkout, in the spec's order: verify the card (step 3),
// open the subscription under the duplicate-check lock (step 4), then the
// first payment by product type (step 5). The checkout service orchestrates.
import { randomUUID } from "node:crypto";
import { sha256Hex } from "../../shared/crypto";
import { addDays, addPeriod, type Period } from "../../shared/time";
import type { BillingDeps } from "./deps";
import type { CustomerDoc, OutboxEvent, TransactionDoc } from "./models";
import type { PaymentProcessor, ProcessorOutcome } from "./processors/payment-processor";
import { CustomerStatus, HOLDS_SUBSCRIPTION, RefundStatus, TransactionStatus, TransactionType } from "./states";
import { type CustomerView, type TransactionView, toCustomerView, toTransactionView } from "./views";

export enum BillingError {
	NoProcessor = "NO_PROCESSOR",
	CardNotVerified = "CARD_NOT_VERIFIED",
	ProcessorError = "PROCESSOR_ERROR",
	AlreadySubscribed = "ALREADY_SUBSCRIBED",
	WrongState = "WRONG_STATE",
}

type Environment = "sandbox" | "production";

/** A PENDING checkout older than this died mid-way; its duplicate-check lock may be taken over. */
const STALE_PENDING_MS = 10 * 60 * 1000;
/** Processor errors are retried with the same idempotency key, so a retry never charges twice. */
const PROCESSOR_RETRY_DELAYS_MS = [50, 250];

export function outboxEvent(deps: Pick<BillingDeps, "now">, type: OutboxEvent["type"]): OutboxEvent {
	return { id: randomUUID(), type, createdAt: deps.now() };
}

/** A PENDING customer older than this belongs to a checkout that died mid-way. */
export function isStalePending(deps: Pick<BillingDeps, "now">, customer: Pick<CustomerDoc, "status" | "createdAt">): boolean {
	return customer.status === CustomerStatus.Pending && deps.now().getTime() - customer.createdAt.getTime() > STALE_PENDING_MS;
}

function processor(deps: BillingDeps, environment: Environment): PaymentProcessor | BillingError {
	return deps.processorFor(environment) ?? BillingError.NoProcessor;
}

export async function withRetries(call: () => Promise<ProcessorOutcome>): Promise<ProcessorOutcome> {
	let outcome = await call();
	for (const delay of PROCESSOR_RETRY_DELAYS_MS) {
		if (outcome.status !== "ERROR") break;
		await new Promise(resolve => setTimeout(resolve, delay));
		outcome = await call();
	}
	return outcome;
}

export async function verifyCard(
	deps: BillingDeps,
	input: { environment: Environment; midId: number; attemptId: string; card: { pan: string; expiry: string; cvc: string } },
): Promise<{ cardToken: string } | BillingError> {
	const cards = processor(deps, input.environment);
	if (typeof cards === "string") return cards;
	const { cardToken } = await cards.tokenize({ pan: input.card.pan, expiry: input.card.expiry });
	const outcome = await withRetries(() =>
		cards.verify({ idempotencyKey: `${input.attemptId}:verify`, cardToken, cvc: input.card.cvc, midId: input.midId }),
	);
	if (outcome.status === "ERROR") return BillingError.ProcessorError;
	return outcome.status === "APPROVED" ? { cardToken } : BillingError.CardNotVerified;
}

export interface OpenSubscriptionInput {
	accountId: number;
	environment: Environment;
	product: { id: number; allowMultipleSubscriptions: boolean };
	buyer: { email: string; name: string; lastName: string };
	card: { cardToken: string; fingerprint: string; bin: string; last4: string; brand: string; expiry: string };
	mid: { id: number; name: string };
	sessionId: string;
	additionalData: Record<string, unknown> | null;
}

function lockKey(input: OpenSubscriptionInput): string {
	return sha256Hex([input.accountId, input.product.id, input.buyer.email.toLowerCase(), input.card.fingerprint].join("|"));
}

/** Claims the (product, email, card) lock for a new customer; false when a live subscription holds it. */
async function claimLock(deps: BillingDeps, key: string, customerId: number): Promise<boolean> {
	try {
		await deps.db.subscriptionLocks.create({ _id: key, customerId, createdAt: deps.now() });
		return true;
	} catch (err) {
		if ((err as { code?: number }).code !== 11000) throw err;
	}
	const lock = await deps.db.subscriptionLocks.findById(key).lean();
	if (!lock) return claimLock(deps, key, customerId);
	const holder = await deps.db.customers.findById(lock.customerId, { status: 1, createdAt: 1 }).lean();
	// The lock is taken before its customer is written: a holder not written yet is a checkout in progress.
	const alive = holder
		? HOLDS_SUBSCRIPTION.includes(holder.status) && !isStalePending(deps, holder)
		: deps.now().getTime() - lock.createdAt.getTime() <= STALE_PENDING_MS;
	if (alive) return false;
	// The holder ended without releasing (or died mid-checkout): take the lock over, atomically.
	const taken = await deps.db.subscriptionLocks.updateOne({ _id: key, customerId: lock.customerId }, { $set: { customerId, createdAt: deps.now() } });
	return taken.modifiedCount === 1;
}

export async function releaseLock(deps: BillingDeps, customer: Pick<CustomerDoc, "_id">): Promise<void> {
	await deps.db.subscriptionLocks.deleteMany({ customerId: customer._id });
}

/** Step 4: the duplicate check, then a PENDING customer. */
export async function openSubscription(deps: BillingDeps, input: OpenSubscriptionInput): Promise<{ customerId: number } | BillingError> {
	const customerId = await deps.db.ids.customers.next();
	if (!input.product.allowMultipleSubscriptions && !(await claimLock(deps, lockKey(input), customerId))) {
		return BillingError.AlreadySubscribed;
	}
	const now = deps.now();
	await deps.db.customers.create({
		_id: customerId,
		accountId: input.accountId,
		environment: input.environment,
		email: input.buyer.email,
		name: input.buyer.name,
		lastName: input.buyer.lastName,
		status: CustomerStatus.Pending,
		productId: input.product.id,
		subscriptionTimestamp: now,
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
		additionalData: input.additionalData,
		authorizationId: null,
		outbox: [],
		billingAnchor: null,
		periodsBilled: 0,
		renewalLease: null,
		createdAt: now,
	});
	return { customerId };
}

/** The checkout could not complete (its session was taken): PENDING -> ABANDONED, lock released. */
export async function abandonSubscription(deps: BillingDeps, input: { customerId: number }): Promise<{ customerId: number } | BillingError> {
	const doc = await deps.db.customers
		.findOneAndUpdate({ _id: input.customerId, status: CustomerStatus.Pending }, { $set: { status: CustomerStatus.Abandoned } }, { returnDocument: "after" })
		.lean();
	if (!doc) return BillingError.WrongState;
	await releaseLock(deps, doc);
	return { customerId: doc._id };
}

export interface FirstPaymentInput {
	customerId: number;
	environment: Environment;
	attemptId: string;
	cvc: string;
	product: {
		billing: "CHARGE" | "PREAUTHORIZE" | "SCHEDULE";
		amountMinor: number;
		currency: string;
		currencyId: number;
		trialDays: number;
		renewal: Period | null;
	};
}

export interface FirstPaymentResult {
	outcome: "ACTIVE" | "DECLINED" | "PROCESSOR_ERROR" | "NO_PROCESSOR";
	customer: CustomerView;
	/** The charge or hold, when one was attempted. */
	transaction: TransactionView | null;
}

/** One transaction per processor operation: a repeated step finds the one already recorded. */
export async function recordTransaction(
	deps: BillingDeps,
	customer: CustomerDoc,
	money: { amountMinor: number; currency: string; currencyId: number },
	type: TransactionType,
	idempotencyKey: string,
	outcome: ProcessorOutcome,
): Promise<TransactionDoc> {
	const approved = outcome.status === "APPROVED";
	const refundable = approved && (type === TransactionType.SubscriptionStart || type === TransactionType.Renewal);
	const status = approved ? TransactionStatus.Approved : outcome.status === "DECLINED" ? TransactionStatus.Declined : TransactionStatus.Error;
	try {
		const doc = await deps.db.transactions.create({
			_id: await deps.db.ids.transactions.next(),
			accountId: customer.accountId,
			customerId: customer._id,
			timestamp: deps.now(),
			success: approved,
			type,
			amount: money.amountMinor,
			currency: money.currency,
			currencyId: money.currencyId,
			productId: customer.productId,
			transactionId: outcome.processorTransactionId,
			midId: customer.midId,
			midName: customer.midName,
			refundStatus: refundable ? RefundStatus.Refundable : RefundStatus.NotRefundable,
			status,
			paymentMethod: customer.cardType,
			declineReason: outcome.reason,
			idempotencyKey,
			refundableRemaining: refundable ? money.amountMinor : 0,
			originalTransactionId: null,
			// A charge or hold was attempted, approved or not: the merchant hears of it.
			outbox: [outboxEvent(deps, "TRANSACTION")],
		});
		return doc.toObject();
	} catch (err) {
		if ((err as { code?: number }).code !== 11000) throw err;
		return (await deps.db.transactions.findOne({ idempotencyKey }).lean())!;
	}
}

/** PENDING -> ACTIVE (with its CONVERSION event) or DECLINED, compare-and-set on the expected state. */
async function settle(deps: BillingDeps, customerId: number, changes: Partial<CustomerDoc>): Promise<CustomerDoc | null> {
	const update = changes.status === CustomerStatus.Active ? { $set: changes, $push: { outbox: outboxEvent(deps, "CONVERSION") } } : { $set: changes };
	return deps.db.customers.findOneAndUpdate({ _id: customerId, status: CustomerStatus.Pending }, update, { returnDocument: "after" }).lean();
}

/** Step 5: charge now, hold now, or schedule the first charge, by the product's billing kind. */
export async function firstPayment(deps: BillingDeps, input: FirstPaymentInput): Promise<FirstPaymentResult | BillingError> {
	const customer = await deps.db.customers.findById(input.customerId).lean();
	if (!customer) return BillingError.WrongState;
	if (customer.status !== CustomerStatus.Pending) return BillingError.WrongState;
	const now = deps.now();
	const { product } = input;

	if (product.billing === "SCHEDULE") {
		const firstCharge = addDays(now, product.trialDays);
		const activated = await settle(deps, customer._id, {
			status: CustomerStatus.Active,
			nextRenewalTimestamp: firstCharge,
			renewalActive: true,
			billingAnchor: firstCharge,
			periodsBilled: 0,
		});
		return { outcome: "ACTIVE", customer: toCustomerView(activated ?? customer), transaction: null };
	}

	const cards = processor(deps, input.environment);
	if (typeof cards === "string") {
		const declined = await settle(deps, customer._id, { status: CustomerStatus.Declined });
		await releaseLock(deps, customer);
		return { outcome: "NO_PROCESSOR", customer: toCustomerView(declined ?? customer), transaction: null };
	}

	const hold = product.billing === "PREAUTHORIZE";
	const idempotencyKey = `${input.attemptId}:${hold ? "authorize" : "charge"}`;
	const money = { idempotencyKey, cardToken: customer.cardToken, amount: product.amountMinor, currency: product.currency, midId: customer.midId };
	const outcome = await withRetries(() =>
		hold ? cards.authorize({ ...money, cvc: input.cvc }) : cards.charge({ ...money, initiator: "customer", cvc: input.cvc }),
	);
	const transaction = await recordTransaction(deps, customer, product, hold ? TransactionType.Preauthorization : TransactionType.SubscriptionStart, idempotencyKey, outcome);

	if (outcome.status !== "APPROVED") {
		const declined = await settle(deps, customer._id, { status: CustomerStatus.Declined });
		await releaseLock(deps, customer);
		return {
			outcome: outcome.status === "ERROR" ? "PROCESSOR_ERROR" : "DECLINED",
			customer: toCustomerView(declined ?? customer),
			transaction: toTransactionView(transaction),
		};
	}

	// A hold is captured when the trial ends (the schedule's first charge); a charge now is the schedule's first.
	const billingAnchor = hold ? addDays(now, product.trialDays) : now;
	const nextRenewalTimestamp = hold ? billingAnchor : product.renewal ? addPeriod(now, product.renewal) : null;
	const activated = await settle(deps, customer._id, {
		status: CustomerStatus.Active,
		nextRenewalTimestamp,
		renewalActive: nextRenewalTimestamp !== null,
		lastTimeBilled: hold ? null : now,
		authorizationId: hold ? outcome.processorTransactionId : null,
		billingAnchor,
		periodsBilled: hold ? 0 : 1,
	});
	return { outcome: "ACTIVE", customer: toCustomerView(activated ?? customer), transaction: toTransactionView(transaction) };
}
