// AES-256-GCM, and envelope encryption with it: a secret is sealed under a
// data key of its own, and the data key is sealed (wrapped) under a master key
// named by its key id. Rotating the master key re-wraps data keys only.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export interface Sealed {
	iv: string;
	ciphertext: string;
	tag: string;
}

export function seal(key: Buffer, plaintext: Buffer | string): Sealed {
	const iv = randomBytes(12);
	const cipher = createCipheriv("aes-256-gcm", key, iv);
	const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
	return { iv: iv.toString("base64"), ciphertext: ciphertext.toString("base64"), tag: cipher.getAuthTag().toString("base64") };
}

export function unseal(key: Buffer, sealed: Sealed): Buffer {
	const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
	decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
	return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, "base64")), decipher.final()]);
}

/** A secret sealed under its own data key, which is wrapped under the master key `kid`. */
export interface Envelope {
	kid: string;
	wrappedKey: Sealed;
	secret: Sealed;
}

/** A key's id: not secret, and the same wherever the key is configured. */
export function keyId(key: Buffer): string {
	return createHash("sha256").update("key id\0").update(key).digest("hex").slice(0, 12);
}

/** The master keys: the current one seals; every one (current and previous) unseals, by key id. */
export interface MasterKeys {
	current: { kid: string; key: Buffer };
	byKid: Map<string, Buffer>;
}

export function masterKeys(current: Buffer, previous: Buffer[] = []): MasterKeys {
	const all = [current, ...previous];
	return { current: { kid: keyId(current), key: current }, byKid: new Map(all.map(key => [keyId(key), key])) };
}

export function sealEnvelope(keys: MasterKeys, plaintext: string): Envelope {
	const dataKey = randomBytes(32);
	try {
		return { kid: keys.current.kid, wrappedKey: seal(keys.current.key, dataKey), secret: seal(dataKey, plaintext) };
	} finally {
		dataKey.fill(0);
	}
}

function masterKey(keys: MasterKeys, kid: string): Buffer {
	const key = keys.byKid.get(kid);
	if (!key) throw new Error(`No master key with id ${kid} is configured (VAULT_PREVIOUS_KEYS must keep it until its re-wrap ends)`);
	return key;
}

export function unsealEnvelope(keys: MasterKeys, envelope: Envelope): string {
	const dataKey = unseal(masterKey(keys, envelope.kid), envelope.wrappedKey);
	try {
		return unseal(dataKey, envelope.secret).toString("utf8");
	} finally {
		dataKey.fill(0);
	}
}

/** The same secret, its data key wrapped under the current master key: the secret itself is not decrypted. */
export function rewrap(keys: MasterKeys, envelope: Envelope): Envelope {
	if (envelope.kid === keys.current.kid) return envelope;
	const dataKey = unseal(masterKey(keys, envelope.kid), envelope.wrappedKey);
	try {
		return { kid: keys.current.kid, wrappedKey: seal(keys.current.key, dataKey), secret: envelope.secret };
	} finally {
		dataKey.fill(0);
	}
}
