// The invoices' and credit notes' actions of the billing service
// (billing.service.ts spreads them): each validates, calls one read and maps
// its result; a file (PDF, HTML page) goes to the gateway as a FileAnswer.
import { idempotent } from "../../../shared/action";
import { pageOrBadRequest } from "../../../shared/list-page";
import type { BillingDeps } from "../deps";
import { billingErrors } from "../errors";
import { schemas } from "../schemas";
import { type DocumentListQuery, listCreditNotesPage, listInvoicesPage } from "./document-lists";
import { buyerDocument, documentPdfOf, getDocument } from "./document-reads";
import type { DocumentKind } from "./numbering";

type ById = { accountId: number; id: number };
type BuyerInput = { id: number; signature: string };

const readsOf = (deps: BillingDeps) => ({ db: deps.db, linkOf: deps.documentLinks.linkOf });

type ListRead = (deps: ReturnType<typeof readsOf>, query: DocumentListQuery) => Promise<unknown>;
type ByIdRead = (deps: BillingDeps, input: ById & { kind: DocumentKind }) => Promise<unknown>;

const list = (page: ListRead) =>
	idempotent(
		billingErrors.action(schemas.documents, async (deps: BillingDeps, query: DocumentListQuery) =>
			pageOrBadRequest((await page(readsOf(deps), query)) as Parameters<typeof pageOrBadRequest>[0]),
		),
	);

const byId = (kind: DocumentKind, read: ByIdRead) =>
	idempotent(billingErrors.action(schemas.getById, (deps: BillingDeps, input: ById) => read(deps, { ...input, kind })));

const forBuyer = (kind: DocumentKind, format: "html" | "pdf") =>
	idempotent(
		billingErrors.action(schemas.buyerDocument, (deps: BillingDeps, input: BuyerInput) => buyerDocument(deps, { ...input, kind, format })),
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
