// Encrypts the card number and the CVC in the browser, each on its own, as
// JWE compact serializations to the service's public key (RSA-OAEP-256 +
// A256GCM). Only the checkout service holds the private key, so the digits
// are unreadable to everything between this frame and that service: the
// gateway's logs, proxies, and the merchant's page.
import { CompactEncrypt, importJWK } from "/vendor/jose/index.js";

const ALG = "RSA-OAEP-256";
const ENC = "A256GCM";

/** Imports the public JWK of GET /api/checkout/key; its `kid` goes into every JWE header so the service knows which key to use. */
export async function importServiceKey(jwk) {
	if (!jwk || jwk.kty !== "RSA" || typeof jwk.kid !== "string" || jwk.kid === "") {
		throw new Error("The payment service's encryption key is not usable");
	}
	return { kid: jwk.kid, key: await importJWK(jwk, ALG) };
}

/** The digits (no spaces) as a JWE compact serialization; a fresh content key and IV each time. */
export function encryptDigits(serviceKey, digits) {
	return new CompactEncrypt(new TextEncoder().encode(digits))
		.setProtectedHeader({ alg: ALG, enc: ENC, kid: serviceKey.kid })
		.encrypt(serviceKey.key);
}
