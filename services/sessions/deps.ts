// What the sessions service's domain functions get: its database, the clock, and billing's answer on card updates.
import type { BillingActions } from "../../shared/contracts/billing";
import type { SessionsDb } from "./models";

export interface SessionsDeps {
	db: SessionsDb;
	now: () => Date;
	/** Whether the account's customer may get a card update session (billing.cardUpdateTarget). */
	cardUpdateTarget(accountId: number, customerId: number): Promise<BillingActions["billing.cardUpdateTarget"]["result"]>;
}
