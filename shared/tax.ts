// Tax on what a charge bills, in one pure place used by every charge path of billing
// (first payments, renewals, captures, card updates) and by the invoices that
// show it (docs/invoices.md#tax). Amounts are integer minor units.
//
// Rounding: per line, half away from zero, to the currency's minor unit; so a
// line and its credit round to the same tax with opposite signs, and the
// invoice's tax is the sum of its lines' (what the buyer sees adds up).
// Inclusive prices: the tax is split out of each line (net = gross - tax).
// Exclusive prices: each line's tax is added to it. Either way every line's
// net + tax = gross exactly, and what the card pays is Σ gross - credit.
import type { ProductTax } from "./contracts/accounts";

export type TaxRule = ProductTax;

/** No tax: what a product read before tax existed, or an account that set none, carries. */
export const NO_TAX: TaxRule = { rateBps: 0, inclusive: true };

const BPS = 10_000;

/** round(numerator / denominator), half away from zero; denominator > 0. */
export function divideRounded(numerator: number, denominator: number): number {
	const sign = numerator < 0 ? -1 : 1;
	const magnitude = Math.abs(numerator);
	const quotient = Math.floor(magnitude / denominator);
	const remainder = magnitude - quotient * denominator;
	// + 0: a negative zero is zero.
	return sign * (2 * remainder >= denominator ? quotient + 1 : quotient) + 0;
}

export interface TaxedAmount {
	/** Before tax. */
	net: number;
	tax: number;
	/** What the buyer pays for it: net + tax. */
	gross: number;
}

/** One line's tax: `amount` is the price as the account states it (tax included or not). */
export function taxLine(amount: number, rule: TaxRule): TaxedAmount {
	if (rule.inclusive) {
		const net = divideRounded(amount * BPS, BPS + rule.rateBps);
		return { net, tax: amount - net, gross: amount };
	}
	const tax = divideRounded(amount * rule.rateBps, BPS);
	return { net: amount, tax, gross: amount + tax };
}

export interface PricedLine extends TaxedAmount {
	/** The line's price as stated (before the discount share). */
	amount: number;
	rateBps: number;
}

export interface Priced {
	lines: PricedLine[];
	/** The discount taken off before tax, as stated (positive), split over the lines by their amounts. */
	discount: number;
	net: number;
	tax: number;
	/** Σ lines' gross: what the buyer pays before credit. */
	gross: number;
}

/**
 * Splits a discount over positive lines in proportion to their amounts (the remainder to the largest), so each
 * line is taxed at its own rate after its share; never more than a line's amount.
 */
function discountShares(amounts: number[], discount: number): number[] {
	const positive = amounts.map(a => Math.max(0, a));
	const total = positive.reduce((sum, a) => sum + a, 0);
	const taken = Math.min(discount, total);
	if (taken <= 0 || total === 0) return amounts.map(() => 0);
	const shares = positive.map(a => Math.floor((a * taken) / total));
	// The cents the floors left go one each to the lines with the largest remainders (then the dearest): a line
	// with a remainder was floored below its amount, so no share ever exceeds its line (all to the largest could).
	const left = taken - shares.reduce((sum, s) => sum + s, 0);
	const order = positive
		.map((a, i) => ({ i, remainder: (a * taken) % total, a }))
		.sort((x, y) => y.remainder - x.remainder || y.a - x.a || x.i - y.i);
	for (const { i } of order.slice(0, left)) shares[i] += 1;
	return shares;
}

/**
 * What lines cost with their tax, after an optional discount (positive minor units, taken before tax; the
 * coupons' engine passes it). Each line is taxed at its own rate; the totals are the lines' sums.
 */
export function priceLines(lines: { amount: number; rule: TaxRule }[], discount = 0): Priced {
	const shares = discountShares(
		lines.map(l => l.amount),
		discount,
	);
	const priced = lines.map((line, i) => ({
		amount: line.amount,
		rateBps: line.rule.rateBps,
		...taxLine(line.amount - shares[i], line.rule),
	}));
	const sum = (pick: (l: PricedLine) => number) => priced.reduce((total, l) => total + pick(l), 0);
	return {
		lines: priced,
		discount: shares.reduce((total, s) => total + s, 0),
		net: sum(l => l.net),
		tax: sum(l => l.tax),
		gross: sum(l => l.gross),
	};
}

/** What a plan's period costs the buyer: unit price × quantity, with tax added when the prices exclude it. */
export function planGross(unitAmount: number, quantity: number, rule: TaxRule | undefined, discount = 0): number {
	return priceLines([{ amount: unitAmount * quantity, rule: rule ?? NO_TAX }], discount).gross;
}
