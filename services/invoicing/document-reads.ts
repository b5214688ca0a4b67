// Reading one invoice or credit note: the merchant's, by its API token's
// account (JSON or PDF), and the buyer's, by the document's signed link (HTML
// page or PDF). A document another account owns, or a link whose signature
// does not match, is not found: nothing tells them apart.
import type { FileAnswer } from "../../shared/contracts/invoicing";
import type { InvoicingDeps } from "./deps";
import { documentHtml } from "./document-html";
import { documentModel, documentOf } from "./document-lists";
import { documentPdf } from "./document-pdf";
import { type AnyDocument, documentText } from "./document-text";
import { toCreditNoteView, toInvoiceView } from "./document-views";
import type { DocumentKind } from "./numbering";
import type { CreditNoteDoc, InvoiceDoc } from "./records";

export enum DocumentError {
	InvoiceNotFound = "INVOICE_NOT_FOUND",
	CreditNoteNotFound = "CREDIT_NOTE_NOT_FOUND",
}

const notFound = (kind: DocumentKind) => (kind === "invoice" ? DocumentError.InvoiceNotFound : DocumentError.CreditNoteNotFound);

const asDocument = (kind: DocumentKind, doc: InvoiceDoc | CreditNoteDoc) => ({ kind, doc }) as AnyDocument;

/** GET /api/invoice/{id}, /api/credit-note/{id}: the JSON. */
export async function getDocument(deps: InvoicingDeps, input: { kind: DocumentKind; accountId: number; id: number }) {
	const doc = await documentOf(deps, input.kind, input.accountId, input.id);
	if (!doc) return notFound(input.kind);
	const { linkOf } = deps.documentLinks;
	return input.kind === "invoice" ? toInvoiceView(doc as InvoiceDoc, linkOf) : toCreditNoteView(doc as CreditNoteDoc, linkOf);
}

async function pdfOf(kind: DocumentKind, doc: InvoiceDoc | CreditNoteDoc, inline: boolean): Promise<FileAnswer> {
	const pdf = await documentPdf(documentText(asDocument(kind, doc)));
	return { contentType: "application/pdf", base64: pdf.toString("base64"), ...(inline ? {} : { filename: `${doc.number}.pdf` }) };
}

/** GET /api/invoice/{id}/pdf, /api/credit-note/{id}/pdf: the PDF, rendered now. */
export async function documentPdfOf(deps: InvoicingDeps, input: { kind: DocumentKind; accountId: number; id: number }) {
	const doc = await documentOf(deps, input.kind, input.accountId, input.id);
	return doc ? pdfOf(input.kind, doc, false) : notFound(input.kind);
}

/** GET /api/buyer/{invoices|credit-notes}/{id}/{signature}[/pdf]: the buyer's page or PDF, without a token. */
export async function buyerDocument(
	deps: InvoicingDeps,
	input: { kind: DocumentKind; id: number; signature: string; format: "html" | "pdf" },
): Promise<FileAnswer | DocumentError> {
	if (!deps.documentLinks.verify(input.kind, input.id, input.signature)) return notFound(input.kind);
	const doc = await documentModel(deps.db, input.kind).findById(input.id).lean();
	if (!doc) return notFound(input.kind);
	if (input.format === "pdf") return pdfOf(input.kind, doc, true);
	const page = documentHtml(documentText(asDocument(input.kind, doc)), `${deps.documentLinks.linkOf(input.kind, doc._id)}/pdf`);
	return { contentType: "text/html; charset=utf-8", text: page };
}
