// What an invoice or credit note says, in its account's language (en, de, es),
// with amounts and dates formatted by Intl for that language: the one source
// of the HTML page and the PDF (document-html.ts, document-pdf.ts).

import { config } from "../../shared/config";
import type { InvoiceLanguage } from "../../shared/contracts/accounts";
import type { Party } from "../../shared/contracts/invoicing";
import { findCurrency } from "../../shared/money";
import type { CreditNoteDoc, InvoiceDoc } from "./records";

const LABELS = {
	en: {
		invoice: "Invoice",
		credit_note: "Credit note",
		number: "Number",
		date: "Date",
		seller: "Seller",
		buyer: "Billed to",
		taxId: "Tax ID",
		refersTo: "Refers to invoice",
		description: "Description",
		quantity: "Qty",
		unitPrice: "Unit price",
		taxRate: "Tax",
		net: "Net",
		tax: "Tax",
		amount: "Amount",
		subtotal: "Total net",
		taxTotal: "Total tax",
		gross: "Total",
		discount: "Discount",
		credit: "Paid from credit",
		paid: "Amount paid",
		refunded: "Amount credited",
		payment: "Payment",
		descriptor: "Statement descriptor",
		transaction: "Transaction",
		pricesInclude: "Prices include tax.",
		pricesExclude: "Tax is added to the prices.",
	},
	de: {
		invoice: "Rechnung",
		credit_note: "Gutschrift",
		number: "Nummer",
		date: "Datum",
		seller: "Verkäufer",
		buyer: "Rechnungsempfänger",
		taxId: "USt-IdNr.",
		refersTo: "Bezieht sich auf Rechnung",
		description: "Beschreibung",
		quantity: "Menge",
		unitPrice: "Einzelpreis",
		taxRate: "USt.",
		net: "Netto",
		tax: "USt.",
		amount: "Betrag",
		subtotal: "Summe netto",
		taxTotal: "Summe USt.",
		gross: "Gesamt",
		discount: "Rabatt",
		credit: "Aus Guthaben bezahlt",
		paid: "Bezahlter Betrag",
		refunded: "Gutgeschriebener Betrag",
		payment: "Zahlung",
		descriptor: "Verwendungszweck",
		transaction: "Transaktion",
		pricesInclude: "Preise inklusive USt.",
		pricesExclude: "Preise zuzüglich USt.",
	},
	es: {
		invoice: "Factura",
		credit_note: "Factura rectificativa",
		number: "Número",
		date: "Fecha",
		seller: "Vendedor",
		buyer: "Facturado a",
		taxId: "NIF",
		refersTo: "Rectifica la factura",
		description: "Descripción",
		quantity: "Cant.",
		unitPrice: "Precio unitario",
		taxRate: "IVA",
		net: "Base",
		tax: "IVA",
		amount: "Importe",
		subtotal: "Base imponible",
		taxTotal: "Total IVA",
		gross: "Total",
		discount: "Descuento",
		credit: "Pagado con saldo",
		paid: "Importe pagado",
		refunded: "Importe abonado",
		payment: "Pago",
		descriptor: "Concepto en el extracto",
		transaction: "Transacción",
		pricesInclude: "Los precios incluyen IVA.",
		pricesExclude: "El IVA se añade a los precios.",
	},
} satisfies Record<InvoiceLanguage, Record<string, string>>;

export type Labels = (typeof LABELS)["en"];

const LOCALES: Record<InvoiceLanguage, string> = { en: "en-GB", de: "de-DE", es: "es-ES" };

export type AnyDocument = { kind: "invoice"; doc: InvoiceDoc } | { kind: "credit_note"; doc: CreditNoteDoc };

/** A row of the lines' table, every cell formatted. */
export interface TextLine {
	description: string;
	period: string | null;
	quantity: string;
	unitPrice: string;
	taxRate: string;
	net: string;
	tax: string;
	gross: string;
}

export interface DocumentText {
	language: InvoiceLanguage;
	labels: Labels;
	title: string;
	number: string;
	date: string;
	seller: Party;
	buyer: Party;
	refersTo: string | null;
	lines: TextLine[];
	/** Label and amount, in order: net, tax, total, then what paid or was credited. */
	totals: [string, string][];
	note: string;
	payment: [string, string][];
}

/** Intl's narrow no-break space is not in the PDF's standard fonts: a no-break space reads the same. */
const plain = (text: string) => text.replace(/\u202f/g, "\u00a0");

export function documentText({ kind, doc }: AnyDocument): DocumentText {
	const labels = LABELS[doc.language] ?? LABELS.en;
	const locale = LOCALES[doc.language] ?? LOCALES.en;
	const digits = findCurrency(doc.currency)?.digits ?? 2;
	const money = new Intl.NumberFormat(locale, { style: "currency", currency: doc.currency });
	const amount = (minor: number) => plain(money.format(minor / 10 ** digits));
	const day = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: config().timeZone });
	const date = (at: Date | string) => plain(day.format(new Date(at)));
	const percent = new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 2 });
	const lines = doc.lines.map(line => ({
		description: line.description,
		period: line.from && line.to ? `${date(line.from)} – ${date(line.to)}` : line.from ? date(line.from) : null,
		quantity: String(line.quantity),
		unitPrice: amount(line.unitAmount),
		taxRate: plain(percent.format(line.taxRateBps / 10_000)),
		net: amount(line.net),
		tax: amount(line.tax),
		gross: amount(line.gross),
	}));
	const totals: [string, string][] = [
		[labels.subtotal, amount(doc.net)],
		[labels.taxTotal, amount(doc.tax)],
		[labels.gross, amount(doc.gross)],
	];
	if (kind === "invoice" && doc.creditApplied > 0) totals.push([labels.credit, amount(-doc.creditApplied)]);
	totals.push([kind === "invoice" ? labels.paid : labels.refunded, amount(doc.total)]);
	return {
		language: doc.language,
		labels,
		title: labels[kind],
		number: doc.number,
		date: date(doc.issuedAt),
		seller: doc.seller,
		buyer: doc.buyer,
		refersTo: kind === "credit_note" ? doc.invoiceNumber : null,
		lines,
		totals,
		note: doc.taxInclusive ? labels.pricesInclude : labels.pricesExclude,
		payment: [
			[labels.descriptor, doc.descriptor],
			[labels.transaction, String(doc._id)],
		],
	};
}
