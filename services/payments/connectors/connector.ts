// What the payments service asks of a processor, through its connector (the sandbox,
// Stripe, …). The service keeps the ledger: it records every operation under
// our idempotency key before a connector runs, assigns the integer
// transaction ids, and maps ids back to the processor's references. A connector
// only talks to its processor, and is handed the card from the vault.
import type { Authentication, DisputeEvidence, DisputeStatus, EvidenceError, FirstPaymentKind } from "../../../shared/contracts/payments";

export type { FirstPaymentKind };

/**
 * What a processor did. ERROR: it did not do it, or cannot tell yet (unreachable, timed out, 5xx); the same key may be
 * tried again, and the ledger looks up first what a connector remembered for it.
 */
export interface ConnectorOutcome {
	status: "APPROVED" | "DECLINED" | "ERROR";
	/** The processor's own id of what it did (Stripe: `pi_…`, `seti_…`, `re_…`); null when it did nothing. */
	reference: string | null;
	/** Why it was declined or failed, in our words (shared/decline-reasons.ts decides retries by them): a connector maps its processor's codes (Stripe: decline-codes.ts). */
	reason: string | null;
	/** A decline that retrying cannot fix (lost, stolen, expired card). */
	hardDecline: boolean;
	/** How the buyer was authenticated, for a first payment (pay, afterChallenge). */
	authentication?: Authentication | null;
	/** The card network's id of an approved first payment (pay, afterChallenge), when the processor gives it. */
	networkTransactionId?: string | null;
	/**
	 * An ERROR whose failing request never left us (the connection was refused) and whose earlier requests were all
	 * answered: the processor did nothing more than those answers said, so the ledger need not look the key up.
	 */
	neverSent?: true;
}

/** The issuer asked for a challenge (3-D Secure): the buyer takes it at `challengeUrl`; `reference` is remembered. */
export interface ChallengeAsked {
	status: "AWAITING_BUYER";
	reference: string;
	challengeUrl: string;
}

/** The card as the vault unseals it for one operation; never stored by a connector. */
export interface VaultCard {
	/** The vault's token: a connector keys what it keeps of the card (a processor's customer, payment method) by it. */
	cardToken: string;
	pan: string;
	/** MMYY, as the checkout takes it (`cardExpiry`). */
	expiry: string;
}

/** Which merchant account an operation runs on, with its processor credentials (unsealed for this call only). */
export interface MidContext {
	midId: number;
	/** The merchant's account the MID belongs to. */
	accountId: number;
	/** The MID's secret key at its processor (Stripe's secret key, Adyen's API key); absent for the sandbox. */
	secretKey?: string;
	/** An Adyen MID's merchant account, and its live endpoints' prefix (null: Adyen's test platform). */
	adyen?: { merchantAccount: string; liveUrlPrefix: string | null };
}

export interface MoneyOperation {
	/** Ours; a connector derives the processor's idempotency key from it and records it on the processor's object. */
	idempotencyKey: string;
	mid: MidContext;
	card: VaultCard;
	/** Integer minor units. */
	amount: number;
	/** ISO 4217, upper case. */
	currency: string;
}

/**
 * A connector remembers the processor object it created for a key before it
 * asks the processor to move money, so an answer lost in between is found again.
 */
export type Remember = (reference: string) => Promise<void>;

export interface Connector {
	/** Zero-amount verification, with the CVC (used here, never kept). */
	verify(op: Omit<MoneyOperation, "amount" | "currency"> & { cvc: string }, remember: Remember): Promise<ConnectorOutcome>;
	/**
	 * `customer`: at checkout or a card update, the buyer present. `merchant`: a renewal, off session. `at`: the account's
	 * time it is made at (a sandbox's test clock): the sandbox judges the card's expiry and dates its disputes by it.
	 */
	charge(
		op: MoneyOperation & {
			initiator: "customer" | "merchant";
			at?: Date;
			/** A merchant-initiated charge's reference to the card's first payment or set-up (sent as the network asks). */
			networkTransactionId?: string;
		},
		remember: Remember,
	): Promise<ConnectorOutcome>;
	/**
	 * A payment the buyer is present for: a charge, a hold, or the card's set-up for later charges (amount 0),
	 * authenticated as the issuer asks (docs/authentication.md). A challenge may be taken until `challengeUntil`; its end is read by afterChallenge.
	 */
	pay(
		op: MoneyOperation & {
			kind: FirstPaymentKind;
			challengeUntil: Date;
			/** The product's policy: ALWAYS ask the issuer to authenticate, or only WHEN_REQUIRED by it (the default). */
			authenticate?: "ALWAYS" | "WHEN_REQUIRED";
			/** As a charge's. */
			at?: Date;
		},
		remember: Remember,
	): Promise<ConnectorOutcome | ChallengeAsked>;
	/** What a first payment whose challenge was asked (`reference`) came to: its outcome, or still awaiting the buyer. */
	afterChallenge(op: {
		idempotencyKey: string;
		kind: FirstPaymentKind;
		mid: MidContext;
		reference: string;
	}): Promise<ConnectorOutcome | ChallengeAsked>;
	/** A hold (PREAUTHORIZE), captured or voided later. */
	authorize(op: MoneyOperation, remember: Remember): Promise<ConnectorOutcome>;
	/** `reference`: the hold's; `currency`: its currency. */
	capture(op: { idempotencyKey: string; mid: MidContext; reference: string; amount: number; currency: string }): Promise<ConnectorOutcome>;
	void(op: { idempotencyKey: string; mid: MidContext; reference: string }): Promise<ConnectorOutcome>;
	/** `reference`: the charge's (or the captured hold's); `currency`: its currency; `cardToken`: its card, not unsealed. */
	refund(
		op: { idempotencyKey: string; mid: MidContext; reference: string; amount: number; currency: string; cardToken: string | null },
		remember: Remember,
	): Promise<ConnectorOutcome>;
	/**
	 * What became of an operation whose answer was lost (our process died, or the call timed out). `reference` is what
	 * `remember` stored, if it was called. Answers null when the processor moved no money for it: the operation may be
	 * tried again with the same key. Never moves money itself: an operation left unconfirmed is cancelled.
	 */
	/** Submits a dispute's evidence (text fields) for review: the dispute's status at the processor afterwards. */
	submitDisputeEvidence(op: {
		mid: MidContext;
		reference: string;
		evidence: DisputeEvidence;
	}): Promise<{ status: DisputeStatus } | { error: EvidenceError }>;
	lookup(op: {
		idempotencyKey: string;
		kind: "verify" | "setup" | "charge" | "authorize" | "capture" | "void" | "refund";
		mid: MidContext;
		reference: string | null;
		/** For a refund: the charge it refunds (a refund's id is only known once the processor answers). */
		chargeReference?: string;
	}): Promise<ConnectorOutcome | null>;
}
