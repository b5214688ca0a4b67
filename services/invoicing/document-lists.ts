// The merchant's lists and reads of invoices and credit notes (docs/api.md#invoices),
// by key, by number, newest first, from numbered timelines (shared/numbered-timeline.ts):
//   in:<account>    every invoice, at its number        icn:<customer> (bag) a customer's invoices, by number
//   nn:<account>    every credit note, at its number    ncn:<customer> (bag) a customer's credit notes, by number
// A document is placed at its number before it is inserted (issue.ts): one slot per number, written once,
// so a list is in number order under concurrent issuing and shows each document once, however often a crashed
// issue was retried.
import type { Model } from "mongoose";
import type { ListError, Page } from "../../shared/list-page";
import { bagReader } from "../../shared/list-page";
import { type ListQuery, type ListSource, newestFirst } from "../../shared/newest-first";
import { inBag, inTimeline, numberedAtOrBefore, numberedBag, numberedBelow, placeAll } from "../../shared/numbered-timeline";
import { ownedBy } from "../../shared/persistence";
import type { Timelines } from "../../shared/timeline";
import { type CreditNoteView, type InvoiceView, type LinkOf, toCreditNoteView, toInvoiceView } from "./document-views";
import type { InvoicingDb } from "./models";
import { type DocumentKind, lastNumber } from "./numbering";
import type { CreditNoteDoc, DocumentBase, InvoiceDoc } from "./records";

const keys: Record<DocumentKind, { all: (accountId: number) => string; customer: (customerId: number) => string }> = {
	invoice: { all: accountId => `in:${accountId}`, customer: customerId => `icn:${customerId}` },
	credit_note: { all: accountId => `nn:${accountId}`, customer: customerId => `ncn:${customerId}` },
};

/** Lists documents about to be inserted at their numbers: each in its account's list and its customer's, once, in one command. */
export async function placeDocuments(
	deps: { db: { timelines: Timelines } },
	documents: { kind: DocumentKind; doc: Pick<DocumentBase, "_id" | "accountId" | "customerId" | "issuedAt" | "sequence"> }[],
): Promise<void> {
	if (documents.length === 0) return;
	await placeAll(
		deps.db.timelines,
		documents.flatMap(({ kind, doc }) => {
			const ref: [number, number] = [doc._id, doc.issuedAt.getTime()];
			return [inTimeline(keys[kind].all(doc.accountId), doc.sequence, ref), inBag(keys[kind].customer(doc.customerId), doc.sequence, ref)];
		}),
	);
}

export interface DocumentListQuery extends ListQuery {
	customerId?: number;
}

interface ReadDeps {
	db: InvoicingDb;
	linkOf: LinkOf;
}

/** The account's list, read from its last number down; or the customer's bag. */
async function sourceOf(deps: ReadDeps, kind: DocumentKind, query: DocumentListQuery): Promise<ListSource> {
	const { timelines } = deps.db;
	if (query.customerId !== undefined) return { read: bagReader(numberedBag(timelines, keys[kind].customer(query.customerId))) };
	const key = keys[kind].all(query.accountId);
	const top = await lastNumber(deps, query.accountId, kind);
	return {
		read: (below, count) => numberedBelow(timelines, key, top, below, count),
		lastAtOrBefore: at => numberedAtOrBefore(timelines, key, top, at),
	};
}

async function listOf<Doc extends DocumentBase, View>(
	deps: ReadDeps,
	kind: DocumentKind,
	query: DocumentListQuery,
	view: (doc: Doc, linkOf: LinkOf) => View,
): Promise<Page<View> | ListError> {
	const { customerId, from, to } = query;
	const model = documentModel(deps.db, kind) as unknown as Parameters<typeof newestFirst>[3];
	return newestFirst<Doc, View>(
		query,
		{ list: kind, customerId, from, to },
		await sourceOf(deps, kind, query),
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
export const documentModel = (db: InvoicingDb, kind: DocumentKind) =>
	(kind === "invoice" ? db.invoices : db.creditNotes) as unknown as Model<InvoiceDoc | CreditNoteDoc>;

/** One of the account's documents, by key; null when it has none of that id. */
export async function documentOf(deps: Pick<ReadDeps, "db">, kind: DocumentKind, accountId: number, id: number) {
	return ownedBy<InvoiceDoc | CreditNoteDoc>(await documentModel(deps.db, kind).findById(id).lean(), accountId);
}
