// What the refunds service's domain functions get: its database, a typed call to billing, the clock.
import type { Call } from "../../shared/call";
import type { RefundsDb } from "./models";

export interface RefundsDeps {
	db: RefundsDb;
	/** billing.refundTransaction (shared/contracts/billing). */
	call: Call;
	now: () => Date;
}
