// Amounts as the dashboard shows them: with their currency, written as the
// browser's language writes money (Intl), with the currency's ISO 4217 minor
// units (2 for EUR, 0 for JPY, 3 for BHD). The API answers decimals in major
// units everywhere but the metrics, which answer integer minor units.

const formats = new Map();

function formatOf(currency) {
	let format = formats.get(currency);
	if (!format) {
		format = new Intl.NumberFormat(undefined, { style: "currency", currency });
		formats.set(currency, format);
	}
	return format;
}

/** The currency's minor-unit exponent, as ISO 4217 (and so Intl) has it. */
export const minorDigits = currency => formatOf(currency).resolvedOptions().maximumFractionDigits;

/** A decimal amount the API answered (9.99) with its currency: "€9.99"; the amount and code when the code is unknown. */
export function money(amount, currency) {
	if (amount === null || amount === undefined) return "–";
	try {
		return formatOf(currency).format(amount);
	} catch {
		return `${amount} ${currency}`;
	}
}

/**
 * Integer minor units as the exact decimal in major units, written plainly ("19.99", "-4.00", "1200" for JPY),
 * by string arithmetic so no binary fraction creeps in: what the CSV downloads hold.
 */
export function minorToDecimal(minor, currency) {
	const digits = minorDigits(currency);
	const sign = minor < 0 ? "-" : "";
	const text = String(Math.abs(minor)).padStart(digits + 1, "0");
	return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** Integer minor units (the metrics) with their currency: 1999 EUR is "€19.99". */
export const moneyOfMinor = (minor, currency) => (minor === null ? "–" : money(Number(minorToDecimal(minor, currency)), currency));

/**
 * An exact decimal of minor units, as usage prices have them ("0.2" cents, a fifth of a cent), with its currency and
 * every digit it has: "€0.002". Shifted by string arithmetic, so no binary fraction creeps in.
 */
export function moneyOfMinorDecimal(minor, currency) {
	const [whole, fraction = ""] = String(minor).split(".");
	let digits = 2;
	try {
		digits = minorDigits(currency);
	} catch {
		// A code the browser does not know: shown below as the number and the code.
	}
	const padded = whole.padStart(digits + 1, "0");
	const major =
		digits === 0 ? `${padded}${fraction ? `.${fraction}` : ""}` : `${padded.slice(0, -digits)}.${padded.slice(-digits)}${fraction}`;
	try {
		// Prices have up to 12 decimals of a minor unit; a string is formatted exactly.
		return new Intl.NumberFormat(undefined, {
			style: "currency",
			currency,
			minimumFractionDigits: digits,
			maximumFractionDigits: digits + 12,
		}).format(major);
	} catch {
		return `${major} ${currency}`;
	}
}
