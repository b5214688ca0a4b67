// The rules the card form checks while the buyer types. Pure functions (no
// DOM), so frame.js stays about wiring and the rules can be run on their own
// in a browser (test/browser/card-rules.browser.test.ts).
//
// Every validator returns { error, definite }: `error` is null when the value
// is acceptable; `definite` says the error cannot go away by typing more
// (a wrong Luhn check digit, month 13), so the form shows it at once instead
// of waiting for the buyer to leave the field.

/**
 * The card types the service routes to merchant accounts (docs/api.md,
 * "Merchant accounts (MIDs)"): how long their numbers are and how long
 * their security code is.
 */
export const BRANDS = {
	visa: { label: "Visa", lengths: [13, 16, 19], cvc: 3 },
	mastercard: { label: "Mastercard", lengths: [16], cvc: 3 },
	amex: { label: "American Express", lengths: [15], cvc: 4 },
	discover: { label: "Discover", lengths: [16, 17, 18, 19], cvc: 3 },
	jcb: { label: "JCB", lengths: [16, 17, 18, 19], cvc: 3 },
	diners: { label: "Diners Club", lengths: [14, 15, 16, 17, 18, 19], cvc: 3 },
	maestro: { label: "Maestro", lengths: [12, 13, 14, 15, 16, 17, 18, 19], cvc: 3 },
	unionpay: { label: "UnionPay", lengths: [16, 17, 18, 19], cvc: 3 },
};

/** A number whose brand we cannot tell: any length cards are issued in. */
const ANY_LENGTHS = [12, 13, 14, 15, 16, 17, 18, 19];

// Issuer number prefixes, as [low, high] ranges of the first digits. Order
// matters where ranges overlap: the more specific brand comes first.
const PREFIXES = [
	["amex", [[34], [37]]],
	["diners", [[300, 305], [3095], [36], [38, 39]]],
	["jcb", [[3528, 3589]]],
	["visa", [[4]]],
	["mastercard", [[51, 55], [2221, 2720]]],
	["discover", [[6011], [644, 649], [65]]],
	["unionpay", [[62], [81]]],
	["maestro", [[50], [56, 58], [6304], [6390], [67]]],
];

export function onlyDigits(value) {
	return String(value ?? "").replace(/\D/g, "");
}

/** The brand of a (possibly partly typed) number, or null while it cannot be told yet. */
export function brandOf(digits) {
	for (const [brand, ranges] of PREFIXES) {
		for (const [low, high = low] of ranges) {
			const width = String(low).length;
			if (digits.length < width) continue;
			const prefix = Number(digits.slice(0, width));
			if (prefix >= low && prefix <= high) return brand;
		}
	}
	return null;
}

export function luhnValid(digits) {
	if (!/^\d+$/.test(digits)) return false;
	let sum = 0;
	for (let i = 0; i < digits.length; i++) {
		let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
		if (i % 2 === 1) {
			digit *= 2;
			if (digit > 9) digit -= 9;
		}
		sum += digit;
	}
	return sum % 10 === 0;
}

function lengthsOf(brand) {
	return brand ? BRANDS[brand].lengths : ANY_LENGTHS;
}

/** Groups the digits the way they are printed on the card: 4-6-5 for amex, 4-6-4 for 14-digit Diners, else fours. */
export function formatCardNumber(value) {
	const typed = onlyDigits(value);
	const brand = brandOf(typed);
	const digits = typed.slice(0, Math.max(...lengthsOf(brand))); // extra digits cannot belong to this card
	const groups = brand === "amex" ? [4, 6, 5] : brand === "diners" && digits.length <= 14 ? [4, 6, 4] : [4, 4, 4, 4, 3];
	const parts = [];
	let start = 0;
	for (const size of groups) {
		if (start >= digits.length) break;
		parts.push(digits.slice(start, start + size));
		start += size;
	}
	return parts.join(" ");
}

export function validateCardNumber(value) {
	const digits = onlyDigits(value);
	const lengths = lengthsOf(brandOf(digits));
	const longest = Math.max(...lengths);
	if (digits.length === 0) return { error: "Enter your card number.", definite: false };
	if (digits.length > longest) return { error: "This card number is too long.", definite: true };
	if (!lengths.includes(digits.length)) return { error: "Your card number is incomplete.", definite: false };
	// A 13-digit Visa may still be on its way to 16 digits: only call it wrong
	// while typing once it has the usual full length.
	if (!luhnValid(digits)) return { error: "Your card number is invalid.", definite: digits.length >= Math.min(16, longest) };
	return { error: null, definite: false };
}

/** "1234" → "12/34"; a first digit 2–9 can only be a month 02–09, so it gets its leading zero. */
export function formatExpiry(value) {
	const text = String(value ?? "");
	const single = /^\s*(\d)\s*\/\s*(\d{0,2})/.exec(text); // "1/25" typed or pasted
	let digits = single ? `0${single[1]}${single[2]}` : onlyDigits(text);
	if (/^[2-9]/.test(digits)) digits = `0${digits}`;
	digits = digits.slice(0, 4);
	return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}

/** `now` is a parameter so the rule can be checked on any date. */
export function validateExpiry(value, now = new Date()) {
	const digits = onlyDigits(value);
	if (digits.length === 0) return { error: "Enter the expiry date.", definite: false };
	const month = Number(digits.slice(0, 2));
	if (digits.length >= 2 && (month < 1 || month > 12)) return { error: "Enter a month from 01 to 12.", definite: true };
	if (digits.length !== 4) return { error: "Enter the expiry date as MM/YY.", definite: false };
	// A card is good until the end of its expiry month.
	const year = 2000 + Number(digits.slice(2));
	const thisYear = now.getFullYear();
	const thisMonth = now.getMonth() + 1;
	if (year < thisYear || (year === thisYear && month < thisMonth)) return { error: "Your card has expired.", definite: true };
	if (year > thisYear + 20) return { error: "Check the expiry year.", definite: true };
	return { error: null, definite: false };
}

/** The expiry as the service takes it: "MMYY". */
export function expiryMMYY(value) {
	return onlyDigits(value).slice(0, 4);
}

export function formatCvc(value) {
	return onlyDigits(value).slice(0, 4);
}

/** 4 digits for amex, 3 for the others; 3 or 4 while the brand is unknown. */
export function validateCvc(value, brand) {
	const digits = onlyDigits(value);
	const allowed = brand ? [BRANDS[brand].cvc] : [3, 4];
	const message = brand === "amex" ? "The security code is 4 digits, on the front of the card." : "The security code is 3 digits, on the back of the card.";
	if (digits.length === 0) return { error: "Enter the security code.", definite: false };
	if (digits.length > Math.max(...allowed)) return { error: message, definite: true };
	if (!allowed.includes(digits.length)) return { error: message, definite: false };
	return { error: null, definite: false };
}

export function validateEmail(value) {
	const email = String(value ?? "").trim();
	if (email === "") return { error: "Enter your email address.", definite: false };
	// Deliberately loose: the service has the last word; this catches typos like a missing "@" or domain.
	if (email.length > 254 || !/^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(email)) {
		return { error: "Enter a valid email address, like name@example.com.", definite: false };
	}
	return { error: null, definite: false };
}

export function validateRequired(value, message) {
	return String(value ?? "").trim() === "" ? { error: message, definite: false } : { error: null, definite: false };
}
