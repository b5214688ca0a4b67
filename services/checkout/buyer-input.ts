// What the buyer and the merchant's page send besides the encrypted card:
// checked before anything is stored. Card data must never reach a database in
// plaintext, so a card number typed into the name, or put in additionalData
// by a merchant's page, is refused, as is any CVC field; and additionalData
// must be storable as it is (MongoDB refuses `$` and `.` in keys, NUL bytes,
// and very deep documents).
import cardValidator from "card-validator";

export interface InputProblem {
	field: string;
	message: string;
}

export const ADDITIONAL_DATA_LIMITS = { depth: 5, bytes: 16_384, keyLength: 100, magnitude: 1e12 } as const;

/** The names the test suite's card-data scan looks for, and the usual others. */
const CVC_NAMES = ["cvc", "cvv", "cvn", "cid", "csc", "cvc2", "cvv2", "securitycode", "cardsecuritycode", "cardverificationcode"];
const CVC_KEY = new RegExp(`^(${CVC_NAMES.join("|")})$`);

/** The same rule as a JSON Schema pattern over the key as sent (any letter case; spaces, _ and - anywhere): docs/openapi.json's. */
export const CVC_KEY_PATTERN = `^[\\s_-]*(${CVC_NAMES.map(name => [...name].map(c => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join("[\\s_-]*")).join("|")})[\\s_-]*$`;

/** 13 to 19 digits standing alone (single spaces or dashes allowed between them), as card numbers are written. */
const CARD_LIKE = /(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/g;

/** A card number anywhere in the text: a card-like run that is a valid number of a known brand (prefix, length, Luhn). */
export function holdsCardNumber(text: string): boolean {
	for (const match of text.matchAll(CARD_LIKE)) {
		if (cardValidator.number(match[0].replace(/[ -]/g, "")).isValid) return true;
	}
	return false;
}

const isCvcKey = (key: string) => CVC_KEY.test(key.toLowerCase().replace(/[\s_-]/g, ""));

/**
 * Problems with additionalData's shape, keys and values, depth first so nothing
 * deep is ever walked far. Card numbers are looked for in keys and strings;
 * numbers are kept below 10^12, so none can be one (13 digits at least) and a
 * fraction's digits are never mistaken for one.
 */
function additionalDataProblems(value: unknown, path: string, depth: number): string[] {
	if (value === null || typeof value !== "object") return leafProblems(value, path);
	if (depth > ADDITIONAL_DATA_LIMITS.depth) return [`${path} is nested more than ${ADDITIONAL_DATA_LIMITS.depth} levels deep`];
	const problems: string[] = [];
	for (const [key, inner] of Object.entries(value)) {
		const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
		const keyProblem = Array.isArray(value) ? undefined : additionalDataKeyProblem(key, path, at);
		if (keyProblem) problems.push(keyProblem);
		problems.push(...additionalDataProblems(inner, at, depth + 1));
		if (problems.length >= 10) break;
	}
	return problems;
}

/** A string or number in additionalData: no card number, and no number large enough to be one. */
function leafProblems(value: unknown, path: string): string[] {
	if (typeof value === "string") return holdsCardNumber(value) ? [`${path} must not hold a card number`] : [];
	if (typeof value === "number" && Math.abs(value) >= ADDITIONAL_DATA_LIMITS.magnitude) {
		return [`${path} must be a number below 10^12 in magnitude: send larger numbers, identifiers and millisecond timestamps as strings`];
	}
	return [];
}

/** What is wrong with one key of an object in additionalData (at `at`), if anything. */
function additionalDataKeyProblem(key: string, path: string, at: string): string | undefined {
	// Counted in characters (code points), as JSON Schema's maxLength counts them.
	const length = [...key].length;
	if (length === 0 || length > ADDITIONAL_DATA_LIMITS.keyLength)
		return `${path} keys must be 1 to ${ADDITIONAL_DATA_LIMITS.keyLength} characters`;
	if (key.startsWith("$") || key.includes(".") || key.includes("\0"))
		return `${path} keys must not start with $ or hold . or NUL: ${JSON.stringify(key).slice(0, 40)}`;
	if (isCvcKey(key)) return `${at}: a CVC must never be sent outside the encrypted card fields`;
	if (holdsCardNumber(key)) return `${path} keys must not hold a card number`;
	return undefined;
}

/** Every reason to refuse the buyer's fields and additionalData, before the card is even decrypted. */
export function buyerInputProblems(input: {
	email: string;
	name: string;
	lastName?: string;
	promotionCode?: string;
	additionalData?: Record<string, unknown>;
}): InputProblem[] {
	const problems: InputProblem[] = [];
	for (const field of ["email", "name", "lastName", "promotionCode"] as const) {
		const value = input[field];
		if (typeof value === "string" && holdsCardNumber(value)) problems.push({ field, message: `${field} must not hold a card number` });
	}
	if (input.additionalData !== undefined) {
		const shape = additionalDataProblems(input.additionalData, "additionalData", 1);
		problems.push(...shape.map(message => ({ field: "additionalData", message })));
		if (shape.length === 0) {
			const json = JSON.stringify(input.additionalData);
			if (Buffer.byteLength(json) > ADDITIONAL_DATA_LIMITS.bytes) {
				problems.push({
					field: "additionalData",
					message: `additionalData must be at most ${ADDITIONAL_DATA_LIMITS.bytes / 1024} kB as JSON`,
				});
			}
		}
	}
	return problems;
}
