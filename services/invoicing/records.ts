// The invoicing service's records (docs/invoices.md): one invoice
// per approved charge that moved money, one credit note per refund or lost
// dispute, each keyed by its transaction's id (so issuing twice is one
// document) and unique by (account, number) within its own gapless sequence.
// They are written once and never changed: what a buyer was handed stays.
import { Schema } from "mongoose";
import type { InvoiceLanguage } from "../../shared/contracts/accounts";
import type { ChargedLineKind, DiscountLine, Party, UsageDetail } from "../../shared/contracts/invoicing";

/** One line as printed (minor units; a credit or discount negative). */
export interface InvoiceLine {
	kind: ChargedLineKind | "discount" | "refund";
	productId: number | null;
	/** The product's name when the document was issued. */
	description: string;
	quantity: number;
	/** The price of one, as stated (tax included when `taxInclusive`). */
	unitAmount: number;
	/** The period it pays for; null: none (a discount, a refund). */
	from: Date | null;
	to: Date | null;
	taxRateBps: number;
	net: number;
	tax: number;
	gross: number;
	/** A usage line's meter, quantity and tiers (docs/usage.md#invoices). */
	usage?: UsageDetail;
}

/** What invoices and credit notes share. */
export interface DocumentBase {
	/** The id of the transaction it is issued for: a charge's (invoice) or a refund's or chargeback's (credit note). */
	_id: number;
	accountId: number;
	customerId: number;
	/** Its place in the account's sequence: 1, 2, 3… without gaps. */
	sequence: number;
	/** As printed: `<prefix>-<year>-<sequence, 6 digits>`. */
	number: string;
	issuedAt: Date;
	currency: string;
	language: InvoiceLanguage;
	seller: Party;
	buyer: Party;
	lines: InvoiceLine[];
	/** Whether the lines' prices include their tax (the tax split out) or exclude it (added). */
	taxInclusive: boolean;
	net: number;
	tax: number;
	/** Σ lines' gross. */
	gross: number;
	/** What the transaction moved: for an invoice gross − credit used; for a credit note what was given back (positive). */
	total: number;
	/** The MID's name, as the buyer's statement shows it. */
	descriptor: string;
	transactionType: string;
	processorReference: string | null;
}

export interface InvoiceDoc extends DocumentBase {
	/** The customer's credit that paid part of it (minor units, positive). */
	creditApplied: number;
	/** A coupon's discount, taken off the lines before tax (minor units, positive). */
	discount: DiscountLine | null;
}

export interface CreditNoteDoc extends DocumentBase {
	/** REFUND (a refund, an early fraud warning's included) or CHARGEBACK (a lost dispute). */
	reason: "REFUND" | "CHARGEBACK";
	/** The invoice it reverses (by its transaction's id) and that invoice's number. */
	invoiceId: number;
	invoiceNumber: string;
}

/**
 * A sequence, keyed `<accountId>:invoice` or `<accountId>:credit_note`: `last` is the last number given, `pending`
 * the numbers given whose document is not written yet (docs/invoices.md#numbering).
 */
export interface DocumentSequenceDoc {
	_id: string;
	last: number;
	pending: { number: number; key: number; at: Date }[];
}

const options = { versionKey: false } as const;

const partySchema = new Schema<Party>({ name: String, email: String, address: String, taxId: String }, { _id: false });

const base = {
	_id: Number,
	accountId: { type: Number, required: true },
	customerId: { type: Number, required: true },
	sequence: { type: Number, required: true },
	number: { type: String, required: true },
	issuedAt: { type: Date, required: true },
	currency: { type: String, required: true },
	language: { type: String, required: true },
	seller: { type: partySchema, required: true },
	buyer: { type: partySchema, required: true },
	lines: { type: Schema.Types.Mixed, required: true },
	taxInclusive: { type: Boolean, required: true },
	net: { type: Number, required: true },
	tax: { type: Number, required: true },
	gross: { type: Number, required: true },
	total: { type: Number, required: true },
	descriptor: { type: String, required: true },
	transactionType: { type: String, required: true },
	processorReference: { type: String, default: null },
};

export const invoiceSchema = new Schema<InvoiceDoc>(
	{ ...base, creditApplied: { type: Number, required: true }, discount: { type: Schema.Types.Mixed, default: null } },
	options,
);
// A number is given once: a second document with it is refused (E11000), whatever a bug did.
invoiceSchema.index({ accountId: 1, sequence: 1 }, { unique: true });

export const creditNoteSchema = new Schema<CreditNoteDoc>(
	{
		...base,
		reason: { type: String, required: true },
		invoiceId: { type: Number, required: true },
		invoiceNumber: { type: String, required: true },
	},
	options,
);
creditNoteSchema.index({ accountId: 1, sequence: 1 }, { unique: true });

export const documentSequenceSchema = new Schema<DocumentSequenceDoc>(
	{ _id: String, last: { type: Number, required: true }, pending: { type: Schema.Types.Mixed, default: [] } },
	options,
);
