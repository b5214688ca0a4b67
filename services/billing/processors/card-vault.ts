// AES-256-GCM for card numbers at rest in the sandbox processor's vault.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface SealedCard {
	iv: string;
	ciphertext: string;
	tag: string;
}

export function seal(key: Buffer, plaintext: string): SealedCard {
	const iv = randomBytes(12);
	const cipher = createCipheriv("aes-256-gcm", key, iv);
	const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
	return { iv: iv.toString("base64"), ciphertext: ciphertext.toString("base64"), tag: cipher.getAuthTag().toString("base64") };
}

export function unseal(key: Buffer, sealed: SealedCard): string {
	const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
	decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
	return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, "base64")), decipher.final()]).toString("utf8");
}
