// The payments service's contract: the card vault and the processors. Checkout
// hands it the card number once (saveCard); billing and refunds move money by
// the card's token and our idempotency keys. Types only.

/** What a processor did with one operation, as the payments service's ledger recorded it. */
export interface PaymentOutcome {
	/** ERROR: the processor did not do it (unreachable, timed out); the same key may be tried again and never moves money twice. */
	status: "APPROVED" | "DECLINED" | "ERROR";
	/** Ours, an integer per payment operation: the API's `transactionId`. Null for an ERROR. */
	processorTransactionId: number | null;
	/** The processor's own id of the operation (Stripe `pi_…`, `re_…`; the sandbox `sbx_…`); null for an ERROR. */
	processorReference: string | null;
	/** Why it was declined or failed, e.g. `insufficient_funds`; `no_processor` when the MID has no processor. */
	reason: string | null;
	/** A decline that retrying cannot fix (lost, stolen, expired card). */
	hardDecline: boolean;
	/** How the buyer was authenticated (3-D Secure) for a first payment; absent or null where none applies. */
	authentication?: Authentication | null;
	/**
	 * The card network's id of an approved first payment or set-up, the buyer present: later merchant-initiated charges
	 * (renewals) refer to it, which keeps them exempt from authentication. Absent or null where the processor keeps it
	 * itself (Stripe) or none applies.
	 */
	networkTransactionId?: string | null;
}

/** How a payment's cardholder was authenticated (docs/authentication.md). */
export enum AuthenticationOutcome {
	Frictionless = "FRICTIONLESS",
	Challenged = "CHALLENGED",
	Failed = "FAILED",
	NotRequired = "NOT_REQUIRED",
	/** The issuer does not take part (not enrolled): a proof of the attempt stands in. */
	Attempted = "ATTEMPTED",
	/** The authentication service did not answer: the payment went on unauthenticated. */
	Unavailable = "UNAVAILABLE",
}

export interface Authentication {
	/** The 3-D Secure protocol version, e.g. "2.2.0"; null when none ran. */
	version: string | null;
	outcome: AuthenticationOutcome;
	/** Electronic Commerce Indicator: "05" authenticated, "06" attempted, "07" not authenticated; null when none ran. */
	eci: string | null;
}

/** The issuer asked the buyer to authenticate: the payment waits for the challenge's end, until `until` at most. */
export interface AwaitingBuyer {
	status: "AWAITING_BUYER";
	/** Where the frame shows the challenge (the sandbox's own page, or the issuer's). */
	challengeUrl: string;
	until: string;
}

/** The decline reason when the buyer failed the challenge. */
export const AUTHENTICATION_FAILED_REASON = "authentication_failed";
/** The decline reason when the issuer wants an authentication the payment could not have (a renewal, off session). */
export const AUTHENTICATION_REQUIRED_REASON = "authentication_required";

/** A MID's processor key as the admin API takes it: Stripe's secret or restricted key, test or live. */
export const PROCESSOR_KEY_PATTERN = "^(sk|rk)_(test|live)_[A-Za-z0-9]{8,247}$";

/** A MID's webhook signing secret as the admin API takes it: the `whsec_…` of the MID's endpoint in Stripe's dashboard. */
export const WEBHOOK_SECRET_PATTERN = "^whsec_[A-Za-z0-9]{8,247}$";

/** An Adyen API key (its Customer Area's API credential): printable ASCII, no spaces. */
export const ADYEN_API_KEY_PATTERN = "^[!-~]{16,512}$";

/** The HMAC key of a MID's notification webhook in Adyen's Customer Area: 64 hexadecimal digits. */
export const ADYEN_HMAC_KEY_PATTERN = "^[0-9A-Fa-f]{64}$";

/**
 * The token of a first payment's return from an Adyen MID's 3-D Secure page (GET /api/processors/adyen/returns/{token}):
 * a SHA-256 in base64url.
 */
export const ADYEN_RETURN_TOKEN_PATTERN = "^[A-Za-z0-9_-]{43}$";

/**
 * Adyen's redirectResult as the buyer's return brings it: printable ASCII, at most 5,000 characters, so that even
 * percent-encoded the return's address fits Node's 16 kB limit for a request line and headers (a longer one is a 431).
 */
export const ADYEN_REDIRECT_RESULT_PATTERN = "^[!-~]{1,5000}$";

/** The processors a MID's keys can be stored for. */
export type KeyedProcessor = "stripe" | "adyen";

/**
 * The reason of an ERROR after which money may have moved (the processor took the request, then could not be reached to
 * tell): the caller must not take it for a failure, but look the key up later (payments.lookup) or retry it.
 */
export const OUTCOME_UNKNOWN_REASON = "outcome_unknown";

/**
 * The reason of an ERROR answered while another call still decides the same key: not an outcome either. The caller
 * asks again later with the same key, as after OUTCOME_UNKNOWN_REASON.
 */
export const OPERATION_IN_PROGRESS_REASON = "operation_in_progress";

/** The reason of a decline by a MID that has no processor it may use (a production account's MID without one). */
export const NO_PROCESSOR_REASON = "no_processor";

export enum SaveCardError {
	/** The MID has no processor (a production account before it goes live). */
	NoProcessor = "NO_PROCESSOR",
	CardNotVerified = "CARD_NOT_VERIFIED",
	ProcessorError = "PROCESSOR_ERROR",
}

/** A verification the processor declined: why, in our words, so the checkout can tell whether another MID may approve it. */
export interface CardDeclined {
	error: SaveCardError.CardNotVerified;
	declineReason: string | null;
	hardDecline: boolean;
}

/** What a payment the buyer is present for does: charge, hold, or set the card up for later charges (no money). */
export type FirstPaymentKind = "charge" | "authorize" | "setup";

export interface MoneyParams {
	idempotencyKey: string;
	midId: number;
	cardToken: string;
	amount: number;
	currency: string;
}

/** Why payments refused a MID's sealed processor key. */
export enum CredentialsError {
	/** Not sealed to the payments service's current key, or no processor key (or webhook secret) inside. */
	Unreadable = "UNREADABLE",
}

/** Why payments refused an event Stripe sent to a MID's endpoint (docs/api.md#stripe-events). */
export enum StripeEventError {
	/** No such MID, or not one on Stripe that it may use: nothing can verify the event. */
	NotStripeMid = "NOT_STRIPE_MID",
	/** The MID has no webhook signing secret: nothing it receives can be trusted. */
	NoWebhookSecret = "NO_WEBHOOK_SECRET",
	/** No Stripe-Signature header, one the MID's secret did not make, or one older than 5 minutes (a replay). */
	BadSignature = "BAD_SIGNATURE",
	/** Signed, but not an event as Stripe sends them. */
	Malformed = "MALFORMED",
	/** It names a PaymentIntent or charge the MID's Stripe account does not have. */
	NotThisAccount = "NOT_THIS_ACCOUNT",
	/** Stripe could not be reached to read the charge: nothing applied; Stripe sends it again. */
	Unavailable = "UNAVAILABLE",
	/** Stripe refused the MID's key (revoked, or restricted from reading payments): nothing applied; Stripe sends it again. */
	KeyRefused = "KEY_REFUSED",
}

/** Why payments refused a notification request Adyen sent to a MID's endpoint (docs/api.md#adyen-notifications); Adyen sends it again. */
export enum AdyenNotificationError {
	/** No such MID, or not one on Adyen that it may use: nothing can verify it. */
	NotAdyenMid = "NOT_ADYEN_MID",
	/** The MID has no HMAC key: nothing it receives can be trusted. */
	NoHmacKey = "NO_HMAC_KEY",
	/** An item without an HMAC signature, or one the MID's HMAC key did not make. */
	BadSignature = "BAD_HMAC_SIGNATURE",
	/** Not a notification request as Adyen sends them. */
	Malformed = "NOT_A_NOTIFICATION",
}

/** A dispute's status (services/billing/states.ts has its moves). */
export const DISPUTE_STATUSES = ["NEEDS_RESPONSE", "UNDER_REVIEW", "WON", "LOST"] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** What a processor says of a charge after it was made, in our words: a dispute's change, or an early fraud warning. */
interface NoticeOf<Kind extends string> {
	kind: Kind;
	/** Unique per notice, so a repeat is recognised (the sandbox's `<reference>:<stage>`, Stripe's event id). */
	id: string;
	midId: number;
	/** The idempotency key of the charge it concerns: billing's transaction of that key. */
	chargeKey: string;
	/** The processor's id of the dispute or warning (Stripe `du_…`, `issfr_…`; the sandbox `sbxdp_…`, `sbxfw_…`). */
	reference: string;
	/** When it happened at the processor (ISO 8601). */
	at: string;
}

export interface DisputeNotice extends NoticeOf<"dispute"> {
	status: DisputeStatus;
	/** The network's reason, as the processor names it (e.g. `fraudulent`, `product_not_received`). */
	reason: string;
	/** Disputed amount, minor units of `currency`. */
	amount: number;
	currency: string;
	/** Until when evidence may be submitted (ISO 8601); null when the processor gives none. */
	evidenceDueBy: string | null;
}

export interface FraudWarningNotice extends NoticeOf<"earlyFraudWarning"> {
	/** The issuer's fraud type, e.g. `made_with_stolen_card`. */
	fraudType: string;
}

export type ProcessorNotice = DisputeNotice | FraudWarningNotice;

/** Evidence for a dispute: text fields as Stripe names them (https://docs.stripe.com/api/disputes/update). */
export const DISPUTE_EVIDENCE_FIELDS = [
	"access_activity_log",
	"billing_address",
	"cancellation_policy_disclosure",
	"cancellation_rebuttal",
	"customer_email_address",
	"customer_name",
	"customer_purchase_ip",
	"duplicate_charge_explanation",
	"product_description",
	"refund_policy_disclosure",
	"refund_refusal_explanation",
	"service_date",
	"uncategorized_text",
] as const;
export type DisputeEvidence = Partial<Record<(typeof DISPUTE_EVIDENCE_FIELDS)[number], string>>;

/** Why a dispute's evidence did not reach the processor. */
export enum EvidenceError {
	/** The processor could not be reached or failed: nothing was submitted; try again. */
	Unavailable = "UNAVAILABLE",
	/** The processor refused it (the dispute is closed there, or past its due date). */
	Refused = "REFUSED",
}

export interface PaymentsActions {
	/** The public key (JWK, RSA-OAEP-256) the gateway seals a MID's processor key to, so it never crosses the transporter in clear. */
	"payments.credentialsKey": { params: Record<string, never>; result: { publicJwk: Record<string, unknown> & { kid?: string } } };
	/** Keeps a MID's processor key and webhook signing secret, sealed at rest; replaces both earlier ones (no secret: none). */
	"payments.storeCredentials": {
		params: { midId: number; type: KeyedProcessor; sealedSecretKey: string; sealedWebhookSecret?: string };
		result: { midId: number } | { error: CredentialsError };
	};
	/** Vaults the card and verifies it with a zero amount on the MID's processor (the CVC is used there, never kept). */
	"payments.saveCard": {
		params: { midId: number; attemptId: string; card: { pan: string; expiry: string; cvc: string } };
		result: { cardToken: string } | { error: SaveCardError } | CardDeclined;
	};
	/**
	 * `at`: the account's time it is made at (a sandbox's test clock: docs/api.md#the-accounts-now); the sandbox judges
	 * the card's expiry by it and dates its disputes from it, real processors ignore it. `networkTransactionId`: a
	 * merchant-initiated charge's reference to the card's first payment or set-up.
	 */
	"payments.charge": {
		params: MoneyParams & { initiator: "customer" | "merchant"; at?: string; networkTransactionId?: string };
		result: PaymentOutcome;
	};
	"payments.capture": { params: { idempotencyKey: string; authorizationId: number; amount: number }; result: PaymentOutcome };
	"payments.void": { params: { idempotencyKey: string; authorizationId: number }; result: PaymentOutcome };
	"payments.refund": { params: { idempotencyKey: string; processorTransactionId: number; amount: number }; result: PaymentOutcome };
	/**
	 * A payment the buyer is present for: a charge, a hold (PREAUTHORIZE), or the card's set-up for later charges
	 * (`setup`, amount 0: a SCHEDULE checkout, a card update with nothing owed). The issuer may ask for a challenge,
	 * which the buyer may take until `challengeUntil` (the session's end). `at`: as a charge's.
	 */
	"payments.firstPayment": {
		params: MoneyParams & { kind: FirstPaymentKind; challengeUntil: string; authenticate?: "ALWAYS" | "WHEN_REQUIRED"; at?: string };
		result: PaymentOutcome | AwaitingBuyer;
	};
	/** A first payment after its challenge ended: its outcome, or AWAITING_BUYER while the buyer has not finished. */
	"payments.afterChallenge": { params: { idempotencyKey: string }; result: PaymentOutcome | AwaitingBuyer | null };
	/** The sandbox's challenge page: the tester's choice (docs/authentication.md); false when it is over or unknown. */
	"payments.sandboxChallenge": { params: { challengeId: string; result: "complete" | "fail" }; result: { accepted: boolean } };
	/** The outcome recorded for a key, or null when no money moved for it (the key may be used again). */
	"payments.lookup": { params: { idempotencyKey: string }; result: PaymentOutcome | null };
	/**
	 * The sandbox's disputes and warnings due by `until` (its test cards': docs/disputes.md), oldest first; only the
	 * account's with `accountId` (a test clock). They are answered again until `sandboxNoticesDone` names them.
	 */
	"payments.sandboxNotices": { params: { until: string; accountId?: number }; result: { notices: ProcessorNotice[] } };
	"payments.sandboxNoticesDone": { params: { ids: string[] }; result: { done: number } };
	/**
	 * An event Stripe sent to a MID's endpoint (the raw body and its Stripe-Signature header), verified with the MID's
	 * webhook secret and read in our words: the notice it brings, or null when it brings none of ours (another event
	 * type, a payment this service did not make).
	 */
	"payments.stripeEvent": {
		params: { midId: number; payload: string; signature?: string };
		result: { eventId: string; notice: ProcessorNotice | null } | { error: StripeEventError };
	};
	/**
	 * A notification request Adyen sent to a MID's endpoint (the raw body), each item verified with the MID's HMAC key:
	 * what Adyen did with our operations is kept for their lookups, and the notices it brings are answered for billing
	 * (items for another merchant account, the other platform, or payments this service did not make bring none).
	 */
	"payments.adyenNotification": {
		params: { midId: number; payload: string };
		result: { notices: { eventId: string; notice: ProcessorNotice }[] } | { error: AdyenNotificationError };
	};
	/**
	 * The buyer back from an Adyen MID's 3-D Secure page: the redirectResult Adyen appended, kept once for the first
	 * payment whose challenge was asked under `token`, and read after the challenge. Moves no money. Either missing
	 * (a HEAD, a malformed request), or a token no challenge was asked under: nothing kept.
	 */
	"payments.adyenReturn": { params: { token?: string; redirectResult?: string }; result: { kept: boolean } };
	/** Submits a dispute's evidence to the MID's processor: the dispute's status there afterwards. */
	"payments.submitDisputeEvidence": {
		params: { midId: number; reference: string; evidence: DisputeEvidence };
		result: { status: DisputeStatus } | { error: EvidenceError };
	};
}
