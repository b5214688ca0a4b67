// Money is integer minor units everywhere inside the system; the API shows
// decimal numbers in the product's currency (ISO 4217 exponent).
import currencyCodes from "currency-codes";

export interface Currency {
	code: string;
	/** ISO 4217 numeric code, e.g. 978 for EUR: the API's `currencyId`. */
	id: number;
	/** Minor-unit exponent: 2 for EUR, 0 for JPY, 3 for BHD. */
	digits: number;
}

/** Every active ISO 4217 currency (funds, metals and test codes are left out), by its upper-case code. */
const CURRENCIES = new Map<string, Currency>(
	currencyCodes.data
		.filter(entry => !entry.countries.some(country => country.startsWith("Zz")))
		.map(entry => [entry.code, { code: entry.code, id: Number(entry.number), digits: entry.digits }]),
);

const BY_ID = new Map([...CURRENCIES.values()].map(currency => [currency.id, currency]));

/** The codes a product may be priced in, in ISO 4217's order. */
export const CURRENCY_CODES: readonly string[] = [...CURRENCIES.keys()];

/** An active ISO 4217 currency by its code as written in ISO 4217 (upper case), or undefined. */
export function findCurrency(code: string): Currency | undefined {
	return typeof code === "string" ? CURRENCIES.get(code) : undefined;
}

/** An active ISO 4217 currency by its numeric code (978 for EUR, the API's `currencyId`), or undefined. */
export function findCurrencyById(id: number): Currency | undefined {
	return BY_ID.get(id);
}

/** Largest amount a product or refund may have, in major units of any currency. */
export const MAX_AMOUNT = 1_000_000_000;

export enum MoneyError {
	NotANumber = "NOT_A_NUMBER",
	NotPositive = "NOT_POSITIVE",
	TooManyDecimals = "TOO_MANY_DECIMALS",
	TooLarge = "TOO_LARGE",
}

/**
 * Parses a decimal amount (number or numeric string) into minor units without
 * floating-point arithmetic: 4.99 EUR -> 499, 10 JPY -> 10.
 */
export function toMinorUnits(amount: number | string, currency: Currency): number | MoneyError {
	const text = typeof amount === "number" ? (Number.isFinite(amount) ? String(amount) : "") : String(amount).trim();
	const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text);
	if (!match) return MoneyError.NotANumber;
	const [, minus, whole, fraction = ""] = match;
	const significant = fraction.replace(/0+$/, "");
	if (significant.length > currency.digits) return MoneyError.TooManyDecimals;
	const minor = Number(whole + significant.padEnd(currency.digits, "0"));
	if (!Number.isSafeInteger(minor) || minor > MAX_AMOUNT * 10 ** currency.digits) return MoneyError.TooLarge;
	if (minus || minor === 0) return MoneyError.NotPositive;
	return minor;
}

/** Minor units to the decimal number the API shows: 499 -> 4.99, 1000 -> 10. */
export function toDecimal(minor: number, currency: Currency): number {
	return Number((minor / 10 ** currency.digits).toFixed(currency.digits));
}

/** Minor units shown as the language writes money (Intl): `formatMoney(1999, EUR, "de")` is "19,99 €". */
export function formatMoney(minor: number, currency: Currency, language: string): string {
	const format = new Intl.NumberFormat(language, {
		style: "currency",
		currency: currency.code,
		minimumFractionDigits: currency.digits,
		maximumFractionDigits: currency.digits,
	});
	return format.format(minor / 10 ** currency.digits);
}
