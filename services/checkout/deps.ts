// What the checkout service's domain functions get: typed calls, the node's account cache, the card-decryption keys,
// the MID router, the clock.
import type { Call } from "../../shared/call";
import type { AccountCache } from "./account-cache";
import type { CardKeyRing } from "./card-keys";
import type { MidRouter } from "./mid-routing";

export interface CheckoutDeps {
	/** Sessions', accounts' and billing's actions (shared/contracts). */
	call: Call;
	/** The node's cache of checkout contexts and blacklist answers. */
	accounts: AccountCache;
	keys: CardKeyRing;
	fingerprintKey: Buffer;
	/** Spreads checkouts across the eligible MIDs by weight, within their caps (mid-routing.ts). */
	mids: MidRouter;
	now: () => Date;
}
