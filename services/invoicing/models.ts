// The invoicing service's collections: invoices and credit notes, each keyed
// by its transaction's id (records.ts); their gapless sequences by
// `<account>:<kind>` (numbering.ts); and the timelines the merchant's lists of
// them page through (document-lists.ts). Billing owns the transactions they
// are issued from, and hands them over (billing's outbox/issue-requests.ts).
import type { Connection, Model } from "mongoose";
import { createTimelines, type Timelines } from "../../shared/timeline";
import {
	type CreditNoteDoc,
	creditNoteSchema,
	type DocumentSequenceDoc,
	documentSequenceSchema,
	type InvoiceDoc,
	invoiceSchema,
} from "./records";

export interface InvoicingDb {
	invoices: Model<InvoiceDoc>;
	creditNotes: Model<CreditNoteDoc>;
	documentSequences: Model<DocumentSequenceDoc>;
	timelines: Timelines;
}

export function createInvoicingModels(connection: Connection): InvoicingDb {
	return {
		invoices: connection.model("Invoice", invoiceSchema, "invoices"),
		creditNotes: connection.model("CreditNote", creditNoteSchema, "credit_notes"),
		documentSequences: connection.model("DocumentSequence", documentSequenceSchema, "document_sequences"),
		timelines: createTimelines(connection),
	};
}
