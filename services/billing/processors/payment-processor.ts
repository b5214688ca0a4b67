// What billing needs from a card processor. Every money-moving call carries
// an idempotency key: repeating a call with the same key returns the first
// outcome and never moves money twice, so any step can be retried safely.

export interface ProcessorOutcome {
	/** ERROR: the processor did not do it (unavailable, timed out before accepting); the same key may be tried again. */
	status: "APPROVED" | "DECLINED" | "ERROR";
	/** The processor's id of the operation (the API's `transactionId`). */
	processorTransactionId: number | null;
	/** Why it was declined or failed, e.g. `insufficient_funds`. */
	reason: string | null;
	/** A decline that retrying cannot fix (lost, stolen, expired card). */
	hardDecline: boolean;
}

export interface MoneyRequest {
	idempotencyKey: string;
	cardToken: string;
	amount: number;
	currency: string;
	midId: number;
}

export interface PaymentProcessor {
	/** Stores the card in the processor's vault; the token is what billing keeps. */
	tokenize(card: { pan: string; expiry: string }): Promise<{ cardToken: string }>;
	/** Zero-amount verification; the CVC is used here and never kept. */
	verify(request: { idempotencyKey: string; cardToken: string; cvc: string; midId: number }): Promise<ProcessorOutcome>;
	/**
	 * Customer-initiated (the buyer is present, with the CVC) or merchant-initiated (a renewal, no CVC).
	 * `at` is the renewal cycle's time: the sandbox judges the card's expiry by it, so test clocks
	 * reach expired cards; a real processor ignores it.
	 */
	charge(
		request: MoneyRequest & ({ initiator: "customer"; cvc: string } | { initiator: "merchant"; at?: Date }),
	): Promise<ProcessorOutcome>;
	authorize(request: MoneyRequest & { cvc: string }): Promise<ProcessorOutcome>;
	capture(request: { idempotencyKey: string; authorizationId: number; amount: number }): Promise<ProcessorOutcome>;
	void(request: { idempotencyKey: string; authorizationId: number }): Promise<ProcessorOutcome>;
	refund(request: { idempotencyKey: string; processorTransactionId: number; amount: number }): Promise<ProcessorOutcome>;
	/** The outcome recorded for a key, or null if the processor never saw it. */
	lookup(idempotencyKey: string): Promise<ProcessorOutcome | null>;
}
