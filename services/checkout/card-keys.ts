// The RSA key ring that decrypts card data. The browser encrypts to the
// current key (served as a JWK); after a rotation the previous key keeps
// decrypting until its grace period ends, so forms opened before the
// rotation still go through. The kid is the key's RFC 7638 thumbprint, the
// same on every node.
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, type JWK } from "jose";

export interface CardKeyRing {
	publicJwk: JWK;
	/** The private key for a kid, while it is accepted. */
	find(kid: string | undefined, now: Date): KeyObject | undefined;
}

interface RingEntry {
	kid: string;
	privateKey: KeyObject;
	acceptUntil: Date | null;
}

async function entry(pem: string, acceptUntil: Date | null): Promise<RingEntry & { publicJwk: JWK }> {
	const privateKey = createPrivateKey(pem);
	const publicJwk = await exportJWK(createPublicKey(privateKey));
	const kid = await calculateJwkThumbprint(publicJwk);
	return { kid, privateKey, acceptUntil, publicJwk: { ...publicJwk, kid, alg: "RSA-OAEP-256", use: "enc" } };
}

export async function loadCardKeyRing(keys: { current: string; previous?: string; previousUntil?: Date }): Promise<CardKeyRing> {
	const current = await entry(keys.current, null);
	const entries: RingEntry[] = [current];
	if (keys.previous) entries.push(await entry(keys.previous, keys.previousUntil ?? new Date(0)));
	return {
		publicJwk: current.publicJwk,
		find(kid, now) {
			const found = entries.find(e => e.kid === kid);
			if (!found || (found.acceptUntil && found.acceptUntil.getTime() <= now.getTime())) return undefined;
			return found.privateKey;
		},
	};
}
