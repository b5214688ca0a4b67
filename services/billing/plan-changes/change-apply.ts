// POST /api/customer/{id}/change and DELETE /api/customer/{id}/pending-change.
// A change runs under the customer's renewal lease (renewal-lease.ts), so no
// renewal, card update, unsubscribe's wait or other change races it. An
// upgrade's difference is charged as a renewal is (the card on file, the
// customer's MID, merchant-initiated with the network reference), keyed by the
// quote: a repeat asks the processor with the same key and charges once. The
// customer's new plan and its event are written in one update.
import { randomUUID } from "node:crypto";
import { config } from "../../../shared/config";
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { DeclineCategory } from "../../../shared/contracts/billing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { ApiError, ApiErrorType } from "../../../shared/errors";
import { leaseFree, newLease } from "../../../shared/persistence";
import { withRetries } from "../../../shared/processor-retries";
import { declineCategory } from "../decline-reasons";
import type { BillingDeps } from "../deps";
import type { ChangeQuoteDoc, QuotedChange } from "../documents/change-quote";
import type { CustomerDoc } from "../documents/customer";
import type { TransactionDoc } from "../documents/transaction";
import { scheduledEvent } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import { NO_TAX } from "../pricing/tax";
import { waitForRenewalInFlight } from "../renewal-lease";
import { TransactionType } from "../states";
import { recordCharge } from "../transaction-record";
import { toCustomerView, toTransactionView } from "../views";
import { changeDetails, quotedView } from "./change-answers";
import { PlanChangeError } from "./change-api-errors";
import { basisOf, type ChangeRequest, customerOf, customerRefusal, nothingNow, sameBasis, storeQuote } from "./change-quote";
import { creditOf, storedPeriod } from "./customer-period";

/** As long as a renewal's (RENEWAL_LEASE_MS): a change does what a renewal does, and a dead node's lease ends as soon. */
const leaseMs = () => config().renewalLeaseMs;
const CLAIM_TRIES = 3;

export interface ChangeDone {
	answer: object;
	changed: RelayTargets;
}

/** Takes the customer's renewal lease for `owner`; a renewal in flight is waited for. Null: still held by another. */
async function claim(deps: BillingDeps, accountId: number, customerId: number, owner: string): Promise<CustomerDoc | null> {
	for (let tries = 0; tries < CLAIM_TRIES; tries++) {
		const now = deps.now();
		const claimed = await deps.db.customers
			.findOneAndUpdate(
				{ _id: customerId, accountId, ...leaseFree("renewalLease", now) },
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
	if (!(await customerOf(deps, input.accountId, input.id))) return PlanChangeError.CustomerNotFound;
	const customer = await claim(deps, input.accountId, input.id, owner);
	if (!customer) return PlanChangeError.Busy;
	const held = { _id: customer._id, "renewalLease.owner": owner };
	try {
		return await fn(customer, held);
	} finally {
		await deps.db.customers.updateOne(held, { $set: { renewalLease: null } });
	}
}

/** The quote named, if it is this customer's, unused, unexpired and asks what the request asks. */
async function namedQuote(deps: BillingDeps, input: ChangeRequest & { quoteId: string }): Promise<ChangeQuoteDoc | PlanChangeError> {
	const quote = await deps.db.changeQuotes.findById(input.quoteId).lean();
	if (!quote || quote.accountId !== input.accountId || quote.customerId !== input.id) return PlanChangeError.QuoteNotFound;
	if (quote.usedAt) return PlanChangeError.QuoteUsed;
	if (quote.expiresAt.getTime() <= deps.now().getTime()) return PlanChangeError.QuoteExpired;
	const { to, mode } = quote.result;
	const mismatch =
		input.mode !== mode ||
		(input.productId !== undefined && input.productId !== to.productId) ||
		(input.quantity !== undefined && input.quantity !== to.quantity);
	return mismatch ? PlanChangeError.QuoteMismatch : quote;
}

export async function changeSubscription(
	deps: BillingDeps,
	input: ChangeRequest & { quoteId?: string },
): Promise<ChangeDone | PlanChangeError> {
	const quote = input.quoteId ? await namedQuote(deps, { ...input, quoteId: input.quoteId }) : await storeQuote(deps, input);
	if (typeof quote === "string") return quote;
	return underLease(deps, input, `change:${quote._id}`, async (customer, held) => {
		if (customer.lastQuoteId === quote._id) return PlanChangeError.QuoteUsed;
		const refusal = customerRefusal(customer);
		if (refusal) return refusal;
		if (!sameBasis(basisOf(customer), quote.basis)) return PlanChangeError.QuoteStale;
		const product = await deps.productOf(customer.accountId, quote.result.to.productId);
		if (!product) return PlanChangeError.ProductNotFound;
		const paid = quote.result.charged > 0 ? await chargeChange(deps, customer, product, quote) : null;
		if (paid && paid.outcome.status !== "APPROVED") return declined(deps, customer, held, paid);
		return applied(deps, customer, held, quote, paid?.transaction ?? null);
	});
}

interface Paid {
	outcome: PaymentOutcome;
	transaction: TransactionDoc;
}

/** The upgrade's difference, as a renewal charges: the card on file, its MID, merchant-initiated with the network reference. */
async function chargeChange(deps: BillingDeps, customer: CustomerDoc, product: ProductRecord, quote: ChangeQuoteDoc): Promise<Paid> {
	const { charged, creditUsed, to } = quote.result;
	const idempotencyKey = `change:${quote._id}`;
	const reference = customer.networkTransactionId ? { networkTransactionId: customer.networkTransactionId } : {};
	const outcome = await withRetries(() =>
		deps.payments.charge({
			idempotencyKey,
			cardToken: customer.cardToken,
			amount: charged,
			currency: product.currency,
			midId: customer.midId,
			...reference,
			initiator: "merchant",
		}),
	);
	const transaction = await recordCharge(deps, {
		customer: { ...customer, productId: to.productId },
		money: { amountMinor: charged, currency: product.currency, currencyId: product.currencyId },
		type: TransactionType.SubscriptionChange,
		idempotencyKey,
		outcome,
		creditApplied: creditUsed,
		// Its lines as quoted, each with its product's tax, for its invoice.
		billed: { lines: quote.result.lines.map(line => ({ ...line })), tax: product.tax ?? NO_TAX },
	});
	return { outcome, transaction };
}

/** Nothing changes; an issuer that wants the buyer's authentication is answered as a renewal refused for it. */
async function declined(deps: BillingDeps, customer: CustomerDoc, held: object, paid: Paid): Promise<never> {
	const { transaction } = paid;
	const category = declineCategory(paid.outcome);
	const changed: RelayTargets = { transactions: [transaction._id], customers: [] };
	let message = `The charge was declined: ${paid.outcome.reason ?? "no reason given"}; nothing changed (transaction ${transaction._id})`;
	if (category === DeclineCategory.Authentication) {
		const event = await scheduledEvent(deps, "c", customer._id, "AUTHENTICATION_REQUIRED", { transactionId: transaction._id });
		await deps.db.customers.updateOne(held, { $push: { outbox: event } });
		changed.customers = [customer._id];
		message = `The issuer asks for the buyer's authentication: send the buyer a card update link (POST /api/session with customerId); nothing changed (transaction ${transaction._id})`;
	}
	deps.relay(changed);
	throw new ApiError(ApiErrorType.PaymentDeclined, message);
}

/** The customer's fields after the change, by its kind. */
function changedFields(result: QuotedChange, quoteId: string): Partial<CustomerDoc> {
	const base = { lastQuoteId: quoteId, credit: result.creditAfter };
	if (result.trial) return { ...base, productId: result.to.productId, quantity: result.to.quantity };
	const state = result.state!;
	if (result.mode === "at_period_end") return { ...base, period: state };
	const plan = { ...base, period: state, productId: result.to.productId, quantity: result.to.quantity };
	// Another interval: a new period starts now, and the schedule with it.
	if (!result.intervalChange) return plan;
	return { ...plan, nextRenewalTimestamp: state.end, billingAnchor: state.anchor, periodsBilled: 1, lastTimeBilled: state.start };
}

async function applied(
	deps: BillingDeps,
	customer: CustomerDoc,
	held: object,
	quote: ChangeQuoteDoc,
	transaction: TransactionDoc | null,
): Promise<ChangeDone> {
	const { result } = quote;
	const fields = changedFields(result, quote._id);
	const scheduled = !result.trial && result.mode === "at_period_end";
	const effectiveAt = scheduled ? customer.nextRenewalTimestamp : deps.now();
	const event = await scheduledEvent(deps, "c", customer._id, scheduled ? "SUBSCRIPTION_CHANGE_SCHEDULED" : "SUBSCRIPTION_CHANGED", {
		...(scheduled ? {} : { transactionId: transaction?._id ?? null }),
		change: changeDetails(quote._id, result, effectiveAt),
	});
	const moved = fields.nextRenewalTimestamp && customer.nextRenewalTimestamp;
	if (moved) await deps.renewals.addAll([{ id: customer._id, at: fields.nextRenewalTimestamp! }]);
	await deps.db.customers.updateOne(held, { $set: fields, $push: { outbox: event } });
	if (moved) await deps.renewals.remove(customer._id, customer.nextRenewalTimestamp!, fields.nextRenewalTimestamp!);
	await deps.db.changeQuotes.updateOne({ _id: quote._id, usedAt: null }, { $set: { usedAt: deps.now() } });
	const after = { ...customer, ...fields, renewalLease: null };
	return {
		answer: {
			customer: toCustomerView(after),
			change: quotedView(quote._id, result),
			transaction: transaction ? toTransactionView(transaction) : null,
		},
		changed: { customers: [customer._id], transactions: transaction ? [transaction._id] : [] },
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
			changed: { customers: [customer._id] },
		};
	});
}
