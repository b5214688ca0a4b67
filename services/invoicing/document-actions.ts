// The invoices' and credit notes' reads (invoicing.service.ts spreads them):
// each validates, calls one read and maps its result; a file (PDF, HTML page)
// goes to the gateway as a FileAnswer.
import { idempotent } from "../../shared/action";
import { pageOrBadRequest } from "../../shared/list-page";
import type { InvoicingDeps } from "./deps";
import { type DocumentListQuery, listCreditNotesPage, listInvoicesPage } from "./document-lists";
import { buyerDocument, documentPdfOf, getDocument } from "./document-reads";
import { invoicingErrors } from "./errors";
import type { DocumentKind } from "./numbering";
import { schemas } from "./schemas";

type ById = { accountId: number; id: number };
type BuyerInput = { id: number; signature: string };

type ListRead = (deps: InvoicingDeps, query: DocumentListQuery) => Promise<unknown>;
type ByIdRead = (deps: InvoicingDeps, input: ById & { kind: DocumentKind }) => Promise<unknown>;

const list = (page: ListRead) =>
	idempotent(
		invoicingErrors.action(schemas.documents, async (deps: InvoicingDeps, query: DocumentListQuery) =>
			pageOrBadRequest((await page(deps, query)) as Parameters<typeof pageOrBadRequest>[0]),
		),
	);

const byId = (kind: DocumentKind, read: ByIdRead) =>
	idempotent(invoicingErrors.action(schemas.getById, (deps: InvoicingDeps, input: ById) => read(deps, { ...input, kind })));

const forBuyer = (kind: DocumentKind, format: "html" | "pdf") =>
	idempotent(
		invoicingErrors.action(schemas.buyerDocument, (deps: InvoicingDeps, input: BuyerInput) =>
			buyerDocument(deps, { ...input, kind, format }),
		),
	);

export const documentActions = {
	invoices: list(listInvoicesPage),
	creditNotes: list(listCreditNotesPage),
	getInvoice: byId("invoice", getDocument),
	getCreditNote: byId("credit_note", getDocument),
	invoicePdf: byId("invoice", documentPdfOf),
	creditNotePdf: byId("credit_note", documentPdfOf),
	buyerInvoice: forBuyer("invoice", "html"),
	buyerInvoicePdf: forBuyer("invoice", "pdf"),
	buyerCreditNote: forBuyer("credit_note", "html"),
	buyerCreditNotePdf: forBuyer("credit_note", "pdf"),
};
