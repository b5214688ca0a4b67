// What a change's lines come to and how it is paid, as Stripe counts it: pure,
// integer minor units. Each line's `gross` is its amount with the tax its
// price excludes added (shared/tax.ts; a price that includes tax is its own
// gross). Invariants: total = Σ gross, signed; due = max(total, 0), never
// negative; creditAdded = max(−total, 0), so due − creditAdded = total
// exactly and at most one of them is not 0; the credit pays the due before
// the card (credit.ts): charged + creditUsed = due, and creditAfter =
// credit − creditUsed + creditAdded. docs/subscriptions.md#api.

import { type TaxRule, taxLine } from "../../../../shared/tax";
import { applyCredit } from "./credit";

export interface ChangeAmounts {
	/** Each line's gross, in the lines' order. */
	gross: number[];
	/** Σ gross: positive, what the change costs; negative, what it gives back. */
	total: number;
	/** To pay now, before the credit: max(total, 0). */
	due: number;
	/** To the customer's credit: max(−total, 0). */
	creditAdded: number;
	creditUsed: number;
	/** What the card pays: due − creditUsed. */
	charged: number;
	creditAfter: number;
}

/** A line's gross: an inclusive price is what the buyer pays (no arithmetic, so a 10-figure price stays exact). */
export const lineGross = (amount: number, rule: TaxRule): number => (rule.inclusive ? amount : taxLine(amount, rule).gross);

/** The amounts of lines taxed by their rules, paid first from `credit`; null when one is not a safe integer. */
export function changeAmounts(lines: { amount: number; rule: TaxRule }[], credit: number): ChangeAmounts | null {
	const gross = lines.map(line => lineGross(line.amount, line.rule));
	const total = gross.reduce((sum, amount) => sum + amount, 0);
	if (!Number.isSafeInteger(total)) return null;
	// `|| 0`: a −0 is a plain 0 in the answers.
	const due = Math.max(total, 0) || 0;
	const creditAdded = Math.max(-total, 0) || 0;
	const paid = applyCredit(credit, due);
	if (!paid.ok) return null;
	const { charged, creditLeft } = paid.value;
	return { gross, total, due, creditAdded, creditUsed: credit - creditLeft, charged, creditAfter: creditLeft + creditAdded };
}
