import type { SandboxConnector } from "./connectors/sandbox/sandbox-connector";
import type { Ledger } from "./ledger";
import type { PaymentsDb } from "./models";
import type { Processors } from "./processors";
import type { Vault } from "./vault";

export interface PaymentsDeps {
	db: PaymentsDb;
	vault: Vault;
	ledger: Ledger;
	processors: Processors;
	/** The sandbox gateway, for its challenge page. */
	sandbox: SandboxConnector;
	now: () => Date;
}
