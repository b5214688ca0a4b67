// A MID's gateway key (Stripe's secret key), write-only. The gateway seals it
// to this service's RSA key (JWE) the moment it arrives, so it never crosses
// the transporter in clear; this service keeps it envelope-sealed under
// CREDENTIALS_KEY (sealing.ts), and unseals it only to call the gateway.
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, compactDecrypt, exportJWK, type JWK } from "jose";
import { CredentialsError, GATEWAY_KEY_PATTERN } from "../../shared/contracts/payments";
import type { PaymentsDb } from "./models";
import { type MasterKeys, rewrap, sealEnvelope, unsealEnvelope } from "./sealing";

const GATEWAY_KEY = new RegExp(GATEWAY_KEY_PATTERN);

export interface CredentialKeys {
	/** What the gateway seals a MID's key to (RSA-OAEP-256, A256GCM). */
	publicJwk: JWK;
	privateKey: KeyObject;
	atRest: MasterKeys;
}

export async function loadCredentialKeys(privateKeyPem: string, atRest: MasterKeys): Promise<CredentialKeys> {
	const privateKey = createPrivateKey(privateKeyPem);
	const publicJwk = await exportJWK(createPublicKey(privateKey));
	const kid = await calculateJwkThumbprint(publicJwk);
	return { publicJwk: { ...publicJwk, kid, alg: "RSA-OAEP-256", use: "enc" }, privateKey, atRest };
}

/** Keeps the MID's key (replacing any earlier one); stored before the MID names it, so a MID never names a missing key. */
export async function storeCredentials(
	db: PaymentsDb,
	keys: CredentialKeys,
	input: { midId: number; type: "stripe"; sealedSecretKey: string },
	now: Date,
): Promise<{ midId: number } | CredentialsError> {
	let secretKey: string;
	try {
		const { plaintext, protectedHeader } = await compactDecrypt(input.sealedSecretKey, keys.privateKey);
		if (protectedHeader.kid !== keys.publicJwk.kid) return CredentialsError.Unreadable;
		secretKey = new TextDecoder().decode(plaintext);
	} catch {
		return CredentialsError.Unreadable;
	}
	if (!GATEWAY_KEY.test(secretKey)) return CredentialsError.Unreadable;
	await db.credentials.updateOne(
		{ _id: input.midId },
		{ $set: { type: input.type, secret: sealEnvelope(keys.atRest, secretKey), updatedAt: now } },
		{ upsert: true },
	);
	return { midId: input.midId };
}

/** The MID's gateway key, unsealed for one call; null when none is stored. */
export async function secretKeyOf(db: PaymentsDb, keys: CredentialKeys, midId: number): Promise<string | null> {
	const doc = await db.credentials.findById(midId).lean();
	return doc ? unsealEnvelope(keys.atRest, doc.secret) : null;
}

/** After a rotation of CREDENTIALS_KEY: every key sealed under a previous one is re-wrapped (few documents: one per MID). */
export async function rewrapCredentials(db: PaymentsDb, keys: CredentialKeys): Promise<number> {
	let rewrapped = 0;
	for (const doc of await db.credentials.find({}, { secret: 1 }).lean()) {
		if (doc.secret.kid === keys.atRest.current.kid) continue;
		const done = await db.credentials.updateOne(
			{ _id: doc._id, "secret.kid": doc.secret.kid },
			{ $set: { secret: rewrap(keys.atRest, doc.secret) } },
		);
		rewrapped += done.modifiedCount;
	}
	return rewrapped;
}
