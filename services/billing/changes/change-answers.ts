// What the change endpoints answer: amounts as decimals of the subscription's
// currency, dates as the API prints them (docs/api.md#subscription-changes).
// `total` is due − creditAdded, and each line's `gross` its amount with the
// tax its price excludes (change-amounts.ts), so Σ lines' gross = total.
import { findCurrency, toDecimal } from "../../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../../shared/time";
import type { ChangeQuoteDoc, QuotedChange } from "../records/change-quote";
import type { ChangeDetails } from "../records/outbox-event";
import { lineGross } from "./rules/change-amounts";

export function quotedView(quoteId: string, result: QuotedChange) {
	const currency = findCurrency(result.currency)!;
	const amount = (minor: number) => toDecimal(minor, currency);
	return {
		quoteId,
		mode: result.mode,
		currency: result.currency,
		trial: result.trial,
		intervalChange: result.intervalChange,
		from: result.from,
		to: result.to,
		lines: result.lines.map(line => ({
			kind: line.kind,
			productId: line.productId,
			quantity: line.quantity,
			unitAmount: amount(line.unitAmount),
			from: formatDateTime(new Date(line.from)),
			to: formatDateTime(new Date(line.to)),
			amount: amount(line.amount),
			gross: amount(lineGross(line.amount, line.tax)),
		})),
		total: amount(result.due - result.creditAdded),
		due: amount(result.due),
		creditUsed: amount(result.creditUsed),
		charge: amount(result.charged),
		creditAdded: amount(result.creditAdded),
		creditAfter: amount(result.creditAfter),
		nextRenewal: {
			at: formatOptionalDateTime(result.nextRenewal.at ? new Date(result.nextRenewal.at) : null),
			productId: result.nextRenewal.productId,
			quantity: result.nextRenewal.quantity,
			amount: amount(result.nextRenewal.amount),
		},
	};
}

export function quoteView(quote: ChangeQuoteDoc) {
	return { ...quotedView(quote._id, quote.result), customerId: quote.customerId, expiresAt: formatDateTime(quote.expiresAt) };
}

/** The event's details of a change made or scheduled. */
export function changeDetails(quoteId: string | null, result: QuotedChange, effectiveAt: Date | null): ChangeDetails {
	const { mode, currency, from, to, due, charged, creditUsed, creditAdded, creditAfter } = result;
	return { quoteId, mode, currency, from, to, due, charged, creditUsed, creditAdded, creditAfter, effectiveAt };
}
