// A MID's processor key (Stripe's secret key, Adyen's API key) and its webhook
// signing secret (Stripe's whsec_…, Adyen's HMAC key), write-only. The gateway seals them to this service's RSA key
// (JWE) the moment they arrive, so they never cross the transporter in clear;
// this service keeps them envelope-sealed under CREDENTIALS_KEY (sealing.ts),
// and unseals one only to call the processor or to verify an event it sent.
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, compactDecrypt, exportJWK, type JWK } from "jose";
import {
	ADYEN_API_KEY_PATTERN,
	ADYEN_HMAC_KEY_PATTERN,
	CredentialsError,
	type KeyedProcessor,
	PROCESSOR_KEY_PATTERN,
	WEBHOOK_SECRET_PATTERN,
} from "../../../shared/contracts/payments";
import type { PaymentsDb } from "../models";
import { type MasterKeys, rewrap, sealEnvelope, unsealEnvelope } from "./sealing";

/** What each processor's key and webhook secret look like. */
const PATTERNS: Record<KeyedProcessor, { key: RegExp; webhookSecret: RegExp }> = {
	stripe: { key: new RegExp(PROCESSOR_KEY_PATTERN), webhookSecret: new RegExp(WEBHOOK_SECRET_PATTERN) },
	adyen: { key: new RegExp(ADYEN_API_KEY_PATTERN), webhookSecret: new RegExp(ADYEN_HMAC_KEY_PATTERN) },
};

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

/** The JWE's content, if it is sealed to our current key and reads as `pattern`; null otherwise. */
async function unsealed(keys: CredentialKeys, jwe: string, pattern: RegExp): Promise<string | null> {
	try {
		const { plaintext, protectedHeader } = await compactDecrypt(jwe, keys.privateKey);
		if (protectedHeader.kid !== keys.publicJwk.kid) return null;
		const text = new TextDecoder().decode(plaintext);
		return pattern.test(text) ? text : null;
	} catch {
		return null;
	}
}

/**
 * Keeps the MID's key and webhook secret, replacing both earlier ones (a processor given without a secret leaves the
 * MID none); stored before the MID names them, so a MID never names a missing key.
 */
export async function storeCredentials(
	db: PaymentsDb,
	keys: CredentialKeys,
	input: { midId: number; type: KeyedProcessor; sealedSecretKey: string; sealedWebhookSecret?: string },
	now: Date,
): Promise<{ midId: number } | CredentialsError> {
	const patterns = PATTERNS[input.type];
	const secretKey = await unsealed(keys, input.sealedSecretKey, patterns.key);
	if (secretKey === null) return CredentialsError.Unreadable;
	const webhookSecret =
		input.sealedWebhookSecret === undefined ? null : await unsealed(keys, input.sealedWebhookSecret, patterns.webhookSecret);
	if (input.sealedWebhookSecret !== undefined && webhookSecret === null) return CredentialsError.Unreadable;
	await db.credentials.updateOne(
		{ _id: input.midId },
		{
			$set: {
				type: input.type,
				secret: sealEnvelope(keys.atRest, secretKey),
				webhookSecret: webhookSecret === null ? null : sealEnvelope(keys.atRest, webhookSecret),
				updatedAt: now,
			},
		},
		{ upsert: true },
	);
	return { midId: input.midId };
}

/** The MID's processor key, unsealed for one call; null when none is stored. */
export async function secretKeyOf(db: PaymentsDb, keys: CredentialKeys, midId: number): Promise<string | null> {
	const doc = await db.credentials.findById(midId).lean();
	return doc ? unsealEnvelope(keys.atRest, doc.secret) : null;
}

/** The MID's webhook signing secret, unsealed to verify one event; null when none is stored. */
export async function webhookSecretOf(db: PaymentsDb, keys: CredentialKeys, midId: number): Promise<string | null> {
	const doc = await db.credentials.findById(midId).lean();
	return doc?.webhookSecret ? unsealEnvelope(keys.atRest, doc.webhookSecret) : null;
}

/**
 * After a rotation of CREDENTIALS_KEY: every key and webhook secret sealed under a previous one is re-wrapped (few
 * documents: one per MID). The compare-and-set names the key ids read, so a MID given new credentials meanwhile keeps them.
 */
export async function rewrapCredentials(db: PaymentsDb, keys: CredentialKeys): Promise<number> {
	const current = keys.atRest.current.kid;
	let rewrapped = 0;
	for (const doc of await db.credentials.find({}, { secret: 1, webhookSecret: 1 }).lean()) {
		const webhookSecret = doc.webhookSecret ?? null;
		if (doc.secret.kid === current && (webhookSecret === null || webhookSecret.kid === current)) continue;
		const done = await db.credentials.updateOne(
			{ _id: doc._id, "secret.kid": doc.secret.kid, ...(webhookSecret ? { "webhookSecret.kid": webhookSecret.kid } : {}) },
			{
				$set: { secret: rewrap(keys.atRest, doc.secret), ...(webhookSecret ? { webhookSecret: rewrap(keys.atRest, webhookSecret) } : {}) },
			},
		);
		rewrapped += done.modifiedCount;
	}
	return rewrapped;
}
