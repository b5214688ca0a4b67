// What one transaction adds to the volume figures (docs/metrics.md#volume):
// pure, positive minor units of its currency, tax included, on its day. An
// approved charge is gross volume at what the card paid (credit is not cash
// now; a hold is not volume until captured); a refund is refunds; a lost
// dispute's chargeback is chargebacks. Disputes opened are read from the
// dispute, not from a transaction: they are shown, never subtracted. Net
// volume is the metrics service's read (metrics/window-figures.ts).
import { divideRounded } from "../../../shared/tax";
import type { Billed, TransactionDoc } from "../records/transaction";
import { TransactionStatus, TransactionType } from "../states";

export type VolumeFigure = "gross" | "refunds" | "chargebacks";

const FIGURE_OF: Partial<Record<TransactionType, VolumeFigure>> = {
	[TransactionType.SubscriptionStart]: "gross",
	[TransactionType.Renewal]: "gross",
	[TransactionType.SubscriptionChange]: "gross",
	[TransactionType.FinalUsage]: "gross",
	[TransactionType.Refunded]: "refunds",
	[TransactionType.Chargeback]: "chargebacks",
};

/**
 * Of a charge's gross volume, the part that paid for usage (docs/metrics.md#usage): its usage lines' share of all it
 * billed, applied to what the card paid, half up. Usage is volume, never MRR: it recurs at no known amount.
 */
export function usageShareOf(billed: Billed | undefined, gross: number): number {
	const lines = billed?.lines ?? [];
	const usage = lines.filter(line => line.kind === "usage" || line.kind === "usage_adjustment").reduce((sum, line) => sum + line.amount, 0);
	const all = lines.reduce((sum, line) => sum + line.amount, 0);
	return usage > 0 && all > 0 ? divideRounded(gross * usage, all) : 0;
}

/** The figure a transaction counts in and its amount; null when it moved no money (declined, failed, a hold, 0). */
export function volumeOf(tx: Pick<TransactionDoc, "type" | "status" | "amount">): { figure: VolumeFigure; amount: number } | null {
	const figure = FIGURE_OF[tx.type];
	if (!figure || tx.status !== TransactionStatus.Approved || tx.amount === 0) return null;
	return { figure, amount: Math.abs(tx.amount) };
}
