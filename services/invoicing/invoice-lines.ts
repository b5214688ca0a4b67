// An invoice's and a credit note's lines and totals, from what the charge
// billed (its transaction's `billed`, as billing hands it over): pure, so the property
// tests check that every document adds up to the cent (docs/invoices.md#lines).
import type { UsageDetail } from "../../shared/contracts/invoicing";
import { findCurrency } from "../../shared/money";
import { divideRounded, priceLines } from "../../shared/tax";
import type { Charge } from "./charges";
import type { InvoiceDoc, InvoiceLine } from "./records";

export interface Totals {
	lines: InvoiceLine[];
	taxInclusive: boolean;
	net: number;
	tax: number;
	gross: number;
}

const sum = (lines: InvoiceLine[], pick: (line: InvoiceLine) => number) => lines.reduce((total, line) => total + pick(line), 0);

const totalsOf = (lines: InvoiceLine[], taxInclusive: boolean): Totals => ({
	lines,
	taxInclusive,
	net: sum(lines, l => l.net),
	tax: sum(lines, l => l.tax),
	gross: sum(lines, l => l.gross),
});

/**
 * An invoice's lines: each billed line at its full price and tax, then the discount as its own line (its tax is
 * what the discount took off the lines' tax). The customer's credit is not a line: it paid, as a card does.
 * Σ gross − credit = the transaction's amount: every charge path prices its amount from the lines it bills, with
 * shared/tax.ts's priceLines, as these are priced here (billing's pricing/billed.ts, changes/rules/change-amounts.ts).
 */
export function invoiceTotals(tx: Charge, names: Map<number, string>): Totals {
	// Billing hands every charge over with what it billed; only refunds and chargebacks have none, and get credit notes.
	if (!tx.billed) throw new Error(`Transaction ${tx.id} was handed over without what it billed: it cannot be invoiced`);
	const { billed } = tx;
	const discount = tx.discount?.amount ?? 0;
	const priced = (d: number) =>
		priceLines(
			billed.lines.map(line => ({ amount: line.amount, rule: line.tax ?? billed.tax })),
			d,
		);
	const full = priced(0);
	const after = priced(discount);
	const lines: InvoiceLine[] = billed.lines.map((line, i) => ({
		kind: line.kind,
		productId: line.productId,
		description: line.usage ? usageDescription(line.usage, tx.currency) : (names.get(line.productId) ?? `#${line.productId}`),
		quantity: line.quantity,
		unitAmount: line.unitAmount,
		from: line.from,
		to: line.to,
		taxRateBps: full.lines[i].rateBps,
		net: full.lines[i].net,
		tax: full.lines[i].tax,
		gross: full.lines[i].gross,
		...(line.usage ? { usage: line.usage } : {}),
	}));
	if (after.discount > 0) {
		const net = after.net - full.net;
		const tax = after.tax - full.tax;
		const code = tx.discount?.code;
		lines.push({
			kind: "discount",
			productId: null,
			description: code ? `Discount (${code})` : "Discount",
			quantity: 1,
			unitAmount: -after.discount,
			from: null,
			to: null,
			taxRateBps: full.lines[0]?.rateBps ?? 0,
			net,
			tax,
			gross: net + tax,
		});
	}
	return totalsOf(lines, billed.tax.inclusive);
}

const units = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 6 });

/** A decimal string of minor units (a unit price) in the currency's units: "0.5" cents is "0.005". */
function inCurrency(minor: string, digits: number): string {
	const [whole, fraction = ""] = minor.split(".");
	const padded = whole.padStart(digits + 1, "0");
	const major = `${padded.slice(0, padded.length - digits)}.${padded.slice(padded.length - digits)}${fraction}`;
	return major.includes(".") ? major.replace(/0+$/, "").replace(/\.$/, "") : major;
}

/**
 * A usage line's text (docs/usage.md#invoices): the meter, its units, and the tiers it reached or its packages; an
 * adjustment says which period's late events it bills.
 */
export function usageDescription(usage: UsageDetail, currency: string): string {
	const digits = findCurrency(currency)?.digits ?? 2;
	const money = (minor: string | number) => `${inCurrency(String(minor), digits)} ${currency}`;
	const tiers = usage.tiers?.map(tier => {
		const range = tier.upTo === null ? `${units(tier.from + 1)}+` : `${units(tier.from + 1)}–${units(tier.upTo)}`;
		const flat = tier.flatAmount ? ` + ${money(tier.flatAmount)}` : "";
		return `${range}: ${units(tier.quantity)} × ${money(tier.unitAmount)}${flat}`;
	});
	const how = tiers?.length ? ` (${tiers.join("; ")})` : usage.packages !== undefined ? ` (${units(usage.packages)} packages)` : "";
	const minimum = usage.minimumAmount && usage.minimumAmount > usage.usageAmount ? `, minimum ${money(usage.minimumAmount)}` : "";
	if (usage.adjusts)
		return `${usage.name}: late usage of the period before, ${units(usage.adjusts.billedQuantity)} → ${units(usage.quantity)} units${how}${minimum}`;
	return `${usage.name}: ${units(usage.quantity)} units${how}${minimum}`;
}

/**
 * A credit note's lines: the invoice's own, reversed in full, when it gives back all the invoice's gross; else one
 * line of what it gives back, its tax the invoice's share of it (tax / gross × amount, half away from zero).
 */
export function creditNoteTotals(invoice: Pick<InvoiceDoc, "lines" | "tax" | "gross" | "number" | "taxInclusive">, amount: number): Totals {
	if (amount === invoice.gross) return totalsOf(invoice.lines, invoice.taxInclusive);
	const tax = invoice.gross > 0 ? divideRounded(amount * invoice.tax, invoice.gross) : 0;
	const line: InvoiceLine = {
		kind: "refund",
		productId: null,
		description: `Refund of ${invoice.number}`,
		quantity: 1,
		unitAmount: amount,
		from: null,
		to: null,
		taxRateBps: invoice.lines[0]?.taxRateBps ?? 0,
		net: amount - tax,
		tax,
		gross: amount,
	};
	return totalsOf([line], true);
}
