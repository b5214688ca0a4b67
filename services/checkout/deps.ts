import type { Call } from "../../shared/call";
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import type { CardKeyRing } from "./card-keys";

export interface CheckoutDeps {
	/** Sessions', accounts' and billing's actions (shared/contracts). */
	call: Call;
	keys: CardKeyRing;
	fingerprintKey: Buffer;
	/** Spreads checkouts across the eligible MIDs. */
	pickMerchantAccount(eligible: MerchantAccountView[]): MerchantAccountView;
	now: () => Date;
}
