// Billing moves money through the payments service (the vault and the
// gateways) by card token and idempotency key. A call that fails (payments
// unreachable, timed out) is thrown, not taken for "nothing happened": the
// operation may have run, and the recovery looks its key up later.
import type { Call } from "../../shared/call";
import type { MoneyParams, PaymentOutcome } from "../../shared/contracts/payments";

export type { PaymentOutcome as ProcessorOutcome } from "../../shared/contracts/payments";

export interface Payments {
	/** `at`: a renewal cycle's time (the sandbox judges the card's expiry by it). */
	charge(request: MoneyParams & { initiator: "customer" | "merchant"; at?: Date }): Promise<PaymentOutcome>;
	authorize(request: MoneyParams): Promise<PaymentOutcome>;
	capture(request: { idempotencyKey: string; authorizationId: number; amount: number }): Promise<PaymentOutcome>;
	void(request: { idempotencyKey: string; authorizationId: number }): Promise<PaymentOutcome>;
	refund(request: { idempotencyKey: string; processorTransactionId: number; amount: number }): Promise<PaymentOutcome>;
	/** The outcome recorded for a key; null when no money moved for it. */
	lookup(idempotencyKey: string): Promise<PaymentOutcome | null>;
}

export function paymentsThrough(call: Call): Payments {
	return {
		charge: ({ at, ...request }) => call("payments.charge", { ...request, ...(at ? { at: at.toISOString() } : {}) }),
		authorize: request => call("payments.authorize", request),
		capture: request => call("payments.capture", request),
		void: request => call("payments.void", request),
		refund: request => call("payments.refund", request),
		lookup: idempotencyKey => call("payments.lookup", { idempotencyKey }),
	};
}
