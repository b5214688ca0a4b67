// What a payments node builds at start: the master keys (VAULT_KEY,
// CREDENTIALS_KEY; refused when missing), the vault, the connectors, the
// ledger and the deps its actions get; and, after a key rotation, the
// background re-wrap of what was sealed under a previous key.
import type { Logger, ServiceBroker } from "moleculer";
import { call } from "../../shared/call";
import { buyerBaseUrl, config } from "../../shared/config";
import { adyenChallenges } from "./adyen-returns";
import { createAdyenConnector } from "./connectors/adyen/adyen-connector";
import type { AdyenCardKeys } from "./connectors/adyen/client";
import { createSandboxConnector } from "./connectors/sandbox/sandbox-connector";
import type { StripeCardKeys } from "./connectors/stripe/client";
import { createStripeConnector } from "./connectors/stripe/stripe-connector";
import type { PaymentsDeps } from "./deps";
import { createLedger } from "./ledger/ledger";
import type { PaymentsDb } from "./models";
import { createProcessors } from "./processors";
import { type CredentialKeys, loadCredentialKeys, rewrapCredentials, secretKeyOf, webhookSecretOf } from "./vault/credentials";
import { masterKeys } from "./vault/sealing";
import { createVault } from "./vault/vault";

const UNSEALS = "payments.vault.unseals";

/**
 * What a connector made of a card on a MID's processor account (Stripe: customer and payment method; Adyen: the stored
 * card), in gateway_cards under `<connector>:<midId>:<cardToken>`.
 */
function processorCardStore<T extends object>(db: PaymentsDb, now: () => Date, connector: "stripe" | "adyen") {
	const key = (midId: number, cardToken: string) => `${connector}:${midId}:${cardToken}`;
	return {
		async get(midId: number, cardToken: string): Promise<T | null> {
			const doc = await db.processorCards.findById(key(midId, cardToken)).lean();
			return doc ? (doc.value as unknown as T) : null;
		},
		async set(midId: number, cardToken: string, value: T): Promise<void> {
			await db.processorCards.updateOne(
				{ _id: key(midId, cardToken) },
				{ $set: { value: { ...value } }, $setOnInsert: { createdAt: now() } },
				{ upsert: true },
			);
		},
	};
}

const fromBase64 = (key: string) => Buffer.from(key, "base64");

/** The master keys from the configuration: refused at start when missing, so no card or processor key is ever stored unsealed. */
async function masterKeysOf() {
	const { vaultKey, vaultPreviousKeys, credentialsPrivateKey, credentialsKey, credentialsPreviousKeys } = config();
	if (!vaultKey) throw new Error("VAULT_KEY is not set: the payments service needs it to seal card numbers (npm start generates one)");
	if (!credentialsPrivateKey || !credentialsKey)
		throw new Error(
			"CREDENTIALS_PRIVATE_KEY and CREDENTIALS_KEY must be set: the payments service seals MIDs' processor keys with them (npm start generates them)",
		);
	return {
		vault: masterKeys(fromBase64(vaultKey), vaultPreviousKeys.map(fromBase64)),
		credentials: await loadCredentialKeys(
			credentialsPrivateKey,
			masterKeys(fromBase64(credentialsKey), credentialsPreviousKeys.map(fromBase64)),
		),
	};
}

/** Counts each card number unsealed for a payment operation (payments.vault.unseals), when metrics are on. */
function unsealCounter(broker: ServiceBroker): () => void {
	const metrics = broker.isMetricsEnabled() ? broker.metrics : null;
	if (metrics && !metrics.getMetric(UNSEALS))
		metrics.register({ type: "counter", name: UNSEALS, description: "Card numbers unsealed from the vault for a payment operation" });
	return () => metrics?.increment(UNSEALS);
}

function stripeConnector(db: PaymentsDb, now: () => Date) {
	const { stripeApiBase, stripeApiDialect, publicBaseUrl } = config();
	return createStripeConnector({
		apiBase: stripeApiBase,
		dialect: stripeApiDialect,
		keyStore: processorCardStore<StripeCardKeys>(db, now, "stripe"),
		// The issuer's 3-D Secure page returns the buyer into the card frame (docs/authentication.md).
		returnUrl: publicBaseUrl ? `${publicBaseUrl}/checkout/challenge-return.html` : undefined,
	});
}

function adyenConnector(db: PaymentsDb, now: () => Date) {
	const settings = config();
	return createAdyenConnector({
		apiBase: settings.adyenApiBase,
		cards: processorCardStore<AdyenCardKeys>(db, now, "adyen"),
		outcomes: {
			async get({ accountId, merchantAccount }, reference, event) {
				const doc = await db.adyenOutcomes.findById(`${accountId}:${merchantAccount}:${reference}:${event}`).lean();
				return doc && "success" in doc ? doc : null;
			},
			...adyenChallenges(db, now),
		},
		// The issuer's page returns the buyer to the payment's return route, which sends it on into the card frame.
		buyerBaseUrl: buyerBaseUrl(settings),
	});
}

/** After a key rotation, what was sealed under a previous key is re-wrapped in the background. */
function rewrapInBackground(db: PaymentsDb, credentialKeys: CredentialKeys, vault: PaymentsDeps["vault"], logger: Logger): void {
	const { vaultPreviousKeys, credentialsPreviousKeys } = config();
	if (credentialsPreviousKeys.length > 0)
		void rewrapCredentials(db, credentialKeys)
			.then(
				n =>
					n > 0 &&
					logger.info(`Credentials: re-wrapped the processor keys and webhook secrets of ${n} MIDs under the current CREDENTIALS_KEY`),
			)
			.catch(err => logger.warn("Credentials re-wrap stopped:", (err as Error).message));
	if (vaultPreviousKeys.length > 0)
		void vault
			.rewrapAll()
			.then(n => n > 0 && logger.info(`Vault: re-wrapped ${n} cards under the current master key`))
			.catch(err => logger.warn("Vault re-wrap stopped:", (err as Error).message));
}

export async function startPayments(
	broker: ServiceBroker,
	db: PaymentsDb,
	logger: Logger,
): Promise<{ deps: PaymentsDeps; credentialKeys: CredentialKeys }> {
	const keys = await masterKeysOf();
	const now = () => new Date();
	const vault = createVault(db, keys.vault, unsealCounter(broker), now);
	const sandbox = createSandboxConnector(db, vault, now);
	await sandbox.notices.initialize(now());
	const stripe = stripeConnector(db, now);
	const adyen = adyenConnector(db, now);
	const deps: PaymentsDeps = {
		db,
		vault,
		sandbox,
		stripe,
		webhookSecretOf: midId => webhookSecretOf(db, keys.credentials, midId),
		ledger: createLedger(db, now, err => logger.error("A processor call failed instead of answering:", err.message)),
		processors: createProcessors({
			midProcessor: midId => call(broker, "accounts.merchantAccountProcessor", { midId }),
			secretKeyOf: midId => secretKeyOf(db, keys.credentials, midId),
			sandbox,
			stripe,
			adyen,
		}),
		now,
	};
	rewrapInBackground(db, keys.credentials, vault, logger);
	return { deps, credentialKeys: keys.credentials };
}
