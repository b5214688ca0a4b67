// A closed period's usage as the lines of its charge (docs/usage.md#billing):
// one line per meter the product prices, at its price, and one per meter whose
// period before had late events, for what they add. Pure: the renewal and the
// preview price alike, and the property tests check them against a model.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { type ClosedPeriod, type MeterUsage, quantityOf } from "../../../shared/contracts/usage";
import { adjustmentAmount, priceUsage } from "../../../shared/usage-pricing";
import type { BilledLine } from "../records/transaction";

/** The usage lines of a charge that closes `closed`, for `product`'s prices; meters it no longer prices bill nothing. */
export function usageLines(product: Pick<ProductRecord, "id" | "usagePrices">, closed: ClosedPeriod): BilledLine[] {
	const prices = new Map(product.usagePrices.map(price => [price.meter, price]));
	const from = closed.start ? new Date(closed.start) : null;
	const to = new Date(closed.end);
	const lines: BilledLine[] = [];
	for (const usage of closed.usage) {
		const price = prices.get(usage.meter);
		if (!price) continue;
		const priced = priceUsage(price, quantityOf(usage.aggregation, usage.values));
		lines.push({
			kind: "usage",
			productId: product.id,
			quantity: 1,
			unitAmount: priced.amount,
			amount: priced.amount,
			from,
			to,
			usage: { meter: usage.meter, name: usage.name, ...detailOf(priced), minimumAmount: price.minimumAmount ?? null },
		});
	}
	for (const late of closed.adjustments) {
		const price = prices.get(late.meter);
		if (!price) continue;
		const billed = quantityOf(late.aggregation, late.billed);
		const final = quantityOf(late.aggregation, late.final);
		const amount = adjustmentAmount(price, billed, final);
		if (amount === 0) continue;
		const priced = priceUsage(price, final);
		lines.push({
			kind: "usage_adjustment",
			productId: product.id,
			quantity: 1,
			unitAmount: amount,
			amount,
			from: null,
			to: from,
			usage: {
				meter: late.meter,
				name: late.name,
				...detailOf(priced),
				minimumAmount: price.minimumAmount ?? null,
				adjusts: { period: late.period, billedQuantity: billed / 1_000_000 },
			},
		});
	}
	return lines;
}

function detailOf(priced: ReturnType<typeof priceUsage>) {
	return {
		quantity: priced.quantity,
		...(priced.packages !== undefined ? { packages: priced.packages } : {}),
		...(priced.tiers ? { tiers: priced.tiers } : {}),
		usageAmount: priced.usageAmount,
	};
}

/** The meters a product prices: what a close reads. */
export const pricedMeters = (product: Pick<ProductRecord, "usagePrices">): string[] => product.usagePrices.map(price => price.meter);

/** A meter's usage now, priced: the preview's line (GET /api/customer/{id}/usage). */
export function previewLine(product: Pick<ProductRecord, "usagePrices">, usage: MeterUsage) {
	const price = product.usagePrices.find(p => p.meter === usage.meter)!;
	const priced = priceUsage(price, quantityOf(usage.aggregation, usage.values));
	return {
		meter: usage.meter,
		name: usage.name,
		aggregation: usage.aggregation,
		...detailOf(priced),
		amount: priced.amount,
		minimumAmount: price.minimumAmount ?? null,
	};
}
