import { findCurrency, MoneyError, toDecimal, toMinorUnits } from "../../shared/money";

const EUR = findCurrency("EUR")!;
const JPY = findCurrency("JPY")!;
const BHD = findCurrency("BHD")!;

describe("money", () => {
	test.each([
		[4.99, EUR, 499],
		["4.99", EUR, 499],
		[10, EUR, 1000],
		[0.1, EUR, 10],
		[1.005, BHD, 1005],
		[1200, JPY, 1200],
		["7.50", EUR, 750],
	])("When %p %s is parsed, then it is %i minor units", (amount, currency, minor) => {
		expect(toMinorUnits(amount, currency)).toBe(minor);
	});

	test.each([
		[9.999, EUR, MoneyError.TooManyDecimals],
		[12.5, JPY, MoneyError.TooManyDecimals],
		[0, EUR, MoneyError.NotPositive],
		[-5, EUR, MoneyError.NotPositive],
		["1e3", EUR, MoneyError.NotANumber],
		[Number.NaN, EUR, MoneyError.NotANumber],
		[Infinity, EUR, MoneyError.NotANumber],
		["99999999999999999", EUR, MoneyError.TooLarge],
	])("When %p %s is parsed, then it is refused as %s", (amount, currency, error) => {
		expect(toMinorUnits(amount, currency)).toBe(error);
	});

	test("When minor units are shown, then they print as the API's decimal numbers", () => {
		expect([toDecimal(499, EUR), toDecimal(1000, EUR), toDecimal(1200, JPY), toDecimal(1, EUR)]).toEqual([4.99, 10, 1200, 0.01]);
	});

	test("When a currency is looked up, then test codes, metals and codes not written as ISO 4217 writes them are refused, and the numeric id is ISO 4217's", () => {
		expect(findCurrency("EUR")).toEqual({ code: "EUR", id: 978, digits: 2 });
		expect([findCurrency("XXX"), findCurrency("XAU"), findCurrency("EU"), findCurrency("EURO"), findCurrency("eur")]).toEqual([
			undefined,
			undefined,
			undefined,
			undefined,
			undefined,
		]);
	});

	test("When an amount is above a billion of the currency, then it is refused as too large", () => {
		expect([toMinorUnits(1_000_000_000, EUR), toMinorUnits(1_000_000_000.01, EUR)]).toEqual([100_000_000_000, MoneyError.TooLarge]);
	});
});
