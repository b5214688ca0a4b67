// The merchant's lists and reads of invoices and credit notes (docs/api.md#invoices),
// by key, newest first, from timelines (shared/timeline.ts) as the other lists:
//   i:<account>    every invoice        ic:<customer> (bag) a customer's invoices
//   n:<account>    every credit note    nc:<customer> (bag) a customer's credit notes
// A document is appended before it is inserted (invoices/issue.ts).
import type { Model } from "mongoose";
import type { ListError, Page } from "../../../shared/list-page";
import { ownedBy } from "../../../shared/persistence";
import { addToBags, append, type Timelines } from "../../../shared/timeline";
import type { BillingDocumentBase, CreditNoteDoc, InvoiceDoc } from "../documents/invoice";
import { type ListQuery, newestFirst } from "../lists/pages";
import type { BillingDb } from "../models";
import { type CreditNoteView, type InvoiceView, type LinkOf, toCreditNoteView, toInvoiceView } from "./document-views";
import type { DocumentKind } from "./numbering";

const keys: Record<DocumentKind, { all: (accountId: number) => string; customer: (customerId: number) => string }> = {
	invoice: { all: accountId => `i:${accountId}`, customer: customerId => `ic:${customerId}` },
	credit_note: { all: accountId => `n:${accountId}`, customer: customerId => `nc:${customerId}` },
};

/** Lists a document about to be inserted: in its account's timeline and its customer's bag. */
export async function appendDocument(
	deps: { db: { timelines: Timelines } },
	kind: DocumentKind,
	doc: Pick<BillingDocumentBase, "_id" | "accountId" | "customerId" | "issuedAt">,
): Promise<void> {
	const entry: [number, number] = [doc._id, doc.issuedAt.getTime()];
	await append(deps.db.timelines, keys[kind].all(doc.accountId), [entry]);
	await addToBags(deps.db.timelines, [{ key: keys[kind].customer(doc.customerId), entry }]);
}

export interface DocumentListQuery extends ListQuery {
	customerId?: number;
}

interface ReadDeps {
	db: BillingDb;
	linkOf: LinkOf;
}

function listOf<Doc extends BillingDocumentBase, View>(
	deps: ReadDeps,
	kind: DocumentKind,
	query: DocumentListQuery,
	view: (doc: Doc, linkOf: LinkOf) => View,
): Promise<Page<View> | ListError> {
	const { accountId, customerId, from, to } = query;
	const source = customerId !== undefined ? { bag: keys[kind].customer(customerId) } : { timeline: keys[kind].all(accountId) };
	const model = documentModel(deps.db, kind) as unknown as Parameters<typeof newestFirst>[4];
	return newestFirst<Doc, View>(
		deps as never,
		query,
		{ list: kind, customerId, from, to },
		source,
		model,
		doc => customerId === undefined || doc.customerId === customerId,
		doc => view(doc, deps.linkOf),
	);
}

export const listInvoicesPage = (deps: ReadDeps, query: DocumentListQuery) =>
	listOf<InvoiceDoc, InvoiceView>(deps, "invoice", query, toInvoiceView);

export const listCreditNotesPage = (deps: ReadDeps, query: DocumentListQuery) =>
	listOf<CreditNoteDoc, CreditNoteView>(deps, "credit_note", query, toCreditNoteView);

/** The collection of a kind of document. */
export const documentModel = (db: BillingDb, kind: DocumentKind) =>
	(kind === "invoice" ? db.invoices : db.creditNotes) as unknown as Model<InvoiceDoc | CreditNoteDoc>;

/** One of the account's documents, by key; null when it has none of that id. */
export async function documentOf(deps: Pick<ReadDeps, "db">, kind: DocumentKind, accountId: number, id: number) {
	return ownedBy<InvoiceDoc | CreditNoteDoc>(await documentModel(deps.db, kind).findById(id).lean(), accountId);
}
