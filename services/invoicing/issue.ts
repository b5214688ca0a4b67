// Issues the invoice of an approved charge and the credit note of a refund or
// a lost dispute, once each (docs/invoices.md). The outbox relay calls it for
// every transaction whose event it relays, before the event leaves the outbox
// (outbox/relay-changes.ts): a crash anywhere leaves the event there, and the
// next relay issues again, finding the number already taken (numbering.ts) or
// the document already written (its `_id` is the transaction's).
//
// Crash points: number taken, nothing written (the retry writes it with that
// number); listed at its number, not inserted (the retry's listing finds the
// slot taken, and it inserts the document);
// inserted, its number still pending (the retry, or any issuer that finds the
// entry stale, pulls it).
import { DateTime } from "luxon";
import { config } from "../../../shared/config";
import type { AccountView } from "../../../shared/contracts/accounts";
import { insertOnce } from "../../../shared/persistence";
import type { CustomerDoc } from "../documents/customer";
import type { BillingDocumentBase, CreditNoteDoc, InvoiceDoc, Party } from "../documents/invoice";
import type { TransactionDoc } from "../documents/transaction";
import type { BillingDb } from "../models";
import { TransactionStatus, TransactionType } from "../states";
import { documentModel, placeDocument } from "./document-lists";
import { creditNoteTotals, invoiceTotals, type Totals } from "./invoice-lines";
import { type DocumentKind, formatNumber, releaseNumber, takeNumber } from "./numbering";

/** What issuing needs besides the database: the seller's settings and the products' names, cached per node. */
export interface IssueDeps {
	db: BillingDb;
	now: () => Date;
	/** The account's name and invoice settings (accounts.get). */
	sellerOf(accountId: number): Promise<Pick<AccountView, "name" | "invoicing">>;
	/** The product's name, or null when it is gone. */
	productNameOf(accountId: number, productId: number): Promise<string | null>;
}

export type Issued = { kind: "invoice"; doc: InvoiceDoc } | { kind: "credit_note"; doc: CreditNoteDoc };

const INVOICED: string[] = [TransactionType.SubscriptionStart, TransactionType.Renewal, TransactionType.SubscriptionChange];
const CREDITED: string[] = [TransactionType.Refunded, TransactionType.Chargeback];

/**
 * The document a transaction gets: an approved charge that billed a period, an invoice, whatever the card paid (a charge
 * the credit or a 100 % coupon took to 0 included, total 0: the period was supplied, the invoice shows what paid it);
 * an approved refund or chargeback, a credit note; anything else, none.
 */
export function documentKindOf(tx: Pick<TransactionDoc, "status" | "type" | "amount" | "creditApplied" | "discount">): DocumentKind | null {
	if (tx.status !== TransactionStatus.Approved) return null;
	const billed = tx.amount > 0 || (tx.creditApplied ?? 0) > 0 || (tx.discount?.amount ?? 0) > 0;
	if (INVOICED.includes(tx.type)) return billed ? "invoice" : null;
	return CREDITED.includes(tx.type) ? "credit_note" : null;
}

const modelOf = (deps: IssueDeps, kind: DocumentKind) => documentModel(deps.db, kind);

async function written(deps: IssueDeps, kind: DocumentKind, id: number): Promise<Issued | null> {
	const doc = await modelOf(deps, kind).findById(id).lean();
	return doc ? ({ kind, doc } as Issued) : null;
}

function buyerOf(customer: CustomerDoc | null): Party {
	const address = customer?.additionalData?.address;
	return {
		name: customer ? `${customer.name} ${customer.lastName}`.trim() : "",
		email: customer?.email ?? null,
		address: typeof address === "string" ? address : null,
		taxId: null,
	};
}

/** What every document of the transaction shows, numbered `sequence`. */
async function heading(
	deps: IssueDeps,
	tx: TransactionDoc,
	kind: DocumentKind,
	sequence: number,
	totals: Totals,
): Promise<Omit<BillingDocumentBase, "total">> {
	const seller = await deps.sellerOf(tx.accountId);
	const customer = await deps.db.customers.findById(tx.customerId).lean();
	// Dated by its transaction, in the account's time (a renewal a test clock made is issued on the day it fell due).
	const issuedAt = tx.timestamp;
	const { invoicing } = seller;
	const prefix = kind === "invoice" ? invoicing.invoicePrefix : invoicing.creditNotePrefix;
	const year = DateTime.fromJSDate(issuedAt, { zone: config().timeZone }).year;
	return {
		_id: tx._id,
		accountId: tx.accountId,
		customerId: tx.customerId,
		sequence,
		number: formatNumber(prefix, year, sequence),
		issuedAt,
		currency: tx.currency,
		language: invoicing.language,
		seller: {
			name: invoicing.legalName ?? seller.name,
			email: invoicing.email ?? null,
			address: invoicing.address,
			taxId: invoicing.taxId,
		},
		buyer: buyerOf(customer),
		...totals,
		descriptor: tx.midName,
		transactionType: tx.type,
		processorReference: tx.processorReference ?? null,
	};
}

async function productNames(deps: IssueDeps, tx: TransactionDoc): Promise<Map<number, string>> {
	const ids = [...new Set([tx.productId, ...(tx.billed?.lines.map(line => line.productId) ?? [])])];
	const names = await Promise.all(ids.map(async id => [id, await deps.productNameOf(tx.accountId, id)] as const));
	return new Map(names.flatMap(([id, name]) => (name === null ? [] : [[id, name] as [number, string]])));
}

/** Numbers, lists and writes one document; the one already written when the key had it. */
async function issueNumbered(
	deps: IssueDeps,
	tx: TransactionDoc,
	kind: DocumentKind,
	build: (sequence: number) => Promise<InvoiceDoc | CreditNoteDoc>,
): Promise<Issued | null> {
	const model = modelOf(deps, kind);
	const numbered = await takeNumber(deps, tx.accountId, kind, tx._id, async () => (await model.exists({ _id: tx._id })) !== null);
	if (!numbered) return written(deps, kind, tx._id);
	const doc = await build(numbered.sequence);
	await placeDocument(deps, kind, doc);
	const inserted = await insertOnce(model, doc);
	await releaseNumber(deps, tx.accountId, kind, tx._id);
	// Numbers whose issuer died: completed here, so no number stays unused (the transaction's relay would too).
	for (const entry of numbered.stale) void completeStale(deps, entry.key);
	return inserted ? ({ kind, doc } as Issued) : written(deps, kind, tx._id);
}

/** Best effort, in the background: what fails here is completed by the transaction's own relay, or the next issuer. */
async function completeStale(deps: IssueDeps, transactionId: number): Promise<void> {
	try {
		const tx = await deps.db.transactions.findById(transactionId).lean();
		if (tx) await issueDocument(deps, tx);
	} catch {
		// The database or accounts is unavailable: the entry stays pending, and stale, for the next issuer.
	}
}

function issueInvoice(deps: IssueDeps, tx: TransactionDoc): Promise<Issued | null> {
	return issueNumbered(deps, tx, "invoice", async sequence => {
		const totals = invoiceTotals(tx, await productNames(deps, tx));
		return {
			...(await heading(deps, tx, "invoice", sequence, totals)),
			total: tx.amount,
			creditApplied: tx.creditApplied ?? 0,
			discount: tx.discount ?? null,
		};
	});
}

/** The invoice a credit note refers to: issued first if its charge's relay has not issued it yet. */
async function invoiceOf(deps: IssueDeps, originalId: number | null): Promise<InvoiceDoc | null> {
	if (originalId === null) return null;
	const found = await deps.db.invoices.findById(originalId).lean();
	if (found) return found;
	const original = await deps.db.transactions.findById(originalId).lean();
	if (!original || documentKindOf(original) !== "invoice") return null;
	const issued = await issueInvoice(deps, original);
	return issued?.kind === "invoice" ? issued.doc : null;
}

async function issueCreditNote(deps: IssueDeps, tx: TransactionDoc): Promise<Issued | null> {
	const invoice = await invoiceOf(deps, tx.originalTransactionId);
	// A charge issued before invoices existed has none to refer to: its refund gets no credit note.
	if (!invoice) return null;
	const amount = -tx.amount;
	return issueNumbered(deps, tx, "credit_note", async sequence => ({
		...(await heading(deps, tx, "credit_note", sequence, creditNoteTotals(invoice, amount))),
		total: amount,
		reason: tx.type === TransactionType.Chargeback ? "CHARGEBACK" : "REFUND",
		invoiceId: invoice._id,
		invoiceNumber: invoice.number,
	}));
}

/** The transaction's document, issued once (null: it gets none); one already written is read back. */
export function issueDocument(deps: IssueDeps, tx: TransactionDoc): Promise<Issued | null> {
	const kind = documentKindOf(tx);
	if (kind === null) return Promise.resolve(null);
	return kind === "invoice" ? issueInvoice(deps, tx) : issueCreditNote(deps, tx);
}
