// Card data in the checkout: decrypted from the browser's JWEs, inspected,
// fingerprinted, and never logged or stored here (billing's processor vaults
// the number; the CVC is dropped after the first payment).
import { createHmac } from "node:crypto";
import cardValidator from "card-validator";
import { compactDecrypt, decodeProtectedHeader } from "jose";
import { isCardExpired } from "../../shared/card-expiry";
import type { CardKeyRing } from "./card-keys";

export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "jcb" | "diners" | "maestro" | "unionpay";

/** card-validator's names for the brands we route. */
const BRANDS: Record<string, CardBrand> = {
	visa: "visa",
	mastercard: "mastercard",
	"american-express": "amex",
	discover: "discover",
	jcb: "jcb",
	"diners-club": "diners",
	maestro: "maestro",
	unionpay: "unionpay",
};

/** Decrypts one JWE to its digits, or null if it is not one of ours (wrong alg, unknown kid, tampered, not digits). */
export async function decryptDigits(ring: CardKeyRing, jwe: string, now: Date, maxDigits: number): Promise<string | null> {
	try {
		const key = ring.find(decodeProtectedHeader(jwe).kid, now);
		if (!key) return null;
		const { plaintext } = await compactDecrypt(jwe, key, {
			keyManagementAlgorithms: ["RSA-OAEP-256"],
			contentEncryptionAlgorithms: ["A256GCM"],
		});
		const digits = new TextDecoder().decode(plaintext);
		return new RegExp(`^[0-9]{3,${maxDigits}}$`).test(digits) ? digits : null;
	} catch {
		return null;
	}
}

export function cardBrand(pan: string): CardBrand | null {
	const type = cardValidator.number(pan).card?.type;
	return (type && BRANDS[type]) || null;
}

/** Number (Luhn, length), CVC length for the brand, and expiry: what can be checked before asking the processor. */
export function passesLocalChecks(pan: string, cvc: string, expiry: string, now: Date): boolean {
	const number = cardValidator.number(pan);
	return number.isValid && cvc.length === (number.card?.code.size ?? 3) && !isCardExpired(expiry, now);
}

/** A keyed hash identifying the card for the duplicate check without storing its number. */
export function cardFingerprint(key: Buffer, pan: string): string {
	return createHmac("sha256", key).update(pan).digest("hex");
}
