// formatMoney (shared/money.ts), which writes the amounts of buyers' emails,
// against a simple model: the digits it shows are exactly the minor units'
// (zero-padded to the currency's exponent), for any amount and currency.
import fc from "fast-check";
import { CURRENCY_CODES, findCurrency, formatMoney } from "../../shared/money";

const model = (minor: number, digits: number) => String(minor).padStart(digits + 1, "0");

describe("formatMoney", () => {
	test("When any amount in any currency is written in English or German, then its digits are exactly the minor units'", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 10 ** 11 }),
				fc.constantFrom(...CURRENCY_CODES),
				fc.constantFrom("en", "de"),
				(minor, code, language) => {
					const currency = findCurrency(code)!;
					const written = formatMoney(minor, currency, language);
					// Digits only: the currency's symbol or code has none.
					expect(written.replace(/[^0-9]/g, "")).toBe(model(minor, currency.digits));
				},
			),
		);
	});

	test("When 1999 cents of EUR are written, then English and German write them their own way", () => {
		const eur = findCurrency("EUR")!;
		expect(formatMoney(1999, eur, "en")).toBe("€19.99");
		expect(formatMoney(1999, eur, "de")).toBe("19,99\u00a0€");
	});
});
