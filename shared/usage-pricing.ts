// What a meter's usage costs (docs/usage.md#prices): pure, exact, shared by
// billing (which charges it) and the usage preview. Quantities are integer
// millionths of a unit (a sum of 1.5 GB is 1_500_000); unit prices are decimal
// strings of minor units with up to 12 decimals ("0.002": a fifth of a cent),
// held as scaled BigInts. A line is computed exactly and rounded once, half up,
// to minor units; its tiers are shown exactly, never rounded on their own.

/** Millionths of a unit: a quantity's integer scale. */
export const QUANTITY_SCALE = 1_000_000;
const Q = BigInt(QUANTITY_SCALE);
/** A unit price's scale: 12 decimals of a minor unit. */
const P = 10n ** 12n;

export const PRICE_MODELS = ["per_unit", "package", "graduated", "volume"] as const;
export type PriceModel = (typeof PRICE_MODELS)[number];

export interface UsageTier {
	/** The tier's last unit (inclusive); null: no end (the last tier). */
	upTo: number | null;
	/** Minor units per unit in this tier, a decimal string. */
	unitAmount: string;
	/** Minor units once the usage enters the tier (graduated) or falls in it (volume). */
	flatAmount: number;
}

/** A product's price of one meter's usage. */
export interface UsagePrice {
	meter: string;
	model: PriceModel;
	/** per_unit: per unit; package: per package. A decimal string of minor units. */
	unitAmount?: string;
	/** package: units per package; the usage is rounded up to whole packages. */
	packageSize?: number;
	/** graduated, volume: ascending by upTo, the last without one. */
	tiers?: UsageTier[];
	/** Minor units the period's line comes to at least (0: none). */
	minimumAmount?: number;
}

export interface TierLine {
	/** The tier's first unit is the one after `from`. */
	from: number;
	upTo: number | null;
	/** The units billed in this tier. */
	quantity: number;
	unitAmount: string;
	flatAmount: number;
	/** Its exact amount in minor units, a decimal string (the line alone is rounded). */
	amount: string;
}

export interface PricedUsage {
	meter: string;
	/** Units, as the meter aggregated them. */
	quantity: number;
	/** package: the packages billed. */
	packages?: number;
	/** graduated and volume: the tiers the usage reached. */
	tiers?: TierLine[];
	/** Minor units before the minimum, rounded half up. */
	usageAmount: number;
	/** Minor units billed: usageAmount, or the minimum when higher. */
	amount: number;
}

const PRICE = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,12})?$/;

/** A decimal price string as an integer of 10⁻¹² minor units; null when it is not one. */
export function parsePrice(value: string): bigint | null {
	if (!PRICE.test(value)) return null;
	const [whole, fraction = ""] = value.split(".");
	return BigInt(whole) * P + BigInt(fraction.padEnd(12, "0"));
}

/** Why a price cannot be used (its shape is the schema's; these are the rules across fields); null: fine. */
export function priceProblem(price: UsagePrice): string | null {
	return price.model === "per_unit" || price.model === "package" ? unitPriceProblem(price) : tiersProblem(price);
}

function unitPriceProblem(price: UsagePrice): string | null {
	if (price.unitAmount === undefined || parsePrice(price.unitAmount) === null) return "unitAmount must be a decimal string of minor units";
	if (price.model === "package" && !(Number.isInteger(price.packageSize) && price.packageSize! >= 1))
		return "packageSize must be an integer of at least 1";
	if (price.model === "per_unit" && price.packageSize !== undefined) return "packageSize is for package prices";
	if (price.tiers !== undefined) return `tiers are for graduated and volume prices, not ${price.model}`;
	return null;
}

function tiersProblem(price: UsagePrice): string | null {
	const tiers = price.tiers ?? [];
	if (tiers.length === 0) return `a ${price.model} price needs tiers`;
	if (price.unitAmount !== undefined || price.packageSize !== undefined) return `a ${price.model} price has its amounts in its tiers`;
	for (const [i, tier] of tiers.entries()) {
		const problem = tierProblem(tier, i, tiers);
		if (problem) return problem;
	}
	return null;
}

function tierProblem(tier: UsageTier, i: number, tiers: UsageTier[]): string | null {
	if (parsePrice(tier.unitAmount) === null) return `tiers[${i}].unitAmount must be a decimal string of minor units`;
	if ((i === tiers.length - 1) !== (tier.upTo === null)) return "only the last tier, and it alone, has upTo null";
	if (tier.upTo !== null && (!Number.isInteger(tier.upTo) || tier.upTo < 1)) return `tiers[${i}].upTo must be a whole number of units`;
	if (i > 0 && tier.upTo !== null && tier.upTo <= tiers[i - 1].upTo!) return "tiers must be in ascending order of upTo";
	return null;
}

/** `numerator / denominator` rounded half up (both positive). */
function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
	return (2n * numerator + denominator) / (2n * denominator);
}

/** An exact amount (in 10⁻¹²/10⁶ minor units) as a decimal string of minor units, trailing zeros dropped. */
function exact(numerator: bigint): string {
	const scale = P * Q;
	const whole = numerator / scale;
	const fraction = (numerator % scale).toString().padStart(18, "0").replace(/0+$/, "");
	return fraction ? `${whole}.${fraction}` : `${whole}`;
}

const units = (micro: bigint): number => Number(micro) / QUANTITY_SCALE;

/** The line of `quantity` (millionths of a unit, ≥ 0) at `price`. */
export function priceUsage(price: UsagePrice, quantity: number): PricedUsage {
	const q = BigInt(quantity);
	const base = { meter: price.meter, quantity: units(q) };
	let numerator = 0n;
	let extra: Pick<PricedUsage, "packages" | "tiers"> = {};
	if (price.model === "per_unit") {
		numerator = q * parsePrice(price.unitAmount!)!;
	} else if (price.model === "package") {
		const size = BigInt(price.packageSize!) * Q;
		const packages = (q + size - 1n) / size;
		numerator = packages * parsePrice(price.unitAmount!)! * Q;
		extra = { packages: Number(packages) };
	} else {
		const lines = price.model === "graduated" ? graduated(price.tiers!, q) : volume(price.tiers!, q);
		numerator = lines.reduce((sum, line) => sum + line.numerator, 0n);
		extra = { tiers: lines.map(line => line.view) };
	}
	const usageAmount = Number(roundHalfUp(numerator, P * Q));
	return { ...base, ...extra, usageAmount, amount: Math.max(usageAmount, price.minimumAmount ?? 0) };
}

interface Tiered {
	numerator: bigint;
	view: TierLine;
}

function tierLine(tier: UsageTier, from: bigint, inTier: bigint): Tiered {
	const flat = BigInt(tier.flatAmount) * P * Q;
	const numerator = inTier * parsePrice(tier.unitAmount)! + flat;
	return {
		numerator,
		view: {
			from: Number(from),
			upTo: tier.upTo,
			quantity: units(inTier),
			unitAmount: tier.unitAmount,
			flatAmount: tier.flatAmount,
			amount: exact(numerator),
		},
	};
}

/** Each tier bills the units within it, and its flat amount once the usage enters it. */
function graduated(tiers: UsageTier[], q: bigint): Tiered[] {
	const lines: Tiered[] = [];
	let from = 0n;
	for (const tier of tiers) {
		if (q <= from * Q) break;
		const upper = tier.upTo === null ? q : BigInt(tier.upTo) * Q;
		const inTier = (q < upper ? q : upper) - from * Q;
		lines.push(tierLine(tier, from, inTier));
		if (tier.upTo === null) break;
		from = BigInt(tier.upTo);
	}
	return lines;
}

/** All the units at the price of the tier the whole usage falls in, with its flat amount; no usage bills nothing. */
function volume(tiers: UsageTier[], q: bigint): Tiered[] {
	if (q === 0n) return [];
	let from = 0n;
	for (const tier of tiers) {
		if (tier.upTo === null || q <= BigInt(tier.upTo) * Q) return [tierLine(tier, from, q)];
		from = BigInt(tier.upTo);
	}
	return [];
}

/**
 * What events that came late for a billed period add (docs/usage.md#time): the period's line at its usage now less
 * the line it was billed at; never below 0 (a late event can only add to a bill already paid).
 */
export function adjustmentAmount(price: UsagePrice, billed: number, now: number): number {
	return Math.max(0, priceUsage(price, now).amount - priceUsage(price, billed).amount);
}
