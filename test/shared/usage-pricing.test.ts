// priceUsage (shared/usage-pricing.ts), what a meter's usage costs: worked
// examples computed by hand, then every model against a simple exact model of
// its own (prices as BigInt fractions, the line rounded half up once), then the
// rules priceProblem and parsePrice refuse prices by.
import fc from "fast-check";
import { adjustmentAmount, parsePrice, priceProblem, priceUsage, type UsagePrice, type UsageTier } from "../../shared/usage-pricing";

/** Units as the module's quantities: millionths of a unit. */
const units = (n: number) => n * 1_000_000;

const TIERS: UsageTier[] = [
	{ upTo: 1000, unitAmount: "0", flatAmount: 0 },
	{ upTo: 10000, unitAmount: "0.5", flatAmount: 100 },
	{ upTo: null, unitAmount: "0.1", flatAmount: 0 },
];
const perUnit = (unitAmount: string, minimumAmount?: number): UsagePrice => ({
	meter: "api_calls",
	model: "per_unit",
	unitAmount,
	minimumAmount,
});
const pkg: UsagePrice = { meter: "api_calls", model: "package", unitAmount: "500", packageSize: 1000 };
const graduated: UsagePrice = { meter: "api_calls", model: "graduated", tiers: TIERS };
const volume: UsagePrice = { meter: "api_calls", model: "volume", tiers: TIERS };

// ---------------------------------------------------------------------------
// The model: an amount is an exact fraction num/den of minor units (BigInt).
// ---------------------------------------------------------------------------

interface Fraction {
	num: bigint;
	den: bigint;
}
const MILLION = 1_000_000n;
const ZERO: Fraction = { num: 0n, den: 1n };
const add = (a: Fraction, b: Fraction): Fraction => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
const times = (a: Fraction, n: bigint): Fraction => ({ num: a.num * n, den: a.den });
const sameValue = (a: Fraction, b: Fraction) => a.num * b.den === b.num * a.den;

/** "12.345" → 12345/1000: the digits without the point over a power of ten (not the module's padding to 12 decimals). */
function fraction(decimal: string): Fraction {
	const point = decimal.indexOf(".");
	if (point < 0) return { num: BigInt(decimal), den: 1n };
	const decimals = decimal.length - point - 1;
	return { num: BigInt(decimal.slice(0, point) + decimal.slice(point + 1)), den: 10n ** BigInt(decimals) };
}

/** Half up, by the remainder: the fraction's floor, plus one when what is left is at least a half. */
function roundHalfUp({ num, den }: Fraction): number {
	const floor = num / den;
	const rest = num - floor * den;
	return Number(rest * 2n >= den ? floor + 1n : floor);
}

/** The exact, unrounded usage amount of `micro` millionths of a unit at `price`, by the rules of docs/usage.md#prices. */
function modelExact(price: UsagePrice, micro: number): Fraction {
	const q = BigInt(micro);
	// The price of q millionths of a unit at `unit` minor units per unit.
	const quantityAt = (unit: Fraction): Fraction => ({ num: unit.num * q, den: unit.den * MILLION });
	switch (price.model) {
		case "per_unit":
			return quantityAt(fraction(price.unitAmount!));
		case "package": {
			// Whole packages, rounded up: the smallest count whose units hold the quantity.
			const size = BigInt(price.packageSize!) * MILLION;
			let packages = q / size;
			if (packages * size < q) packages += 1n;
			return times(fraction(price.unitAmount!), packages);
		}
		case "graduated": {
			let total = ZERO;
			let lower = 0n;
			for (const tier of price.tiers!) {
				const upper = tier.upTo === null ? null : BigInt(tier.upTo) * MILLION;
				if (q > lower) {
					// The usage entered the tier: the millionths inside it at its unit price, plus its flat amount.
					const inTier = (upper === null || q < upper ? q : upper) - lower;
					const unit = fraction(tier.unitAmount);
					total = add(total, add({ num: unit.num * inTier, den: unit.den * MILLION }, { num: BigInt(tier.flatAmount), den: 1n }));
				}
				if (upper === null) break;
				lower = upper;
			}
			return total;
		}
		case "volume": {
			if (q === 0n) return ZERO;
			const tier = price.tiers!.find(t => t.upTo === null || q <= BigInt(t.upTo) * MILLION)!;
			return add(quantityAt(fraction(tier.unitAmount)), { num: BigInt(tier.flatAmount), den: 1n });
		}
	}
}

function model(price: UsagePrice, micro: number): { usageAmount: number; amount: number } {
	const usageAmount = roundHalfUp(modelExact(price, micro));
	return { usageAmount, amount: Math.max(usageAmount, price.minimumAmount ?? 0) };
}

// ---------------------------------------------------------------------------
// Generators. Amounts stay far below 2^53 minor units: a unit price's whole part
// is at most 10^6 and a quantity at most 10^6 units (10^12 millionths).
// ---------------------------------------------------------------------------

const MAX_MICRO = 10 ** 12;
const digit = fc.constantFrom(..."0123456789".split(""));
const decimalPrice = fc
	.tuple(
		fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 1_000_000 })),
		fc.oneof(fc.array(digit, { maxLength: 2 }), fc.array(digit, { maxLength: 12 })),
	)
	.map(([whole, decimals]) => (decimals.length === 0 ? `${whole}` : `${whole}.${decimals.join("")}`));
const flatAmount = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_000_000 }));
const minimumAmount = fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: undefined });

/** 1 to 5 tiers, ascending by a whole upTo (within the quantities' range), the last without one. */
const tiers: fc.Arbitrary<UsageTier[]> = fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 0, maxLength: 4 }).chain(steps =>
	fc.tuple(...[...steps, 0].map(() => fc.tuple(decimalPrice, flatAmount))).map(amounts => {
		let upTo = 0;
		return amounts.map(([unitAmount, flat], i) => {
			upTo += steps[i] ?? 0;
			return { upTo: i < steps.length ? upTo : null, unitAmount, flatAmount: flat };
		});
	}),
);

const perUnitPrice = fc.record({
	meter: fc.constant("m"),
	model: fc.constant("per_unit" as const),
	unitAmount: decimalPrice,
	minimumAmount,
});
const packagePrice = fc.record({
	meter: fc.constant("m"),
	model: fc.constant("package" as const),
	unitAmount: decimalPrice,
	packageSize: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 500_000 })),
	minimumAmount,
});
const tieredPrice = (kind: "graduated" | "volume") =>
	fc.record({ meter: fc.constant("m"), model: fc.constant(kind), tiers, minimumAmount });
const monotonePrice: fc.Arbitrary<UsagePrice> = fc.oneof(perUnitPrice, packagePrice, tieredPrice("graduated"));
const anyPrice: fc.Arbitrary<UsagePrice> = fc.oneof(perUnitPrice, packagePrice, tieredPrice("graduated"), tieredPrice("volume"));

/** The quantities where a price's amount changes its rule: tier and package boundaries. */
function boundaries(price: UsagePrice): number[] {
	if (price.model === "package") return [1, 2, 3].map(k => k * units(price.packageSize!));
	return (price.tiers ?? []).flatMap(t => (t.upTo === null ? [] : [units(t.upTo)]));
}

/**
 * Any quantity up to 10^6 units, often whole units (with short decimal prices, lines that end in exactly a half), or one
 * a millionth around a boundary of the price (where off-by-ones hide).
 */
const quantityFor = (price: UsagePrice): fc.Arbitrary<number> => {
	const edges = boundaries(price);
	const anywhere = fc.oneof(
		fc.constant(0),
		fc.integer({ min: 0, max: 1000 }),
		fc.integer({ min: 0, max: MAX_MICRO }),
		fc.integer({ min: 0, max: 1000 }).map(units),
		fc.integer({ min: 0, max: 1_000_000 }).map(units),
	);
	if (edges.length === 0) return anywhere;
	const nearEdge = fc.tuple(fc.constantFrom(...edges), fc.constantFrom(-1, 0, 1)).map(([edge, d]) => Math.max(0, edge + d));
	return fc.oneof(anywhere, nearEdge);
};
const pricedQuantity = (prices: fc.Arbitrary<UsagePrice>) => prices.chain(price => fc.tuple(fc.constant(price), quantityFor(price)));
const pricedTwoQuantities = (prices: fc.Arbitrary<UsagePrice>) =>
	prices.chain(price => fc.tuple(fc.constant(price), quantityFor(price), quantityFor(price)));

/** A tier line's exact amount string as a fraction (it may have up to 18 decimals). */
const tierAmount = (amount: string) => fraction(amount);

describe("priceUsage by hand", () => {
	test("When 12,345 units are priced per unit at 0.2, then they come to 2469 minor units", () => {
		expect(priceUsage(perUnit("0.2"), units(12_345))).toEqual({ meter: "api_calls", quantity: 12_345, usageAmount: 2469, amount: 2469 });
	});

	test("When a line comes to a half, then it is rounded up; below a half, down", () => {
		// 0.5 → 1, 0.25 → 0, 1.5 → 2, 0.4999… → 0: one rounding, half up.
		expect(priceUsage(perUnit("0.5"), units(1)).amount).toBe(1);
		expect(priceUsage(perUnit("0.25"), units(1)).amount).toBe(0);
		expect(priceUsage(perUnit("0.5"), units(3)).amount).toBe(2);
		expect(priceUsage(perUnit("0.499999999999"), units(1)).amount).toBe(0);
	});

	test("When a quantity is a fraction of a unit, then it is priced exactly and reported in units", () => {
		// 1.5 units at 3 = 4.5 → 5; a millionth of a unit at 0.2 = 0.0000002 → 0.
		expect(priceUsage(perUnit("3"), 1_500_000)).toMatchObject({ quantity: 1.5, usageAmount: 5, amount: 5 });
		expect(priceUsage(perUnit("0.2"), 1)).toMatchObject({ quantity: 0.000001, amount: 0 });
		// 12 decimals: a millionth of a minor unit per unit, over 10^6 units, is one minor unit.
		expect(priceUsage(perUnit("0.000001"), units(1_000_000)).amount).toBe(1);
	});

	test("When a minimum is above the usage, then the minimum is billed and the usage amount is kept", () => {
		expect(priceUsage(perUnit("0.2", 5000), units(12_345))).toMatchObject({ usageAmount: 2469, amount: 5000 });
		expect(priceUsage(perUnit("0.2", 2000), units(12_345))).toMatchObject({ usageAmount: 2469, amount: 2469 });
		// No usage: the minimum still applies.
		expect(priceUsage(perUnit("0.2", 5000), 0)).toMatchObject({ usageAmount: 0, amount: 5000 });
	});

	test("When packages of 1000 at 500 are priced, then the usage is rounded up to whole packages", () => {
		expect(priceUsage(pkg, units(1001))).toMatchObject({ packages: 2, usageAmount: 1000, amount: 1000 });
		expect(priceUsage(pkg, units(1000))).toMatchObject({ packages: 1, amount: 500 });
		// A millionth of a unit past a package opens the next one.
		expect(priceUsage(pkg, units(1000) + 1)).toMatchObject({ packages: 2, amount: 1000 });
		expect(priceUsage(pkg, 0)).toMatchObject({ packages: 0, amount: 0 });
	});

	test("When 12,000 units are priced by graduated tiers, then each tier bills its own units and its flat amount: 0 + 4600 + 200", () => {
		const priced = priceUsage(graduated, units(12_000));
		expect(priced.amount).toBe(4800);
		expect(priced.tiers).toEqual([
			{ from: 0, upTo: 1000, quantity: 1000, unitAmount: "0", flatAmount: 0, amount: "0" },
			{ from: 1000, upTo: 10000, quantity: 9000, unitAmount: "0.5", flatAmount: 100, amount: "4600" },
			{ from: 10000, upTo: null, quantity: 2000, unitAmount: "0.1", flatAmount: 0, amount: "200" },
		]);
	});

	test("When graduated usage ends exactly on a tier's upTo, then the next tier (and its flat amount) is not entered", () => {
		const priced = priceUsage(graduated, units(1000));
		expect(priced.tiers).toHaveLength(1);
		expect(priced.amount).toBe(0);
		// A millionth more enters the second tier: its flat 100 plus 0.0000005, shown exactly.
		const past = priceUsage(graduated, units(1000) + 1);
		expect(past.tiers![1]).toEqual({
			from: 1000,
			upTo: 10000,
			quantity: 0.000001,
			unitAmount: "0.5",
			flatAmount: 100,
			amount: "100.0000005",
		});
		expect(past.amount).toBe(100);
		expect(priceUsage(graduated, 0)).toMatchObject({ tiers: [], amount: 0 });
	});

	test("When a tier's amount is a millionth of a unit at a 12-decimal price, then its string keeps all 18 decimals", () => {
		const tiny: UsagePrice = { meter: "m", model: "graduated", tiers: [{ upTo: null, unitAmount: "0.000000000001", flatAmount: 0 }] };
		expect(priceUsage(tiny, 1).tiers![0].amount).toBe("0.000000000000000001");
	});

	test("When 12,000 units are priced by volume tiers, then all of them are at the last tier's 0.1", () => {
		const priced = priceUsage(volume, units(12_000));
		expect(priced.amount).toBe(1200);
		expect(priced.tiers).toEqual([{ from: 10000, upTo: null, quantity: 12000, unitAmount: "0.1", flatAmount: 0, amount: "1200" }]);
	});

	test("When volume usage ends on a tier's upTo, then that tier prices it (upTo is inclusive), and a unit more may cost less", () => {
		// 10,000 × 0.5 + 100 = 5100; 10,001 × 0.1 = 1000.1 → 1000.
		expect(priceUsage(volume, units(10_000)).amount).toBe(5100);
		expect(priceUsage(volume, units(10_001)).amount).toBe(1000);
		expect(priceUsage(volume, units(500)).tiers).toEqual([
			{ from: 0, upTo: 1000, quantity: 500, unitAmount: "0", flatAmount: 0, amount: "0" },
		]);
	});

	test("When a volume price has no usage, then it bills nothing, not even the first tier's flat amount", () => {
		const flatFirst: UsagePrice = { meter: "m", model: "volume", tiers: [{ upTo: null, unitAmount: "1", flatAmount: 300 }] };
		expect(priceUsage(flatFirst, 0)).toMatchObject({ tiers: [], amount: 0 });
		expect(priceUsage(flatFirst, 1).amount).toBe(300);
	});

	test("When late events add usage to a billed period, then the adjustment is the difference, and never below 0", () => {
		expect(adjustmentAmount(perUnit("0.2"), units(10_000), units(12_345))).toBe(469);
		expect(adjustmentAmount(perUnit("0.2"), units(12_345), units(10_000))).toBe(0);
		// Volume: more usage may cost less; a bill already paid is not refunded.
		expect(adjustmentAmount(volume, units(10_000), units(10_001))).toBe(0);
		// Under a minimum both lines are the minimum: nothing to add.
		expect(adjustmentAmount(perUnit("0.2", 5000), units(100), units(200))).toBe(0);
	});
});

describe("priceUsage against an exact model", () => {
	test("When any price is applied to any quantity, then its usage amount and amount are the model's", () => {
		fc.assert(
			fc.property(pricedQuantity(anyPrice), ([price, q]) => {
				expect(priceProblem(price)).toBeNull();
				const priced = priceUsage(price, q);
				expect({ usageAmount: priced.usageAmount, amount: priced.amount }).toEqual(model(price, q));
				expect(priced.quantity).toBe(q / 1_000_000);
			}),
			{ numRuns: 300 },
		);
	});

	test("When a line comes to exactly n and a half, then it is billed n + 1", () => {
		fc.assert(
			fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1000 }), (whole, n) => {
				// One unit at whole.5, and 2n + 1 units at 0.5: both lines end in exactly a half.
				expect(priceUsage(perUnit(`${whole}.5`), units(1)).amount).toBe(whole + 1);
				expect(priceUsage(perUnit("0.5"), units(2 * n + 1)).amount).toBe(n + 1);
			}),
			{ numRuns: 300 },
		);
	});

	test("When a tiered price is applied, then its tiers' exact amounts add up to the unrounded line", () => {
		fc.assert(
			fc.property(pricedQuantity(fc.oneof(tieredPrice("graduated"), tieredPrice("volume"))), ([price, q]) => {
				const lines = priceUsage(price, q).tiers!;
				const sum = lines.reduce((total, line) => add(total, tierAmount(line.amount)), ZERO);
				expect(sameValue(sum, modelExact(price, q))).toBe(true);
				// The units billed in the tiers are the quantity (graduated) or all of it in one tier (volume).
				const billed = lines.reduce((total, line) => total + BigInt(Math.round(line.quantity * 1_000_000)), 0n);
				expect(billed).toBe(BigInt(q));
				if (price.model === "volume") expect(lines.length).toBe(q === 0 ? 0 : 1);
			}),
			{ numRuns: 300 },
		);
	});

	test("When the usage grows, then a per-unit, package or graduated line never goes down", () => {
		fc.assert(
			fc.property(pricedTwoQuantities(monotonePrice), ([price, a, b]) => {
				const [less, more] = a <= b ? [a, b] : [b, a];
				expect(priceUsage(price, more).amount).toBeGreaterThanOrEqual(priceUsage(price, less).amount);
			}),
			{ numRuns: 300 },
		);
	});

	test("When an adjustment is priced, then it is never negative and is the model's growth from the billed usage", () => {
		fc.assert(
			fc.property(pricedTwoQuantities(anyPrice), ([price, billed, now]) => {
				const adjustment = adjustmentAmount(price, billed, now);
				expect(adjustment).toBeGreaterThanOrEqual(0);
				expect(adjustment).toBe(Math.max(0, model(price, now).amount - model(price, billed).amount));
				// Monotone models: later usage (now ≥ billed) adds exactly the difference.
				if (price.model !== "volume" && now >= billed) expect(adjustment).toBe(model(price, now).amount - model(price, billed).amount);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("parsePrice", () => {
	test.each([
		["0", 0n],
		["2", 2n * 10n ** 12n],
		["0.2", 2n * 10n ** 11n],
		["0.000000000001", 1n],
		["0.50", 5n * 10n ** 11n],
		["999999999999.999999999999", 10n ** 24n - 1n],
	])("When %p is parsed, then it is %p twelfths-of-decimals of a minor unit", (value, scaled) => {
		expect(parsePrice(value)).toBe(scaled);
	});

	test.each([
		"-1",
		"1e3",
		"0.0000000000001", // 13 decimals
		"01",
		"",
		".5",
		"1.",
		" 1",
		"1,5",
		"1000000000000", // 13 whole digits
	])("When %p is parsed, then it is refused", value => {
		expect(parsePrice(value)).toBeNull();
	});

	test("When any decimal price is parsed, then it is its exact fraction scaled to 12 decimals", () => {
		fc.assert(
			fc.property(decimalPrice, value => {
				const { num, den } = fraction(value);
				expect(parsePrice(value)).toBe((num * 10n ** 12n) / den);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("priceProblem", () => {
	test.each<[string, UsagePrice]>([
		["per unit", perUnit("0.2")],
		["per unit with a minimum", perUnit("0", 500)],
		["package", pkg],
		["graduated", graduated],
		["volume", volume],
		["one open tier", { meter: "m", model: "volume", tiers: [{ upTo: null, unitAmount: "1", flatAmount: 0 }] }],
	])("When a %s price is checked, then it is fine", (_, price) => {
		expect(priceProblem(price)).toBeNull();
	});

	test.each<[string, UsagePrice, string]>([
		["a negative unit amount", perUnit("-1"), "unitAmount must be"],
		["an exponent", perUnit("1e3"), "unitAmount must be"],
		["13 decimals", perUnit("0.0000000000001"), "unitAmount must be"],
		["leading zeros", perUnit("01"), "unitAmount must be"],
		["no unit amount", { meter: "m", model: "per_unit" }, "unitAmount must be"],
		["per unit with tiers", { ...perUnit("1"), tiers: TIERS }, "tiers are for graduated and volume prices"],
		["a package without a size", { meter: "m", model: "package", unitAmount: "1" }, "packageSize must be"],
		["a package of 0", { ...pkg, packageSize: 0 }, "packageSize must be"],
		["a package of 1.5", { ...pkg, packageSize: 1.5 }, "packageSize must be"],
		["graduated without tiers", { meter: "m", model: "graduated" }, "needs tiers"],
		["volume with no tiers", { meter: "m", model: "volume", tiers: [] }, "needs tiers"],
		["tiers with a unit amount", { ...graduated, unitAmount: "1" }, "has its amounts in its tiers"],
		[
			"tiers not ascending",
			{
				meter: "m",
				model: "graduated",
				tiers: [
					{ upTo: 100, unitAmount: "1", flatAmount: 0 },
					{ upTo: 100, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
				],
			},
			"ascending order",
		],
		[
			"tiers descending",
			{
				meter: "m",
				model: "volume",
				tiers: [
					{ upTo: 100, unitAmount: "1", flatAmount: 0 },
					{ upTo: 50, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
				],
			},
			"ascending order",
		],
		["a last tier with an upTo", { meter: "m", model: "graduated", tiers: [{ upTo: 100, unitAmount: "1", flatAmount: 0 }] }, "upTo null"],
		[
			"a middle tier without an upTo",
			{
				meter: "m",
				model: "graduated",
				tiers: [
					{ upTo: 100, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
				],
			},
			"upTo null",
		],
		[
			"a fractional upTo",
			{
				meter: "m",
				model: "graduated",
				tiers: [
					{ upTo: 1.5, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
				],
			},
			"upTo must be a whole number",
		],
		[
			"an upTo of 0",
			{
				meter: "m",
				model: "volume",
				tiers: [
					{ upTo: 0, unitAmount: "1", flatAmount: 0 },
					{ upTo: null, unitAmount: "1", flatAmount: 0 },
				],
			},
			"upTo must be a whole number",
		],
		[
			"a tier's bad unit amount",
			{ meter: "m", model: "volume", tiers: [{ upTo: null, unitAmount: "1e3", flatAmount: 0 }] },
			"tiers[0].unitAmount must be",
		],
	])("When a price with %s is checked, then it is refused", (_, price, problem) => {
		expect(priceProblem(price)).toContain(problem);
	});

	test("When a random price of any model is generated, then it is fine (the generators make only valid prices)", () => {
		fc.assert(
			fc.property(anyPrice, price => expect(priceProblem(price)).toBeNull()),
			{ numRuns: 300 },
		);
	});
});
