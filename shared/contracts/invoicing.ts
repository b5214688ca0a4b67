// What billing hands the invoicing service, and what invoicing answers
// (docs/invoices.md). Billing hands over each transaction whose invoice or
// credit note is due as it was charged, with the buyer the document names and
// the customer its event carries; invoicing issues each once, keyed by the
// transaction's id. Dates are ISO 8601 strings: the requests cross NATS.
// Which transactions get a document is decided once, here (documentKindOf).
import type { TierLine } from "../usage-pricing";
import type { CustomerView } from "./billing";

/** What a usage line billed (docs/usage.md#invoices): the meter's quantity, its tiers; an adjustment's period before. */
export interface UsageDetail {
	meter: string;
	/** The meter's name. */
	name: string;
	/** Units. */
	quantity: number;
	packages?: number;
	tiers?: TierLine[];
	/** Minor units before the minimum. */
	usageAmount: number;
	minimumAmount: number | null;
	/** An adjustment: the period whose late events it bills, and the quantity that period was billed for. */
	adjusts?: { period: number; billedQuantity: number };
}

/** The kinds of line a charge bills: a plan's period, a change's two lines, a meter's usage or its late events. */
export const CHARGED_LINE_KINDS = ["plan", "unused_time_credit", "new_plan_charge", "usage", "usage_adjustment"] as const;
export type ChargedLineKind = (typeof CHARGED_LINE_KINDS)[number];

/** A line of what a charge billed: a plan's period, one of a change's two lines, or usage. */
export interface ChargedLine {
	kind: ChargedLineKind;
	productId: number;
	quantity: number;
	unitAmount: number;
	/** As the price states it (tax included or not, by the charge's `tax`). */
	amount: number;
	from: string | null;
	to: string | null;
	/** Its own tax when it differs from the charge's (a change's old plan). */
	tax?: { rateBps: number; inclusive: boolean };
	usage?: UsageDetail;
}

/** A coupon's discount on a charge (minor units, positive). */
export interface DiscountLine {
	couponId: number;
	code: string | null;
	amount: number;
}

/** A transaction as its document is issued from it (minor units; a refund's amount negative). */
export interface ChargedTransaction {
	id: number;
	accountId: number;
	customerId: number;
	productId: number;
	/** TransactionType: SUBSCRIPTION_START, RENEWAL, SUBSCRIPTION_CHANGE, FINAL_USAGE get invoices; REFUNDED, CHARGEBACK credit notes. */
	type: string;
	status: string;
	amount: number;
	currency: string;
	/** When it was made, in its account's time: the document's date. */
	timestamp: string;
	/** The MID's name, as the buyer's statement shows it. */
	midName: string;
	processorReference: string | null;
	/** A refund's or chargeback's charge. */
	originalTransactionId: number | null;
	creditApplied: number;
	discount: DiscountLine | null;
	/** What it billed, line by line: every charge has it; null on a refund or chargeback. */
	billed: { lines: ChargedLine[]; tax: { rateBps: number; inclusive: boolean } } | null;
}

export type DocumentKind = "invoice" | "credit_note";

const INVOICE_TYPES = ["SUBSCRIPTION_START", "RENEWAL", "SUBSCRIPTION_CHANGE", "FINAL_USAGE"];
const CREDIT_NOTE_TYPES = ["REFUNDED", "CHARGEBACK"];

/**
 * The document a transaction gets, which billing asks for and invoicing issues: an approved charge that billed a
 * period, an invoice, whatever the card paid (a charge the credit or a 100 % coupon took to 0 included, total 0: the
 * period was supplied, the invoice shows what paid it); an approved refund or chargeback, a credit note; else none.
 */
export function documentKindOf(
	tx: Pick<ChargedTransaction, "status" | "type" | "amount" | "creditApplied" | "discount">,
): DocumentKind | null {
	if (tx.status !== "APPROVED") return null;
	const paidFor = tx.amount > 0 || tx.creditApplied > 0 || (tx.discount?.amount ?? 0) > 0;
	if (INVOICE_TYPES.includes(tx.type)) return paidFor ? "invoice" : null;
	return CREDIT_NOTE_TYPES.includes(tx.type) ? "credit_note" : null;
}

/** The buyer or seller a document names. */
export interface Party {
	name: string;
	email: string | null;
	address: string | null;
	taxId: string | null;
}

/** One document to issue. */
export interface IssueRequest {
	transaction: ChargedTransaction;
	/** A refund's or chargeback's charge, whose invoice the credit note reverses (issued first if it is not yet). */
	original: ChargedTransaction | null;
	buyer: Party;
	/** The customer as the INVOICE_ISSUED or CREDIT_NOTE_ISSUED event shows it. */
	customer: CustomerView | null;
}

/** A file an action answers for the gateway to send as it is (its endpoint's `file`): a PDF in base64, or an HTML page. */
export interface FileAnswer {
	contentType: string;
	/** What the browser saves it as; absent: shown inline. */
	filename?: string;
	base64?: string;
	text?: string;
}

export interface InvoicingActions {
	/**
	 * Issues the account's documents, once each, and hands their events to notifications before answering: billing drops
	 * its requests when this answers. Routed by `accountId` (Moleculer's shard strategy): one node numbers an account.
	 */
	"invoicing.issue": { params: { accountId: number; requests: IssueRequest[] }; result: { issued: number } };
	/** An invoice's PDF (base64), rendered now: GET /api/invoice/{id}/pdf and the receipt's attachment; throws ApiError 404 for an unknown or another account's. */
	"invoicing.invoicePdf": { params: { accountId: number; id: number }; result: FileAnswer };
	/** A customer's invoices and credit notes, newest first (GET /api/invoices, /api/credit-notes); `url`: the buyer's link. */
	"invoicing.invoices": { params: DocumentQuery; result: { data: DocumentSummary[]; nextCursor: string | null } };
	"invoicing.creditNotes": { params: DocumentQuery; result: { data: DocumentSummary[]; nextCursor: string | null } };
}

export interface DocumentQuery {
	accountId: number;
	customerId: number;
	limit: number;
}

/** What the customer portal shows of an invoice or a credit note. */
export interface DocumentSummary {
	id: number;
	number: string;
	customerId: number;
	issuedAt: string;
	total: number;
	currency: string;
	url: string;
}
