// The card vault and the gateways. After the checkout decrypts a card, this
// is the only service that holds its number: it seals it (vault.ts), and
// every gateway operation goes through its ledger (ledger.ts) to the MID's
// connector (processors.ts). Billing and refunds see card tokens only.
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import { config } from "../../shared/config";
import { dbMixin } from "../../shared/db.mixin";
import { createSandboxConnector } from "./connectors/sandbox/sandbox-connector";
import { createStripeConnector, type StripeCardKeys, type StripeKeyStore } from "./connectors/stripe/stripe-connector";
import { type CredentialKeys, loadCredentialKeys, rewrapCredentials, secretKeyOf, storeCredentials, webhookSecretOf } from "./credentials";
import type { PaymentsDeps } from "./deps";
import { sandboxNotices, sandboxNoticesDone, submitDisputeEvidence } from "./disputes";
import { createLedger } from "./ledger";
import { createPaymentsModels, type PaymentsDb } from "./models";
import { afterChallenge, capture, charge, chooseSandboxChallenge, firstPayment, lookup, refund, saveCard, voidHold } from "./operations";
import { createProcessors } from "./processors";
import { listSandboxOperations } from "./sandbox-operations";
import { schemas } from "./schemas";
import { masterKeys } from "./sealing";
import { stripeEvent } from "./stripe-events";
import { createVault } from "./vault";

interface Locals {
	db: PaymentsDb;
	deps: PaymentsDeps;
	credentialKeys: CredentialKeys;
}

const UNSEALS = "payments.vault.unseals";

/** What the Stripe connector made of a card on a MID's Stripe account, in gateway_cards under `stripe:<midId>:<cardToken>`. */
function stripeKeyStore(db: PaymentsDb, now: () => Date): StripeKeyStore {
	const key = (midId: number, cardToken: string) => `stripe:${midId}:${cardToken}`;
	return {
		async get(midId, cardToken) {
			const doc = await db.gatewayCards.findById(key(midId, cardToken)).lean();
			return doc ? (doc.value as unknown as StripeCardKeys) : null;
		},
		async set(midId, cardToken, value) {
			await db.gatewayCards.updateOne(
				{ _id: key(midId, cardToken) },
				{ $set: { value: { ...value } }, $setOnInsert: { createdAt: now() } },
				{ upsert: true },
			);
		},
	};
}

const PaymentsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "payments",
	mixins: [dbMixin("payments", createPaymentsModels)],

	actions: {
		saveCard: domainAction(schemas.saveCard, saveCard, errorAsValue),
		charge: domainAction(schemas.charge, charge),
		firstPayment: domainAction(schemas.firstPayment, firstPayment),
		// Reads the gateway and records once: safe to retry.
		afterChallenge: idempotent(domainAction(schemas.lookup, afterChallenge)),
		sandboxChallenge: domainAction(schemas.sandboxChallenge, chooseSandboxChallenge),
		capture: domainAction(schemas.capture, capture),
		void: domainAction(schemas.void, voidHold),
		refund: domainAction(schemas.refund, refund),
		// A read, and never moves money: safe to retry.
		lookup: idempotent(domainAction(schemas.lookup, lookup)),
		sandboxOperations: idempotent(domainAction(schemas.sandboxOperations, listSandboxOperations)),
		// Reads; billing names what it applied in sandboxNoticesDone, which is safe to repeat.
		sandboxNotices: idempotent(domainAction(schemas.sandboxNotices, sandboxNotices)),
		sandboxNoticesDone: idempotent(domainAction(schemas.sandboxNoticesDone, sandboxNoticesDone)),
		submitDisputeEvidence: domainAction(schemas.submitDisputeEvidence, submitDisputeEvidence, errorAsValue),
		// Verifies and reads; writes nothing: safe to retry.
		stripeEvent: idempotent(domainAction(schemas.stripeEvent, stripeEvent, errorAsValue)),
		// What the gateway seals a MID's gateway key to before it crosses the transporter (credentials.ts).
		credentialsKey: {
			params: schemas.none,
			handler() {
				return { publicJwk: this.credentialKeys.publicJwk };
			},
		},
		storeCredentials: {
			params: schemas.storeCredentials,
			async handler(ctx: Context<{ midId: number; type: "stripe"; sealedSecretKey: string; sealedWebhookSecret?: string }>) {
				return errorAsValue(await storeCredentials(this.db, this.credentialKeys, ctx.params, new Date()));
			},
		},
	},

	async started() {
		const {
			vaultKey,
			vaultPreviousKeys,
			credentialsPrivateKey,
			credentialsKey,
			credentialsPreviousKeys,
			stripeApiBase,
			stripeApiDialect,
			publicBaseUrl,
		} = config();
		if (!vaultKey) throw new Error("VAULT_KEY is not set: the payments service needs it to seal card numbers (npm start generates one)");
		if (!credentialsPrivateKey || !credentialsKey)
			throw new Error(
				"CREDENTIALS_PRIVATE_KEY and CREDENTIALS_KEY must be set: the payments service seals MIDs' gateway keys with them (npm start generates them)",
			);
		const fromBase64 = (k: string) => Buffer.from(k, "base64");
		this.credentialKeys = await loadCredentialKeys(
			credentialsPrivateKey,
			masterKeys(fromBase64(credentialsKey), credentialsPreviousKeys.map(fromBase64)),
		);
		const keys = masterKeys(
			Buffer.from(vaultKey, "base64"),
			vaultPreviousKeys.map(k => Buffer.from(k, "base64")),
		);
		const metrics = this.broker.isMetricsEnabled() ? this.broker.metrics : null;
		if (metrics && !metrics.getMetric(UNSEALS))
			metrics.register({ type: "counter", name: UNSEALS, description: "Card numbers unsealed from the vault for a gateway operation" });
		const now = () => new Date();
		const vault = createVault(this.db, keys, () => metrics?.increment(UNSEALS), now);
		const sandbox = createSandboxConnector(this.db, vault, now);
		await sandbox.notices.initialize(now());
		const stripe = createStripeConnector({
			apiBase: stripeApiBase,
			dialect: stripeApiDialect,
			keyStore: stripeKeyStore(this.db, now),
			// The issuer's 3-D Secure page returns the buyer into the card frame (docs/authentication.md).
			returnUrl: publicBaseUrl ? `${publicBaseUrl}/checkout/challenge-return.html` : undefined,
		});
		this.deps = {
			db: this.db,
			vault,
			sandbox,
			stripe,
			webhookSecretOf: midId => webhookSecretOf(this.db, this.credentialKeys, midId),
			ledger: createLedger(this.db, now, err => this.logger.error("A gateway call failed instead of answering:", err.message)),
			processors: createProcessors({
				midProcessor: midId => call(this.broker, "accounts.merchantAccountProcessor", { midId }),
				secretKeyOf: midId => secretKeyOf(this.db, this.credentialKeys, midId),
				sandbox,
				stripe,
			}),
			now,
		};
		if (credentialsPreviousKeys.length > 0)
			void rewrapCredentials(this.db, this.credentialKeys)
				.then(
					n =>
						n > 0 &&
						this.logger.info(`Credentials: re-wrapped the gateway keys and webhook secrets of ${n} MIDs under the current CREDENTIALS_KEY`),
				)
				.catch(err => this.logger.warn("Credentials re-wrap stopped:", (err as Error).message));
		// A rotated master key: the cards sealed under a previous one are re-wrapped in the background.
		if (vaultPreviousKeys.length > 0)
			void vault
				.rewrapAll()
				.then(n => n > 0 && this.logger.info(`Vault: re-wrapped ${n} cards under the current master key`))
				.catch(err => this.logger.warn("Vault re-wrap stopped:", (err as Error).message));
	},
};

export default PaymentsService;
