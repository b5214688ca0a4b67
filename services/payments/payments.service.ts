// The card vault and the gateways. After the checkout decrypts a card, this
// is the only service that holds its number: it seals it (vault.ts), and
// every gateway operation goes through its ledger (ledger.ts) to the MID's
// connector (processors.ts). Billing and refunds see card tokens only.
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { domainAction, errorAsValue, idempotent } from "../../shared/action";
import { call } from "../../shared/call";
import { config } from "../../shared/config";
import { dbMixin } from "../../shared/db.mixin";
import { createSandboxConnector } from "./connectors/sandbox/sandbox-connector";
import type { PaymentsDeps } from "./deps";
import { createLedger } from "./ledger";
import { createPaymentsModels, type PaymentsDb } from "./models";
import { authorize, capture, charge, lookup, refund, saveCard, voidHold } from "./operations";
import { createProcessors } from "./processors";
import { listSandboxOperations } from "./sandbox-operations";
import { schemas } from "./schemas";
import { masterKeys } from "./sealing";
import { createVault } from "./vault";

interface Locals {
	db: PaymentsDb;
	deps: PaymentsDeps;
}

const UNSEALS = "payments.vault.unseals";

const PaymentsService: ServiceSchema<ServiceSettingSchema, Record<string, never>, Locals> = {
	name: "payments",
	mixins: [dbMixin("payments", createPaymentsModels)],

	actions: {
		saveCard: domainAction(schemas.saveCard, saveCard, errorAsValue),
		charge: domainAction(schemas.charge, charge),
		authorize: domainAction(schemas.authorize, authorize),
		capture: domainAction(schemas.capture, capture),
		void: domainAction(schemas.void, voidHold),
		refund: domainAction(schemas.refund, refund),
		// A read, and never moves money: safe to retry.
		lookup: idempotent(domainAction(schemas.lookup, lookup)),
		sandboxOperations: idempotent(domainAction(schemas.sandboxOperations, listSandboxOperations)),
	},

	async started() {
		const { vaultKey, vaultPreviousKeys } = config();
		if (!vaultKey) throw new Error("VAULT_KEY is not set: the payments service needs it to seal card numbers (npm start generates one)");
		const keys = masterKeys(
			Buffer.from(vaultKey, "base64"),
			vaultPreviousKeys.map(k => Buffer.from(k, "base64")),
		);
		const metrics = this.broker.isMetricsEnabled() ? this.broker.metrics : null;
		if (metrics && !metrics.getMetric(UNSEALS))
			metrics.register({ type: "counter", name: UNSEALS, description: "Card numbers unsealed from the vault for a gateway operation" });
		const now = () => new Date();
		const vault = createVault(this.db, keys, () => metrics?.increment(UNSEALS), now);
		this.deps = {
			db: this.db,
			vault,
			ledger: createLedger(this.db, now),
			processors: createProcessors({
				midProcessor: midId => call(this.broker, "accounts.merchantAccountProcessor", { midId }),
				sandbox: createSandboxConnector(this.db, vault, now),
			}),
			now,
		};
		// A rotated master key: the cards sealed under a previous one are re-wrapped in the background.
		if (vaultPreviousKeys.length > 0)
			void vault
				.rewrapAll()
				.then(n => n > 0 && this.logger.info(`Vault: re-wrapped ${n} cards under the current master key`))
				.catch(err => this.logger.warn("Vault re-wrap stopped:", (err as Error).message));
	},
};

export default PaymentsService;
