// POST /api/customer/{id}/change-quote: what a change of product and/or
// quantity costs now, priced by rules/proration.ts (priceChange) and
// rules/change-amounts.ts (tax, due or credit), stored as a binding quote
// (records/change-quote.ts) the change then applies as it is, for
// QUOTE_TTL_MS. docs/subscriptions.md explains the rules to merchants.
import { createHash, randomBytes } from "node:crypto";
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { ownedBy } from "../../../shared/persistence";
import { NO_TAX, planGross } from "../../../shared/tax";
import { couponInForce } from "../coupons/discount";
import type { BillingDeps } from "../deps";
import type { ChangeQuoteDoc, QuoteBasis, QuotedChange } from "../records/change-quote";
import { type CustomerDoc, renewalOwed } from "../records/customer";
import { type Actor, byWhom } from "../records/outbox-event";
import { CustomerStatus } from "../states";
import { PlanChangeError } from "./change-api-errors";
import { creditOf, currentPeriod, quantityOf } from "./customer-period";
import { changeAmounts } from "./rules/change-amounts";
import type { ChangeError } from "./rules/change-errors";
import { priceChange } from "./rules/proration";
import type { ChangeMode } from "./rules/subscription-period";

/** How long a quote binds: 15 minutes (docs/subscriptions.md). */
export const QUOTE_TTL_MS = 15 * 60_000;

export interface ChangeRequest {
	accountId: number;
	id: number;
	productId?: number;
	quantity?: number;
	mode: ChangeMode;
	/** The customer portal's quotes: the buyer's (the gateway never takes it from a request). */
	by?: Actor;
}

export const basisOf = (customer: CustomerDoc): QuoteBasis => ({
	productId: customer.productId,
	quantity: quantityOf(customer),
	credit: creditOf(customer),
	nextRenewalTimestamp: customer.nextRenewalTimestamp,
	periodsBilled: customer.periodsBilled,
});

export function sameBasis(a: QuoteBasis, b: QuoteBasis): boolean {
	const time = (date: Date | null) => (date ? new Date(date).getTime() : null);
	return (
		a.productId === b.productId &&
		a.quantity === b.quantity &&
		a.credit === b.credit &&
		a.periodsBilled === b.periodsBilled &&
		time(a.nextRenewalTimestamp) === time(b.nextRenewalTimestamp)
	);
}

/** Why a customer cannot change now; null when it can. */
export function customerRefusal(customer: CustomerDoc): PlanChangeError | null {
	if (customer.status !== CustomerStatus.Active || !customer.renewalActive || !customer.nextRenewalTimestamp)
		return PlanChangeError.NotActive;
	if (renewalOwed(customer)) return PlanChangeError.RenewalOwed;
	if (customer.periodsBilled === 0 && customer.authorizationId !== null) return PlanChangeError.TrialHold;
	if (customer.cancellation) return PlanChangeError.CancellationScheduled;
	return null;
}

function productRefusal(current: ProductRecord, next: ProductRecord): PlanChangeError | null {
	if (next.id !== current.id && !next.active) return PlanChangeError.ProductInactive;
	if (!next.renewal) return PlanChangeError.ProductNotRenewing;
	if (next.currency !== current.currency) return PlanChangeError.OtherCurrency;
	return null;
}

const CHANGE_ERRORS: Partial<Record<ChangeError["code"], PlanChangeError>> = {
	CURRENCY_MISMATCH: PlanChangeError.OtherCurrency,
	INTERVAL_CHANGE_WITHOUT_PRORATION: PlanChangeError.IntervalWithoutProration,
	AMOUNT_TOO_LARGE: PlanChangeError.AmountTooLarge,
	INVALID_QUANTITY: PlanChangeError.AmountTooLarge,
};

/** What the change would come to at `at` (the account's now), for the customer as read; a refusal when it cannot be made. */
export async function computeChange(
	deps: BillingDeps,
	customer: CustomerDoc,
	input: ChangeRequest,
	at: Date,
): Promise<QuotedChange | PlanChangeError> {
	const refusal = customerRefusal(customer);
	if (refusal) return refusal;
	const current = await deps.productOf(customer.accountId, customer.productId);
	if (!current) return PlanChangeError.NotActive;
	const next = input.productId === undefined ? current : await deps.productOf(customer.accountId, input.productId);
	if (!next) return PlanChangeError.ProductNotFound;
	const productRefused = productRefusal(current, next);
	if (productRefused) return productRefused;
	// Quantity left out: the customer's seats stay as they are.
	const to = { productId: next.id, quantity: input.quantity ?? quantityOf(customer) };
	const from = { productId: customer.productId, quantity: quantityOf(customer) };
	const period = currentPeriod(customer, current);
	if (!period) return trialChange(customer, next, input.mode, from, to);
	if (to.productId === period.plan.productId && to.quantity === period.plan.quantity) return PlanChangeError.SamePlan;
	const quoted = priceChange(
		period,
		{
			...to,
			unitAmount: next.amountMinor,
			renewal: next.renewal!,
			currency: next.currency,
			mode: input.mode,
			// A new period the change starts (another interval) is a charge the customer's coupon discounts while it lasts.
			discount: couponInForce(customer.coupon, { productId: next.id, currency: next.currency }),
		},
		at,
	);
	if (!quoted.ok) return CHANGE_ERRORS[quoted.error.code] ?? PlanChangeError.PeriodOver;
	const q = quoted.value;
	// Each line with its tax (the old plan's credit at the old product's rule), paid from the credit first.
	const rules = q.lines.map(line => ({ amount: line.amount, rule: taxRule(line.kind, current, next) }));
	const amounts = changeAmounts(rules, creditOf(customer));
	if (!amounts) return PlanChangeError.AmountTooLarge;
	return {
		mode: input.mode,
		trial: false,
		intervalChange: q.intervalChange,
		currency: period.currency,
		from,
		to,
		lines: q.lines.map(({ kind, productId, quantity, unitAmount, from: start, to: end, amount }) => ({
			kind: kind as "unused_time_credit" | "new_plan_charge",
			productId,
			quantity,
			unitAmount,
			from: start,
			to: end,
			amount,
			tax: taxRule(kind, current, next),
		})),
		due: amounts.due,
		creditUsed: amounts.creditUsed,
		charged: amounts.charged,
		creditAdded: amounts.creditAdded,
		creditAfter: amounts.creditAfter,
		nextRenewal: {
			at: q.nextRenewal.at,
			productId: q.nextRenewal.productId,
			quantity: q.nextRenewal.quantity,
			amount: planGross(q.nextRenewal.amount, 1, next.tax),
		},
		state: q.state,
	};
}

/** A change's line is taxed as its product: the old plan's credit as the old product, the new plan's charge as the new. */
const taxRule = (kind: string, current: ProductRecord, next: ProductRecord) =>
	(kind === "unused_time_credit" ? current.tax : next.tax) ?? NO_TAX;

/** A change that charges and credits nothing now (in a trial, or one cancelled): no lines, the credit as it is. */
export function nothingNow(
	change: Pick<QuotedChange, "mode" | "trial" | "currency" | "from" | "to" | "nextRenewal">,
	credit: number,
): QuotedChange {
	return {
		...change,
		intervalChange: false,
		lines: [],
		due: 0,
		creditUsed: 0,
		charged: 0,
		creditAdded: 0,
		creditAfter: credit,
		state: null,
	};
}

/** In a trial nothing was paid: the plan the first charge bills switches now, whatever the mode, with nothing prorated. */
function trialChange(
	customer: CustomerDoc,
	next: ProductRecord,
	mode: ChangeMode,
	from: QuotedChange["from"],
	to: QuotedChange["to"],
): QuotedChange | PlanChangeError {
	if (from.productId === to.productId && from.quantity === to.quantity) return PlanChangeError.SamePlan;
	const amount = next.amountMinor * to.quantity;
	if (!Number.isSafeInteger(amount)) return PlanChangeError.AmountTooLarge;
	return nothingNow(
		{ mode, trial: true, currency: next.currency, from, to, nextRenewal: { at: customer.nextRenewalTimestamp, ...to, amount } },
		creditOf(customer),
	);
}

/** The customer, if it is the account's. */
export async function customerOf(deps: BillingDeps, accountId: number, id: number): Promise<CustomerDoc | null> {
	return ownedBy(await deps.db.customers.findById(id).lean(), accountId);
}

/** The quote a change sent with an Idempotency-Key makes and finds again: a digest of the key, per account and customer. */
export function keyedQuoteId(accountId: number, customerId: number, idempotencyKey: string): string {
	return `q_${createHash("sha256").update(`${accountId}:${customerId}:${idempotencyKey}`).digest("hex").slice(0, 32)}`;
}

/** Computes the change and stores it as a quote, by a random id or the one given (keyedQuoteId). */
export async function storeQuote(deps: BillingDeps, input: ChangeRequest, id?: string): Promise<ChangeQuoteDoc | PlanChangeError> {
	if (input.productId === undefined && input.quantity === undefined) return PlanChangeError.NothingAsked;
	const customer = await customerOf(deps, input.accountId, input.id);
	if (!customer) return PlanChangeError.CustomerNotFound;
	// Prorated at the account's now (a sandbox's test clock); it binds for QUOTE_TTL_MS of real time.
	const quotedAt = await deps.clocks.now(customer.accountId);
	const result = await computeChange(deps, customer, input, quotedAt);
	if (typeof result === "string") return result;
	const now = deps.now();
	const quote: ChangeQuoteDoc = {
		_id: id ?? `q_${randomBytes(16).toString("hex")}`,
		accountId: customer.accountId,
		customerId: customer._id,
		createdAt: now,
		expiresAt: new Date(now.getTime() + QUOTE_TTL_MS),
		basis: basisOf(customer),
		result,
		usedAt: null,
		...byWhom(input.by),
	};
	await deps.db.changeQuotes.create(quote);
	return quote;
}
