// What the accounts service's domain functions get: its database, a typed call to other services, the clock.
import type { Call } from "../../shared/call";
import type { AccountsDb } from "./models";

export interface AccountsDeps {
	db: AccountsDb;
	/** The payments service keeps MIDs' processor keys (storeCredentials). */
	call: Call;
	now: () => Date;
}
