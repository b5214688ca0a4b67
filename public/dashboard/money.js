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
