// Billing moves money through the payments service (the vault and the
// processors) by card token and idempotency key. A call that fails (payments
// unreachable, timed out) is thrown, not taken for "nothing happened": the
// operation may have run, and the recovery looks its key up later.
import type { Call } from "../../shared/call";
import {
	type AwaitingBuyer,
	type DisputeEvidence,
	type DisputeStatus,
	type EvidenceError,
	type FirstPaymentKind,
	type MoneyParams,
	OPERATION_IN_PROGRESS_REASON,
	OUTCOME_UNKNOWN_REASON,
	type PaymentOutcome,
	type PaymentsActions,
	type ProcessorNotice,
	type StripeEventError,
} from "../../shared/contracts/payments";

export interface Payments {
	/**
	 * A charge by card token (renewals make them). `at`: the account's time it is made at (account-time.ts: the
	 * sandbox judges the card's expiry by it). `networkTransactionId`: a renewal's reference to the card's first payment
	 * or set-up (docs/authentication.md).
	 */
	charge(request: MoneyParams & { initiator: "customer" | "merchant"; at?: Date; networkTransactionId?: string }): Promise<PaymentOutcome>;
	/** The checkout's first charge or hold: the issuer may ask the buyer for a challenge until `challengeUntil`. */
	firstPayment(
		request: MoneyParams & { kind: FirstPaymentKind; challengeUntil: string; authenticate: "ALWAYS" | "WHEN_REQUIRED"; at: Date },
	): Promise<PaymentOutcome | AwaitingBuyer>;
	/** A first payment after its challenge; null when no money moved (the challenge's time ran out). */
	afterChallenge(idempotencyKey: string): Promise<PaymentOutcome | AwaitingBuyer | null>;
	capture(request: { idempotencyKey: string; authorizationId: number; amount: number }): Promise<PaymentOutcome>;
	void(request: { idempotencyKey: string; authorizationId: number }): Promise<PaymentOutcome>;
	refund(request: { idempotencyKey: string; processorTransactionId: number; amount: number }): Promise<PaymentOutcome>;
	/** The outcome recorded for a key; null when no money moved for it. */
	lookup(idempotencyKey: string): Promise<PaymentOutcome | null>;
	/** A dispute's evidence, sent to its MID's processor: the dispute's status there afterwards. */
	submitDisputeEvidence(request: {
		midId: number;
		reference: string;
		evidence: DisputeEvidence;
	}): Promise<{ status: DisputeStatus } | { error: EvidenceError }>;
	/** The sandbox's disputes and warnings due by `until` (one account's: a test clock), until named done. */
	sandboxNotices(request: { until: Date; accountId?: number }): Promise<ProcessorNotice[]>;
	sandboxNoticesDone(ids: string[]): Promise<void>;
	/** An event Stripe sent to a MID's endpoint, verified and read: the notice it brings, null when none of ours. */
	stripeEvent(request: {
		midId: number;
		payload: string;
		signature?: string;
	}): Promise<{ eventId: string; notice: ProcessorNotice | null } | { error: StripeEventError }>;
	/** A notification request Adyen sent to a MID's endpoint, verified and read: the notices it brings. */
	adyenNotification(request: { midId: number; payload: string }): Promise<PaymentsActions["payments.adyenNotification"]["result"]>;
}

/**
 * Money may have moved and the processor cannot tell yet, or another call still decides the key: thrown like a call that
 * failed, so nothing is settled (or recorded) on it, and the key is asked again later.
 */
export class OutcomeUnknownError extends Error {
	constructor(idempotencyKey: string) {
		super(`The processor's outcome for ${idempotencyKey} is unknown for now: it is looked up later`);
		this.name = "OutcomeUnknownError";
	}
}

/** For a sweep's `.catch`: an outcome unknown for now is looked at again by the next sweep; any other error is thrown. */
export const laterIfUnknown = (err: Error): "later" => {
	if (err instanceof OutcomeUnknownError) return "later";
	throw err;
};

function known<T extends PaymentOutcome | AwaitingBuyer | null>(idempotencyKey: string, outcome: T): T {
	const unknown =
		outcome?.status === "ERROR" && (outcome.reason === OUTCOME_UNKNOWN_REASON || outcome.reason === OPERATION_IN_PROGRESS_REASON);
	if (unknown) throw new OutcomeUnknownError(idempotencyKey);
	return outcome;
}

export function paymentsThrough(call: Call): Payments {
	return {
		charge: async ({ at, ...request }) =>
			known(request.idempotencyKey, await call("payments.charge", { ...request, ...(at ? { at: at.toISOString() } : {}) })),
		firstPayment: async ({ at, ...request }) =>
			known(request.idempotencyKey, await call("payments.firstPayment", { ...request, at: at.toISOString() })),
		afterChallenge: async idempotencyKey => known(idempotencyKey, await call("payments.afterChallenge", { idempotencyKey })),
		capture: async request => known(request.idempotencyKey, await call("payments.capture", request)),
		void: async request => known(request.idempotencyKey, await call("payments.void", request)),
		refund: async request => known(request.idempotencyKey, await call("payments.refund", request)),
		lookup: async idempotencyKey => known(idempotencyKey, await call("payments.lookup", { idempotencyKey })),
		submitDisputeEvidence: request => call("payments.submitDisputeEvidence", request),
		sandboxNotices: async ({ until, accountId }) =>
			(await call("payments.sandboxNotices", { until: until.toISOString(), ...(accountId ? { accountId } : {}) })).notices,
		sandboxNoticesDone: async ids => {
			if (ids.length) await call("payments.sandboxNoticesDone", { ids });
		},
		stripeEvent: request => call("payments.stripeEvent", request),
		adyenNotification: request => call("payments.adyenNotification", request),
	};
}
