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

/** An active ISO 4217 currency, or undefined (funds, metals and test codes are refused). */
export function findCurrency(code: string): Currency | undefined {
	if (typeof code !== "string" || !/^[A-Za-z]{3}$/.test(code)) return undefined;
	const entry = currencyCodes.code(code.toUpperCase());
	if (!entry || entry.countries.some(c => c.startsWith("Zz"))) return undefined;
	return { code: entry.code, id: Number(entry.number), digits: entry.digits };
}

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
	if (!Number.isSafeInteger(minor)) return MoneyError.TooLarge;
	if (minus || minor === 0) return MoneyError.NotPositive;
	return minor;
}

/** Minor units to the decimal number the API shows: 499 -> 4.99, 1000 -> 10. */
export function toDecimal(minor: number, currency: Currency): number {
	return Number((minor / 10 ** currency.digits).toFixed(currency.digits));
}
