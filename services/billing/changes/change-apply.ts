// POST /api/customer/{id}/change and DELETE /api/customer/{id}/pending-change.
// A change runs under the customer's renewal lease (renewal-lease.ts), so no
// renewal, card update, unsubscribe's wait or other change races it. An
// upgrade's difference is charged as a renewal is (change-charge.ts), keyed by
// the quote; a change sent with an Idempotency-Key and no quoteId makes its
// quote from the key, so a repeat finds the same quote (and, once applied, its
// answer). The customer's new plan and its event are written in one update.
import { randomUUID } from "node:crypto";
import { config } from "../../../shared/config";
import { DeclineCategory } from "../../../shared/contracts/billing";
import { declineCategory } from "../../../shared/decline-reasons";
import { isDuplicateKey, leaseFree, newLease } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import { listExpiryWarning } from "../expiry-warnings";
import { scheduledEvent } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import type { ChangeQuoteDoc, QuotedChange } from "../records/change-quote";
import type { CustomerDoc } from "../records/customer";
import { byWhom } from "../records/outbox-event";
import type { TransactionDoc } from "../records/transaction";
import { waitForRenewalInFlight } from "../renewal-lease";
import { toCustomerView, toTransactionView } from "../views";
import { changeDetails, quotedView } from "./change-answers";
import { PlanChangeError } from "./change-api-errors";
import { changeOwner, chargeChange, markInFlight, type Paid, recordChange } from "./change-charge";
import { basisOf, type ChangeRequest, customerOf, customerRefusal, keyedQuoteId, nothingNow, sameBasis, storeQuote } from "./change-quote";
import { creditOf, storedPeriod } from "./customer-period";
import type { PeriodDiscount } from "./rules/subscription-period";

/** As long as a renewal's (RENEWAL_LEASE_MS): a change does what a renewal does, and a dead node's lease ends as soon. */
const leaseMs = () => config().renewalLeaseMs;
const CLAIM_TRIES = 3;

export interface ChangeDone {
	answer: object;
	toRelay: RelayTargets;
}

/** The card declined the change's charge: nothing changed; `declined` is the answer's message (402, billing.service.ts). */
export interface ChangeDeclined {
	declined: string;
	toRelay: RelayTargets;
}

/** Takes the customer's renewal lease for `owner`; a renewal in flight is waited for. Null: still held by another. */
async function claim(deps: BillingDeps, accountId: number, customerId: number, owner: string): Promise<CustomerDoc | null> {
	for (let tries = 0; tries < CLAIM_TRIES; tries++) {
		const now = deps.now();
		const claimed = await deps.db.customers
			.findOneAndUpdate(
				{ _id: customerId, accountId, changeInFlight: null, ...leaseFree("renewalLease", now) },
				{ $set: { renewalLease: newLease(owner, now, leaseMs()) } },
				{ returnDocument: "after" },
			)
			.lean();
		if (claimed) return claimed;
		await waitForRenewalInFlight(deps, customerId);
	}
	return null;
}

/** Runs `fn` while holding the customer's renewal lease, and lets it go after. */
async function underLease<R>(
	deps: BillingDeps,
	input: { accountId: number; id: number },
	owner: string,
	fn: (customer: CustomerDoc, held: object) => Promise<R>,
): Promise<R | PlanChangeError> {
	const read = await customerOf(deps, input.accountId, input.id);
	if (!read) return PlanChangeError.CustomerNotFound;
	// A change whose charge is not settled yet keeps the lease until the sweep settles it: busy, without waiting.
	if (read.changeInFlight) return PlanChangeError.Busy;
	const customer = await claim(deps, input.accountId, input.id, owner);
	if (!customer) return PlanChangeError.Busy;
	const held = { _id: customer._id, "renewalLease.owner": owner };
	try {
		return await fn(customer, held);
	} finally {
		// A charge whose outcome is unknown keeps its mark and the lease, for the sweep.
		await deps.db.customers.updateOne({ ...held, changeInFlight: null }, { $set: { renewalLease: null } });
	}
}

/** The quote named, if it is this customer's, unused, unexpired and asks what the request asks. */
async function namedQuote(deps: BillingDeps, input: ChangeRequest & { quoteId: string }): Promise<ChangeQuoteDoc | PlanChangeError> {
	const quote = await deps.db.changeQuotes.findById(input.quoteId).lean();
	if (!quote || quote.accountId !== input.accountId || quote.customerId !== input.id) return PlanChangeError.QuoteNotFound;
	const { to, mode } = quote.result;
	const mismatch =
		input.mode !== mode ||
		(input.productId !== undefined && input.productId !== to.productId) ||
		(input.quantity !== undefined && input.quantity !== to.quantity);
	if (mismatch) return PlanChangeError.QuoteMismatch;
	if (quote.usedAt) return PlanChangeError.QuoteUsed;
	return quote.expiresAt.getTime() <= deps.now().getTime() ? PlanChangeError.QuoteExpired : quote;
}

/** The change's quote: the one named, the one its Idempotency-Key made (a repeat), or a new one. */
async function quoteOf(deps: BillingDeps, input: ChangeInput): Promise<ChangeQuoteDoc | PlanChangeError> {
	if (input.quoteId) return namedQuote(deps, { ...input, quoteId: input.quoteId });
	if (!input.idempotencyKey) return storeQuote(deps, input);
	const id = keyedQuoteId(input.accountId, input.id, input.idempotencyKey);
	// A repeat finds the quote its key made; a first try makes it (two at once: one insert wins, both use it).
	if (await deps.db.changeQuotes.exists({ _id: id })) return namedQuote(deps, { ...input, quoteId: id });
	const stored = await storeQuote(deps, input, id).catch(err => {
		if (isDuplicateKey(err)) return null;
		throw err;
	});
	return stored ?? (await namedQuote(deps, { ...input, quoteId: id }));
}

export type ChangeInput = ChangeRequest & { quoteId?: string; idempotencyKey?: string };

export async function changeSubscription(deps: BillingDeps, input: ChangeInput): Promise<ChangeDone | ChangeDeclined | PlanChangeError> {
	const quote = await quoteOf(deps, input);
	if (quote === PlanChangeError.QuoteUsed) return repeated(deps, input);
	if (typeof quote === "string") return quote;
	return underLease(deps, input, changeOwner(quote._id), (customer, held) => applyQuote(deps, input, quote, customer, held));
}

/** The quote made into the change, while the customer's lease is held: charged (if anything is due), then applied. */
async function applyQuote(deps: BillingDeps, input: ChangeInput, quote: ChangeQuoteDoc, customer: CustomerDoc, held: object) {
	if (customer.lastQuoteId === quote._id) return repeated(deps, input);
	const refusal = customerRefusal(customer);
	if (refusal) return refusal;
	if (!sameBasis(basisOf(customer), quote.basis)) return PlanChangeError.QuoteStale;
	const product = await deps.productOf(customer.accountId, quote.result.to.productId);
	if (!product) return PlanChangeError.ProductNotFound;
	// Made at the account's now (a sandbox's test clock), with the lines the quote bound.
	const at = await deps.clocks.now(customer.accountId);
	if (quote.result.charged === 0) return applied(deps, customer, held, quote, null, at);
	if (!(await markInFlight(deps, customer._id, held, quote))) return PlanChangeError.Busy;
	const paid = await recordChange(deps, customer, product, quote, await chargeChange(deps, customer, product, quote, at), at);
	if (paid.outcome.status !== "APPROVED") return declined(deps, customer, held, paid);
	return applied(deps, customer, held, quote, paid.transaction, at);
}

/** A change already applied: a named quote is refused as used; a repeated Idempotency-Key gets its first answer. */
function repeated(deps: BillingDeps, input: ChangeInput): Promise<ChangeDone | PlanChangeError> | PlanChangeError {
	return input.idempotencyKey && !input.quoteId ? answerAgain(deps, input) : PlanChangeError.QuoteUsed;
}

/** A repeat of an Idempotency-Key whose change was applied: the answer it got then. */
async function answerAgain(deps: BillingDeps, input: ChangeInput): Promise<ChangeDone | PlanChangeError> {
	const quote = await deps.db.changeQuotes.findById(keyedQuoteId(input.accountId, input.id, input.idempotencyKey!)).lean();
	return quote?.answer ? { answer: quote.answer, toRelay: { customers: [], transactions: [] } } : PlanChangeError.QuoteUsed;
}

/**
 * Nothing changes: the declined charge's transaction is relayed and the action answers 402. An issuer that wants the
 * buyer's authentication is answered as a renewal refused for it (AUTHENTICATION_REQUIRED).
 */
async function declined(deps: BillingDeps, customer: CustomerDoc, held: object, paid: Paid): Promise<ChangeDeclined> {
	const { transaction } = paid;
	const settled = { $set: { changeInFlight: null } };
	if (declineCategory(paid.outcome) !== DeclineCategory.Authentication) {
		await deps.db.customers.updateOne(held, settled);
		return {
			declined: `The charge was declined: ${paid.outcome.reason ?? "no reason given"}; nothing changed (transaction ${transaction._id})`,
			toRelay: { transactions: [transaction._id], customers: [] },
		};
	}
	const event = await scheduledEvent(deps, "c", customer._id, "AUTHENTICATION_REQUIRED", { transactionId: transaction._id });
	await deps.db.customers.updateOne(held, { ...settled, $push: { outbox: event } });
	return {
		declined: `The issuer asks for the buyer's authentication: send the buyer a card update link (POST /api/session with customerId); nothing changed (transaction ${transaction._id})`,
		toRelay: { transactions: [transaction._id], customers: [customer._id] },
	};
}

/** The customer's fields after the change, by its kind. */
function changedFields(result: QuotedChange, quoteId: string, customer: CustomerDoc): Partial<CustomerDoc> {
	const base = { lastQuoteId: quoteId, credit: result.creditAfter };
	if (result.trial) return { ...base, productId: result.to.productId, quantity: result.to.quantity };
	const state = result.state!;
	if (result.mode === "at_period_end") return { ...base, period: state };
	const plan = { ...base, period: state, productId: result.to.productId, quantity: result.to.quantity };
	// Another interval: a new period starts now, and the schedule with it.
	if (!result.intervalChange) return plan;
	const schedule = { nextRenewalTimestamp: state.end, billingAnchor: state.anchor, periodsBilled: 1, lastTimeBilled: state.start };
	return { ...plan, ...schedule, ...newPeriodCoupon(customer, state.discount ?? null) };
}

/** A new period's charge used one of the coupon's periods when the coupon discounted it (docs/coupons.md#proration). */
function newPeriodCoupon(customer: CustomerDoc, discount: PeriodDiscount | null): Partial<CustomerDoc> {
	const coupon = customer.coupon;
	if (!discount || !coupon) return { periodCoupon: null };
	return { periodCoupon: discount, coupon: { ...coupon, periodsLeft: coupon.periodsLeft === null ? null : coupon.periodsLeft - 1 } };
}

export async function applied(
	deps: BillingDeps,
	customer: CustomerDoc,
	held: object,
	quote: ChangeQuoteDoc,
	transaction: TransactionDoc | null,
	/** When it is made, in the account's time. */
	at: Date,
): Promise<ChangeDone> {
	const { result } = quote;
	const fields = { ...changedFields(result, quote._id, customer), changeInFlight: null };
	const scheduled = !result.trial && result.mode === "at_period_end";
	const effectiveAt = scheduled ? customer.nextRenewalTimestamp : at;
	// A change made now moves MRR (seats, plan, the coupon a new period used); one at the period's end, at that renewal.
	const { counted, entry } = await countUpdate(deps, customer, fields, { at });
	const event = await scheduledEvent(deps, "c", customer._id, scheduled ? "SUBSCRIPTION_CHANGE_SCHEDULED" : "SUBSCRIPTION_CHANGED", {
		...(scheduled ? {} : { transactionId: transaction?._id ?? null }),
		change: changeDetails(quote._id, result, effectiveAt),
		...carrying(entry),
		...byWhom(quote.by),
	});
	const after = { ...customer, ...fields, renewalLease: null };
	const answer = {
		customer: toCustomerView(after),
		change: quotedView(quote._id, result),
		transaction: transaction ? toTransactionView(transaction) : null,
	};
	// The answer first: once the customer says the quote was applied, a repeat of its key finds it.
	await deps.db.changeQuotes.updateOne({ _id: quote._id, usedAt: null }, { $set: { answer } });
	const moved = fields.nextRenewalTimestamp && customer.nextRenewalTimestamp;
	if (moved) {
		await deps.renewals.addAll([{ id: customer._id, at: fields.nextRenewalTimestamp! }]);
		// A card that will have expired by the new renewal is warned about before it (CARD_EXPIRING).
		await listExpiryWarning(deps, { ...customer, nextRenewalTimestamp: fields.nextRenewalTimestamp! }, at);
	}
	await deps.db.customers.updateOne(held, { $set: { ...fields, counted }, $push: { outbox: event } });
	if (moved) await deps.renewals.remove(customer._id, customer.nextRenewalTimestamp!, fields.nextRenewalTimestamp!);
	await deps.db.changeQuotes.updateOne({ _id: quote._id, usedAt: null }, { $set: { usedAt: deps.now() } });
	return {
		answer,
		toRelay: { customers: [customer._id], transactions: transaction ? [transaction._id] : [] },
	};
}

/** DELETE /api/customer/{id}/pending-change: the change waiting for the period's end is dropped. */
export async function cancelPendingChange(
	deps: BillingDeps,
	input: { accountId: number; id: number },
): Promise<ChangeDone | PlanChangeError> {
	return underLease(deps, input, `cancel-change:${randomUUID()}`, async (customer, held) => {
		const period = storedPeriod(customer);
		const pending = period?.pending;
		if (!period || !pending) return PlanChangeError.NoPendingChange;
		const from = { productId: period.plan.productId, quantity: period.plan.quantity };
		const result = nothingNow(
			{
				mode: "at_period_end",
				trial: false,
				currency: period.currency,
				from,
				to: { productId: pending.productId, quantity: pending.quantity },
				nextRenewal: { at: period.end, ...from, amount: period.plan.unitAmount * period.plan.quantity },
			},
			creditOf(customer),
		);
		const event = await scheduledEvent(deps, "c", customer._id, "SUBSCRIPTION_CHANGE_CANCELLED", {
			change: changeDetails(null, result, customer.nextRenewalTimestamp),
		});
		const fields = { period: { ...period, pending: null } };
		await deps.db.customers.updateOne(held, { $set: fields, $push: { outbox: event } });
		return {
			answer: { customer: toCustomerView({ ...customer, ...fields }) },
			toRelay: { customers: [customer._id] },
		};
	});
}
