// What the metrics service's domain functions get: its collections, its
// counters, the accounts' now, and the accounts service's products and MIDs
// (a read filtered by one of them checks it is the account's).

import type { AccountNow } from "../../shared/account-now";
import type { MerchantAccountView, ProductRecord } from "../../shared/contracts/accounts";
import type { MetricsCounters } from "./counters";
import type { MetricsDb } from "./models";

export interface MetricsDeps {
	db: MetricsDb;
	counters: MetricsCounters;
	clocks: AccountNow;
	/** The real time (what the reads' furthest month is counted from). */
	now: () => Date;
	/** accounts.getProduct: null when not the account's. */
	productOf(accountId: number, productId: number): Promise<ProductRecord | null>;
	/** accounts.listMerchantAccounts. */
	merchantAccountsOf(accountId: number): Promise<Pick<MerchantAccountView, "id">[]>;
}
