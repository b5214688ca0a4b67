// What the payments service's operations get: its database, the card vault, the ledger and the processors' connectors.
import type { SandboxConnector } from "./connectors/sandbox/sandbox-connector";
import type { StripeConnector } from "./connectors/stripe/stripe-connector";
import type { Ledger } from "./ledger/ledger";
import type { PaymentsDb } from "./models";
import type { Processors } from "./processors";
import type { Vault } from "./vault/vault";

export interface PaymentsDeps {
	db: PaymentsDb;
	vault: Vault;
	ledger: Ledger;
	processors: Processors;
	/** The sandbox's connector, for its challenge page. */
	sandbox: SandboxConnector;
	/** The Stripe connector, for the events Stripe sends (stripe-events.ts). */
	stripe: StripeConnector;
	/** The MID's webhook signing secret, unsealed to verify one event; null when it has none (vault/credentials.ts). */
	webhookSecretOf(midId: number): Promise<string | null>;
	now: () => Date;
}
