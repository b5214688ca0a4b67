// Encrypts the card number and the CVC in the browser, each on its own, as
// JWE compact serializations to the service's public key (RSA-OAEP-256 +
// A256GCM). Only the checkout service holds the private key, so nothing else
// can read the digits: not the merchant's page, the network, nor the gateway
// and its logs.

// Loading starts now but nothing waits for it until the buyer pays: jose is
// about eighty small modules, and the form must react to typing before they
// are all in. The catch only keeps a failed load from being reported as
// unhandled here; paying still sees the failure.
const jose = import("/vendor/jose/index.js");
jose.catch(() => {});

const ALG = "RSA-OAEP-256";
const ENC = "A256GCM";

/** Imports the public JWK of GET /api/checkout/key; its `kid` goes into every JWE header so the service knows which key to use. */
export async function importServiceKey(jwk) {
	if (!jwk || jwk.kty !== "RSA" || typeof jwk.kid !== "string" || jwk.kid === "") {
		throw new Error("The payment service's encryption key is not usable");
	}
	const { importJWK } = await jose;
	return { kid: jwk.kid, key: await importJWK(jwk, ALG) };
}

/** The digits (no spaces) as a JWE compact serialization; a fresh content key and IV each time. */
export async function encryptDigits(serviceKey, digits) {
	const { CompactEncrypt } = await jose;
	return new CompactEncrypt(new TextEncoder().encode(digits))
		.setProtectedHeader({ alg: ALG, enc: ENC, kid: serviceKey.kid })
		.encrypt(serviceKey.key);
}
