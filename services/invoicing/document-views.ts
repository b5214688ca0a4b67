// Invoices and credit notes as the API shows them (docs/api.md#invoices):
// amounts as decimals of their currency, times as the API prints them, and
// the signed link a buyer opens them by.
import { findCurrency, toDecimal } from "../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import type { DocumentKind } from "./numbering";
import type { CreditNoteDoc, DocumentBase, InvoiceDoc, InvoiceLine } from "./records";

/** The buyer's link of a document: `/api/buyer/<kind's path>/<id>/<signature>`, absolute when PUBLIC_BASE_URL is set. */
export type LinkOf = (kind: DocumentKind, id: number) => string;

const amountIn = (currency: string) => {
	const found = findCurrency(currency)!;
	return (minor: number) => toDecimal(minor, found);
};

function lineView(line: InvoiceLine, amount: (minor: number) => number) {
	return {
		kind: line.kind,
		productId: line.productId,
		description: line.description,
		quantity: line.quantity,
		unitAmount: amount(line.unitAmount),
		periodStart: formatOptionalDateTime(line.from ? new Date(line.from) : null),
		periodEnd: formatOptionalDateTime(line.to ? new Date(line.to) : null),
		taxRate: line.taxRateBps / 100,
		net: amount(line.net),
		tax: amount(line.tax),
		gross: amount(line.gross),
		...(line.usage ? { usage: line.usage } : {}),
	};
}

function baseView(doc: DocumentBase, url: string) {
	const amount = amountIn(doc.currency);
	return {
		id: doc._id,
		number: doc.number,
		accountId: doc.accountId,
		customerId: doc.customerId,
		transactionId: doc._id,
		issuedAt: formatDateTime(doc.issuedAt),
		currency: doc.currency,
		language: doc.language,
		seller: doc.seller,
		buyer: doc.buyer,
		lines: doc.lines.map(line => lineView(line, amount)),
		taxInclusive: doc.taxInclusive,
		net: amount(doc.net),
		tax: amount(doc.tax),
		gross: amount(doc.gross),
		total: amount(doc.total),
		descriptor: doc.descriptor,
		transactionType: doc.transactionType,
		processorReference: doc.processorReference,
		url,
	};
}

export function toInvoiceView(doc: InvoiceDoc, linkOf: LinkOf) {
	const amount = amountIn(doc.currency);
	return {
		...baseView(doc, linkOf("invoice", doc._id)),
		creditApplied: amount(doc.creditApplied),
		// Number(): a document issued before ids were stored as numbers holds a string.
		discount: doc.discount
			? { couponId: Number(doc.discount.couponId), code: doc.discount.code, amount: amount(doc.discount.amount) }
			: null,
	};
}

export function toCreditNoteView(doc: CreditNoteDoc, linkOf: LinkOf) {
	return {
		...baseView(doc, linkOf("credit_note", doc._id)),
		reason: doc.reason,
		invoiceId: doc.invoiceId,
		invoiceNumber: doc.invoiceNumber,
	};
}

export type InvoiceView = ReturnType<typeof toInvoiceView>;
export type CreditNoteView = ReturnType<typeof toCreditNoteView>;

/** What INVOICE_ISSUED and CREDIT_NOTE_ISSUED carry (docs/webhooks.md): the emails to buyers are sent from it. */
export function issuedSummary(doc: DocumentBase, kind: DocumentKind, linkOf: LinkOf) {
	return {
		id: doc._id,
		number: doc.number,
		customerId: doc.customerId,
		transactionId: doc._id,
		total: amountIn(doc.currency)(doc.total),
		currency: doc.currency,
		url: linkOf(kind, doc._id),
		...("invoiceId" in doc ? { invoiceId: (doc as CreditNoteDoc).invoiceId, invoiceNumber: (doc as CreditNoteDoc).invoiceNumber } : {}),
	};
}
