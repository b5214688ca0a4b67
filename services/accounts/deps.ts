import type { AccountsDb } from "./models";

export interface AccountsDeps {
	db: AccountsDb;
	now: () => Date;
}
