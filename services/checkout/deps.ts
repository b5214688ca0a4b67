import type { Call } from "../../shared/call";
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import type { AccountCache } from "./account-cache";
import type { CardKeyRing } from "./card-keys";

export interface CheckoutDeps {
	/** Sessions', accounts' and billing's actions (shared/contracts). */
	call: Call;
	/** The node's cache of checkout contexts and blacklist answers. */
	accounts: AccountCache;
	keys: CardKeyRing;
	fingerprintKey: Buffer;
	/** Spreads checkouts across the eligible MIDs. */
	pickMerchantAccount(eligible: MerchantAccountView[]): MerchantAccountView;
	now: () => Date;
}
