// What the usage service's domain functions get: its database, typed calls to billing and accounts, this node's
// name, and the clocks (the real one, and each account's, which a test clock moves: shared/account-now.ts).
import type { AccountNow } from "../../shared/account-now";
import type { Call } from "../../shared/call";
import type { MeterCache } from "./meters";
import type { UsageDb } from "./models";

export interface UsageDeps {
	db: UsageDb;
	call: Call;
	/** The real time. */
	now: () => Date;
	/** The account's now: events are dated, refused as late or future, by it. */
	clocks: AccountNow;
	/** This node: a batch's lease names it. */
	owner: string;
	meterCache: MeterCache;
}
