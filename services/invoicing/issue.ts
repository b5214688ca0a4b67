// Issues the invoice of an approved charge and the credit note of a refund or
// a lost dispute, once each (docs/invoices.md), from what billing hands over
// (shared/contracts/invoicing.ts). Billing keeps its request until the
// invoicing.issue call answers, so a crash anywhere here is followed by the
// same request again, which finds the number already taken (numbering.ts) or
// the document already written (its `_id` is the transaction's).
//
// Crash points: number taken, nothing written (the retry writes it with that
// number); listed at its number, not inserted (the retry's listing finds the
// slot taken, and it inserts the document); inserted, its number still
// pending (the retry pulls it).
import { DateTime } from "luxon";
import { config } from "../../shared/config";
import type { AccountView } from "../../shared/contracts/accounts";
import { documentKindOf, type IssueRequest, type Party } from "../../shared/contracts/invoicing";
import { insertOnce } from "../../shared/persistence";
import { zoneOf } from "../../shared/time";
import { type Charge, chargeOf } from "./charges";
import { documentModel, placeDocuments } from "./document-lists";
import { creditNoteTotals, invoiceTotals, type Totals } from "./invoice-lines";
import type { InvoicingDb } from "./models";
import { type DocumentKind, formatNumber, numberingMoment, releaseNumber, takeNumber } from "./numbering";
import type { CreditNoteDoc, DocumentBase, InvoiceDoc } from "./records";

/** What issuing needs besides the database: the seller's settings and the products' names, cached per node. */
export interface IssueDeps {
	db: InvoicingDb;
	now: () => Date;
	/** The account's name and invoice settings (accounts.get). */
	sellerOf(accountId: number): Promise<Pick<AccountView, "name" | "invoicing">>;
	/** The product's name, or null when it is gone. */
	productNameOf(accountId: number, productId: number): Promise<string | null>;
}

/**
 * A document; `fresh` when this call wrote it (its event was never handed over before). `released`: its number's
 * pending entry is pulled (numbering.ts), for the answer to wait on.
 */
export type Issued = ({ kind: "invoice"; doc: InvoiceDoc } | { kind: "credit_note"; doc: CreditNoteDoc }) & {
	fresh: boolean;
	released: Promise<void>;
};

const modelOf = (deps: IssueDeps, kind: DocumentKind) => documentModel(deps.db, kind);

async function written(deps: IssueDeps, kind: DocumentKind, id: number): Promise<Issued | null> {
	const doc = await modelOf(deps, kind).findById(id).lean();
	return doc ? ({ kind, doc, fresh: false, released: Promise.resolve() } as Issued) : null;
}

/** A transaction to issue from, and the buyer its document names. */
interface ToIssue {
	tx: Charge;
	buyer: Party;
}

/** What every document of the transaction shows, numbered `sequence`. */
async function heading(
	deps: IssueDeps,
	{ tx, buyer }: ToIssue,
	kind: DocumentKind,
	sequence: number,
	totals: Totals,
): Promise<Omit<DocumentBase, "total">> {
	const seller = await deps.sellerOf(tx.accountId);
	// Dated by its transaction, in the account's time (a renewal a test clock made is issued on the day it fell due).
	const issuedAt = tx.timestamp;
	const { invoicing } = seller;
	const prefix = kind === "invoice" ? invoicing.invoicePrefix : invoicing.creditNotePrefix;
	const year = DateTime.fromJSDate(issuedAt, { zone: zoneOf(config().timeZone) }).year;
	return {
		_id: tx.id,
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
		buyer,
		...totals,
		descriptor: tx.midName,
		transactionType: tx.type,
		processorReference: tx.processorReference,
	};
}

async function productNames(deps: IssueDeps, tx: Charge): Promise<Map<number, string>> {
	const ids = [...new Set([tx.productId, ...(tx.billed?.lines.map(line => line.productId) ?? [])])];
	const names = await Promise.all(ids.map(async id => [id, await deps.productNameOf(tx.accountId, id)] as const));
	return new Map(names.flatMap(([id, name]) => (name === null ? [] : [[id, name] as [number, string]])));
}

/** What a call's look-up found of its documents: those written, and the moment before it (numbering.ts). */
interface LookedUp {
	since: number;
	found: Set<string>;
}

const lookUpKey = (kind: DocumentKind, id: number) => `${kind}:${id}`;

/** Which of the requests' documents are written, one read per kind. */
async function lookUp(deps: IssueDeps, requests: Request[]): Promise<LookedUp> {
	const since = numberingMoment();
	const found = new Set<string>();
	for (const kind of ["invoice", "credit_note"] as const) {
		const ids = requests.filter(r => documentKindOf(r.transaction) === kind).map(r => r.transaction.id);
		if (ids.length === 0) continue;
		const docs = await modelOf(deps, kind)
			.find({ _id: { $in: ids } }, { _id: 1 })
			.lean<{ _id: number }[]>();
		for (const doc of docs) found.add(lookUpKey(kind, doc._id));
	}
	return { since, found };
}

/** A document to issue: its kind, the transaction it is issued from, and how it is built once numbered. */
interface Draft {
	kind: DocumentKind;
	tx: Charge;
	build: (sequence: number) => Promise<InvoiceDoc | CreditNoteDoc>;
}

/** The draft's number (numbering.ts); null when its document is written already. */
function numberOf(deps: IssueDeps, { kind, tx }: Draft, lookedUp: LookedUp | undefined) {
	const found = lookedUp?.found.has(lookUpKey(kind, tx.id));
	// Written already (documents stay): no need to ask again. Not found: numbering.ts decides whether that still holds.
	const exists = async () => found === true || (await modelOf(deps, kind).exists({ _id: tx.id })) !== null;
	return takeNumber(deps, tx.accountId, kind, tx.id, exists, found === false ? lookedUp?.since : undefined);
}

/**
 * Numbers, lists and writes each draft's document; the one already written when its key had it. The numbers are
 * taken in the drafts' order, then the documents are listed in one command and inserted together: a call's
 * documents cost one listing and about one insert, whatever their count.
 */
async function issueAll(deps: IssueDeps, drafts: Draft[], lookedUp?: LookedUp): Promise<(Issued | null)[]> {
	// Each takes its number before the first wait: numbering.ts takes them one at a time, in the order asked.
	const numbers = drafts.map(draft => numberOf(deps, draft, lookedUp));
	const docs = await Promise.all(
		drafts.map(async (draft, i) => {
			const numbered = await numbers[i];
			return numbered ? draft.build(numbered.sequence) : null;
		}),
	);
	await placeDocuments(
		deps,
		drafts.flatMap((draft, i) => (docs[i] ? [{ kind: draft.kind, doc: docs[i] }] : [])),
	);
	return Promise.all(
		drafts.map(async ({ kind, tx }, i) => {
			const doc = docs[i];
			if (!doc) return written(deps, kind, tx.id);
			const inserted = await insertOnce(modelOf(deps, kind), doc);
			const released = releaseNumber(deps, tx.accountId, kind, tx.id);
			if (inserted) return { kind, doc, fresh: true, released } as Issued;
			await released;
			return written(deps, kind, tx.id);
		}),
	);
}

function invoiceDraft(deps: IssueDeps, issue: ToIssue): Draft {
	const { tx } = issue;
	return {
		kind: "invoice",
		tx,
		build: async sequence => {
			const totals = invoiceTotals(tx, await productNames(deps, tx));
			return {
				...(await heading(deps, issue, "invoice", sequence, totals)),
				total: tx.amount,
				creditApplied: tx.creditApplied,
				discount: tx.discount,
			};
		},
	};
}

/** The invoice a credit note refers to: issued first if the charge's own request has not come yet. */
async function invoiceOf(deps: IssueDeps, original: Charge | null, buyer: Party): Promise<InvoiceDoc | null> {
	if (original === null) return null;
	const found = await deps.db.invoices.findById(original.id).lean();
	if (found) return found;
	if (documentKindOf(original) !== "invoice") return null;
	const [issued] = await issueAll(deps, [invoiceDraft(deps, { tx: original, buyer })]);
	return issued?.kind === "invoice" ? issued.doc : null;
}

/** The credit note's draft; null when there is no invoice to refer to (no charge named, or one that billed nothing). */
function creditNoteDraft(deps: IssueDeps, issue: ToIssue, invoice: InvoiceDoc | null): Draft | null {
	const { tx } = issue;
	if (!invoice) return null;
	const amount = -tx.amount;
	return {
		kind: "credit_note",
		tx,
		build: async sequence => ({
			...(await heading(deps, issue, "credit_note", sequence, creditNoteTotals(invoice, amount))),
			total: amount,
			reason: tx.type === "CHARGEBACK" ? "CHARGEBACK" : "REFUND",
			invoiceId: invoice._id,
			invoiceNumber: invoice.number,
		}),
	};
}

type Request = Pick<IssueRequest, "transaction" | "original" | "buyer">;

/**
 * The requests' documents, each issued once (null: its transaction gets none); one already written is read back.
 * The invoices credit notes refer to are found (or issued) first: then each kind's numbers are taken in the
 * requests' order, which is the order of their transactions.
 */
export async function issueDocuments(deps: IssueDeps, requests: Request[]): Promise<(Issued | null)[]> {
	const lookedUp = await lookUp(deps, requests);
	const invoices = await Promise.all(
		requests.map(request =>
			documentKindOf(request.transaction) === "credit_note"
				? invoiceOf(deps, request.original && chargeOf(request.original), request.buyer)
				: null,
		),
	);
	const drafts = requests.map((request, i) => {
		const kind = documentKindOf(request.transaction);
		const issue = { tx: chargeOf(request.transaction), buyer: request.buyer };
		if (kind === "invoice") return invoiceDraft(deps, issue);
		return kind === "credit_note" ? creditNoteDraft(deps, issue, invoices[i]) : null;
	});
	const issued = await issueAll(
		deps,
		drafts.filter(draft => draft !== null),
		lookedUp,
	);
	let next = 0;
	return drafts.map(draft => (draft === null ? null : issued[next++]));
}
