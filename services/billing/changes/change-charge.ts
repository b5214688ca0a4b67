// An upgrade's difference, charged as a renewal is: the card on file, the
// customer's MID, merchant-initiated with the network reference, keyed
// `change:<quoteId>` so that a repeat asks the processor with the same key and
// charges once. Before the processor is asked the customer is marked
// (changeInFlight), listed for the recovery sweep (checkout_schedule) and its
// lease held past the sweep's grace period: if the node dies after the charge,
// no renewal or other change runs until the sweep has settled that charge by
// its key (change-recovery.ts).
import { config } from "../../../shared/config";
import type { ProductRecord } from "../../../shared/contracts/accounts";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { withRetries } from "../../../shared/processor-retries";
import { NO_TAX } from "../../../shared/tax";
import type { BillingDeps } from "../deps";
import type { ChangeQuoteDoc } from "../records/change-quote";
import type { CustomerDoc } from "../records/customer";
import type { TransactionDoc } from "../records/transaction";
import { TransactionType } from "../states";
import { recordCharge } from "../transaction-record";

/** The processor's idempotency key of a quote's charge (and its transaction's). */
export const changeKey = (quoteId: string) => `change:${quoteId}`;

/** The renewal lease's owner while a quote's change runs. */
export const changeOwner = (quoteId: string) => `change:${quoteId}`;

export interface Paid {
	outcome: PaymentOutcome;
	transaction: TransactionDoc;
}

/**
 * Marks the held customer as charging for `quote` and lists it for the sweep; false when the lease was lost (nothing
 * charged then). Listed first: a mark without its listing would never be swept. Listed again once marked: the customer
 * may already be listed in that slot (its checkout), and a sweep that read it before the mark removes that one listing
 * (the sweep lists it again itself when it reads the mark after its removal: checkout-recovery.ts).
 */
export async function markInFlight(deps: BillingDeps, customerId: number, held: object, quote: ChangeQuoteDoc): Promise<boolean> {
	const now = deps.now();
	await deps.checkouts.add(customerId, now);
	const until = new Date(now.getTime() + deps.refundGraceMs + config().renewalLeaseMs);
	const marked = await deps.db.customers.updateOne(held, {
		$set: { changeInFlight: { quoteId: quote._id, listedAt: now }, "renewalLease.until": until },
	});
	if (marked.matchedCount !== 1) return false;
	await deps.checkouts.add(customerId, now);
	return true;
}

/** Asks the processor for the quote's charge at `at`; throws when its outcome is unknown (the mark stays for the sweep). */
export function chargeChange(
	deps: BillingDeps,
	customer: CustomerDoc,
	product: ProductRecord,
	quote: ChangeQuoteDoc,
	at: Date,
): Promise<PaymentOutcome> {
	const reference = customer.networkTransactionId ? { networkTransactionId: customer.networkTransactionId } : {};
	return withRetries(() =>
		deps.payments.charge({
			idempotencyKey: changeKey(quote._id),
			cardToken: customer.cardToken,
			amount: quote.result.charged,
			currency: product.currency,
			midId: customer.midId,
			...reference,
			initiator: "merchant",
			at,
		}),
	);
}

/** The charge's SUBSCRIPTION_CHANGE transaction, once by its key whoever records it (the change or the sweep). */
export async function recordChange(
	deps: BillingDeps,
	customer: CustomerDoc,
	product: ProductRecord,
	quote: ChangeQuoteDoc,
	outcome: PaymentOutcome,
	at: Date,
): Promise<Paid> {
	const { charged, creditUsed, to } = quote.result;
	const transaction = await recordCharge(deps, {
		customer: { ...customer, productId: to.productId },
		money: { amountMinor: charged, currency: product.currency, currencyId: product.currencyId },
		type: TransactionType.SubscriptionChange,
		idempotencyKey: changeKey(quote._id),
		outcome,
		creditApplied: creditUsed,
		// Its lines as quoted, each with its product's tax, for its invoice.
		billed: { lines: quote.result.lines.map(line => ({ ...line })), tax: product.tax ?? NO_TAX },
		at,
	});
	return { outcome, transaction };
}
