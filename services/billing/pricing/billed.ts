// What a charge billed, kept on its transaction at charge time (`billed`), so
// its invoice is built from the transaction alone, whatever the product or the
// account's tax says later (services/invoicing/invoice-lines.ts).
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { NO_TAX, priceLines } from "../../../shared/tax";
import type { Billed, BilledLine } from "../records/transaction";

/** A plan's period: the product × quantity from `from` to `to` (null: no end, a one-off product). */
export function planLine(product: Pick<ProductRecord, "id" | "amountMinor">, quantity: number, from: Date, to: Date | null): BilledLine {
	return {
		kind: "plan",
		productId: product.id,
		quantity,
		unitAmount: product.amountMinor,
		amount: product.amountMinor * quantity,
		from,
		to,
	};
}

/** What the buyer pays for the lines with their tax, before credit: the amount a charge asks the card for plus the credit used. */
export function billedGross(billed: Billed, discount = 0): number {
	return priceLines(
		billed.lines.map(line => ({ amount: line.amount, rule: line.tax ?? billed.tax })),
		discount,
	).gross;
}

/** One plan's period billed, with the product's tax. */
export function planBilled(
	product: Pick<ProductRecord, "id" | "amountMinor" | "tax">,
	quantity: number,
	from: Date,
	to: Date | null,
): Billed {
	return { lines: [planLine(product, quantity, from, to)], tax: product.tax ?? NO_TAX };
}
