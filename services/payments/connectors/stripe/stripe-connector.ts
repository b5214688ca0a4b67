// The Stripe gateway, spoken to only through the official library. Each MID
// is its own Stripe account (its secret key). A vault card is put on that
// account once, as a Customer with an attached PaymentMethod made from the
// raw card; the account must be allowed to send raw card numbers.
//
// Money moves in two steps, so that a lost answer never charges twice, even
// on a server that ignores Idempotency-Key (localstripe): the intent is
// created unconfirmed and remembered, then confirmed. A lookup finds a
// remembered intent again, and cancels it if it was never confirmed.
//
// Decisions:
// - 401/403 (the MID's key is wrong, revoked or restricted) is DECLINED with
//   merchant_account_refused: the card is not at fault and this MID will not
//   charge until its key is fixed, so billing moves to another MID
//   (MERCHANT_ACCOUNT). A lookup answers ERROR instead: it could not tell.
// - 3-D Secure is not supported yet (a later issue): an intent that requires
//   action is cancelled, so it can never complete, and DECLINED with
//   authentication_required.
// - ERROR means nothing moved, or what moved is found by a lookup of the
//   reference that was remembered: the ledger looks it up before a retry.
import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import {
	AUTHENTICATION_FAILED_REASON,
	AUTHENTICATION_REQUIRED_REASON,
	type Authentication,
	AuthenticationOutcome,
	EvidenceError,
	OPERATION_IN_PROGRESS_REASON,
	StripeEventError,
} from "../../../../shared/contracts/payments";
import type { ChallengeAsked, Connector, ConnectorOutcome, MidContext, MoneyOperation, Remember, VaultCard } from "../connector";
import { outcomeOfDecline } from "./decline-codes";
import { disputeStatusOf } from "./disputes";
import type { EventConcerns } from "./events";

/** Pinned, not the library's default: upgrading the library must not change what Stripe answers (its types follow it, so tsc tells). */
export const STRIPE_API_VERSION = "2026-10-28.endive";
const DEFAULT_TIMEOUT_MS = 30_000;
/** The most requests one operation makes one after another: a first charge's customer, payment method, attach, intent, confirm, cancel. */
const MOST_REQUESTS = 6;

/** What the connector made of one card on one MID's Stripe account. */
export interface StripeCardKeys {
	customer: string;
	paymentMethod: string;
}

/** Where the connector keeps, per MID and vault card, what it made on that MID's Stripe account. */
export interface StripeKeyStore {
	get(midId: number, cardToken: string): Promise<StripeCardKeys | null>;
	set(midId: number, cardToken: string, value: StripeCardKeys): Promise<void>;
}

export interface StripeConnectorOptions {
	/** Another server speaking Stripe's API, e.g. http://127.0.0.1:12111; undefined: Stripe itself. */
	apiBase?: string;
	/** Per request. */
	timeoutMs?: number;
	keyStore: StripeKeyStore;
	/**
	 * "localstripe": leave out what localstripe 1.15.10 refuses ("Unexpected …") although Stripe needs it: no redirects
	 * at creation (else Stripe wants a return_url to confirm) and off_session at confirmation. For tests only;
	 * stripe-mock checks the full requests against Stripe's OpenAPI.
	 */
	dialect?: "stripe" | "localstripe";
	/**
	 * Where the issuer's 3-D Secure page sends the buyer back, inside the card frame (PUBLIC_BASE_URL's
	 * /checkout/challenge-return.html). Unset: a first payment the issuer wants authenticated is declined
	 * `authentication_required`, as before 3-D Secure was supported.
	 */
	returnUrl?: string;
}

export interface StripeConnector extends Connector {
	/** How long an operation may take at most (every request timing out); the ledger's deciding time. */
	readonly decidingMs: number;
	/**
	 * The event in a body Stripe sent to a MID's endpoint, if its Stripe-Signature was made with the MID's webhook
	 * secret less than 5 minutes ago (the library's tolerance, which refuses replays of old signed bodies).
	 */
	verifyEvent(payload: string, signature: string | undefined, webhookSecret: string): unknown | StripeEventError;
	/** Our idempotency key on the PaymentIntent an event concerns, read with the MID's key; null: not a payment of ours. */
	chargeKeyOf(mid: MidContext, concerns: EventConcerns): Promise<{ chargeKey: string | null } | StripeEventError>;
}

type LookupOp = Parameters<Connector["lookup"]>[0];

const approved = (reference: string): ConnectorOutcome => ({ status: "APPROVED", reference, reason: null, hardDecline: false });
const declined = (reference: string | null, code: string | null | undefined): ConnectorOutcome => ({
	status: "DECLINED",
	reference,
	...outcomeOfDecline(code),
});
/** Our own reasons, named as in services/billing/decline-reasons.ts. */
const declinedAs = (reference: string | null, reason: string, hardDecline: boolean): ConnectorOutcome => ({
	status: "DECLINED",
	reference,
	reason,
	hardDecline,
});
const failed = (reason: string, reference: string | null = null): ConnectorOutcome => ({
	status: "ERROR",
	reference,
	reason,
	hardDecline: false,
});

const MERCHANT_REFUSED = "merchant_account_refused";
/** Stripe reports a challenge's details on the charge (payment_method_details.card.three_d_secure), not read yet. */
const CHALLENGED: Authentication = { version: null, outcome: AuthenticationOutcome.Challenged, eci: null };
const FAILED_AUTHENTICATION: Authentication = { version: null, outcome: AuthenticationOutcome.Failed, eci: null };
const UNAVAILABLE = "processor_unavailable";

/** What a failed request means. Only Stripe's errors are answers; anything else (our store, remember) is thrown on. */
function outcomeOfError(err: unknown, reference: string | null, lookingUp = false): ConnectorOutcome {
	if (!(err instanceof Stripe.errors.StripeError)) throw err;
	if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError)
		return lookingUp ? failed(MERCHANT_REFUSED, reference) : declinedAs(reference, MERCHANT_REFUSED, false);
	if (err instanceof Stripe.errors.StripeCardError)
		return lookingUp ? failed(err.code ?? "card_error", reference) : declined(reference, err.decline_code ?? err.code);
	if (err instanceof Stripe.errors.StripeIdempotencyError) return failed("idempotency_error", reference);
	// Our request was wrong (or the object's state did not allow it): Stripe did nothing.
	if (err instanceof Stripe.errors.StripeInvalidRequestError) return failed(err.code ?? "invalid_request", reference);
	// Unreachable, timed out, rate limited, 5xx: Stripe did nothing, or the remembered reference tells.
	return failed(UNAVAILABLE, reference);
}

const isInvalidRequest = (err: unknown) => err instanceof Stripe.errors.StripeInvalidRequestError;

/** Stripe's code for why a payment or setup failed: its decline_code, else its code. */
function codeOf(error: { code?: string; decline_code?: string } | null | undefined): string | undefined {
	return error?.decline_code ?? error?.code;
}

/** MMYY → Stripe's month and four-digit year. */
function expiryOf(card: VaultCard): { exp_month: number; exp_year: number } {
	// MMYY, as the checkout takes it (cardExpiry).
	return { exp_month: Number(card.expiry.slice(0, 2)), exp_year: 2000 + Number(card.expiry.slice(2, 4)) };
}

export function createStripeConnector(options: StripeConnectorOptions): StripeConnector {
	const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	const server = serverOf(options.apiBase);
	const clients = new Map<string, Stripe>();
	const { keyStore } = options;
	const fullStripe = (options.dialect ?? "stripe") === "stripe";
	// A card needs no redirect; without this Stripe refuses a server-side confirm that has no return_url.
	const noRedirects = fullStripe ? { automatic_payment_methods: { enabled: true, allow_redirects: "never" as const } } : {};
	// Where the issuer's 3-D Secure page sends a buyer back: only on Stripe itself (localstripe shows no issuer page).
	const returnUrl = fullStripe ? (options.returnUrl ?? null) : null;

	/**
	 * An intent's (PaymentIntent's or SetupIntent's) creation options when the buyer is present to take a challenge: a card
	 * only, so that its 3-D Secure redirect returns to our page (a return_url is given at confirmation), and 3-D Secure
	 * asked for whatever the issuer's rules when the product says ALWAYS (docs/authentication.md).
	 */
	function buyerPresent(always: boolean) {
		return {
			...(returnUrl ? { payment_method_types: ["card"] } : noRedirects),
			...(always ? { payment_method_options: { card: { request_three_d_secure: "any" as const } } } : {}),
		};
	}

	function clientOf(mid: MidContext): Stripe | null {
		if (!mid.secretKey) return null;
		let client = clients.get(mid.secretKey);
		if (!client) {
			// No retries by the library: a failure shows once, and the caller retries with the same key after a lookup.
			client = new Stripe(mid.secretKey, { ...server, apiVersion: STRIPE_API_VERSION, maxNetworkRetries: 0, telemetry: false, timeout });
			clients.set(mid.secretKey, client);
		}
		return client;
	}

	/**
	 * Stripe's idempotency keys for one attempt: ours, the step and the attempt. Unique per attempt, because Stripe
	 * replays a key's first answer for 24 h: a retry after a lookup cancelled the first intent (or after a 5xx) must make
	 * a new one. Within the attempt they stop a request the library sends again (on a closed connection) from acting twice.
	 */
	function keysOf(idempotencyKey: string): (step: string) => Stripe.RequestOptions {
		const attempt = randomBytes(6).toString("hex");
		return step => ({ idempotencyKey: `${idempotencyKey}:${step}:${attempt}` });
	}

	/** The card on the MID's Stripe account: made on first use (Customer, PaymentMethod, attach), then kept. */
	async function cardOnAccount(
		stripe: Stripe,
		op: { mid: MidContext; card: VaultCard; idempotencyKey: string },
		cvc: string | undefined,
		keys: (step: string) => Stripe.RequestOptions,
	): Promise<StripeCardKeys> {
		const kept = await keyStore.get(op.mid.midId, op.card.cardToken);
		if (kept) return kept;
		const customer = await stripe.customers.create({ metadata: { card_token: op.card.cardToken } }, keys("customer"));
		const method = await stripe.paymentMethods.create(
			{ type: "card", card: { number: op.card.pan, ...expiryOf(op.card), ...(cvc ? { cvc } : {}) } },
			keys("payment_method"),
		);
		// Issuers may decline here already (402): the caller's answer is then that decline.
		await stripe.paymentMethods.attach(method.id, { customer: customer.id }, keys("attach"));
		const value = { customer: customer.id, paymentMethod: method.id };
		await keyStore.set(op.mid.midId, op.card.cardToken, value);
		return value;
	}

	/**
	 * Create unconfirmed, remember, confirm: a charge (automatic capture) or a hold (manual). `challenge`: the buyer is
	 * present to take the issuer's 3-D Secure challenge (the checkout's first payment), which is then asked for instead
	 * of a decline: the issuer's page (`redirect_to_url`), which returns to `returnUrl` inside the card frame.
	 */
	function payByIntent(op: MoneyOperation, hold: boolean, offSession: boolean, remember: Remember): Promise<ConnectorOutcome>;
	function payByIntent(
		op: MoneyOperation,
		hold: boolean,
		offSession: boolean,
		remember: Remember,
		challenge: true,
		always: boolean,
	): Promise<ConnectorOutcome | ChallengeAsked>;
	async function payByIntent(
		op: MoneyOperation,
		hold: boolean,
		offSession: boolean,
		remember: Remember,
		challenge = false,
		always = false,
	): Promise<ConnectorOutcome | ChallengeAsked> {
		const stripe = clientOf(op.mid);
		if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
		const keys = keysOf(op.idempotencyKey);
		const redirect = challenge ? returnUrl : null;
		let reference: string | null = null;
		try {
			const card = await cardOnAccount(stripe, op, undefined, keys);
			const created = await stripe.paymentIntents.create(
				{
					amount: op.amount,
					currency: op.currency.toLowerCase(),
					customer: card.customer,
					payment_method: card.paymentMethod,
					...(challenge ? buyerPresent(always) : noRedirects),
					confirm: false,
					metadata: { idempotency_key: op.idempotencyKey },
					...(hold ? { capture_method: "manual" as const } : {}),
					// The buyer's first payment: the card is kept for the merchant's later charges, which Stripe then sends
					// referring to this payment (exempt from authentication). localstripe refuses the parameter.
					...(challenge && fullStripe ? { setup_future_usage: "off_session" as const } : {}),
				},
				keys("intent"),
			);
			reference = created.id;
			await remember(created.id);
			const confirmed = await stripe.paymentIntents.confirm(
				created.id,
				offSession && fullStripe ? { off_session: true } : redirect ? { return_url: redirect } : {},
				keys("confirm"),
			);
			if (challenge && confirmed.status === "requires_action") {
				const url = challengeUrlOf(confirmed);
				if (url) return { status: "AWAITING_BUYER", reference: confirmed.id, challengeUrl: url };
			}
			return (await judgeIntent(stripe, confirmed, keys, "confirmed")) ?? failed(confirmed.status, confirmed.id);
		} catch (err) {
			return outcomeOfError(err, reference);
		}
	}

	/**
	 * The issuer's page for a PaymentIntent or SetupIntent that requires action. localstripe has none (its
	 * `use_stripe_sdk` action is settled through its own `_authenticate` route, as its stripe.js does), so its dialect
	 * shows an empty page and the tests act as the issuer.
	 */
	function challengeUrlOf(intent: Stripe.PaymentIntent | Stripe.SetupIntent): string | null {
		const url = intent.next_action?.redirect_to_url?.url;
		if (url) return url;
		return fullStripe ? null : "about:blank";
	}

	/** What a first payment's intent came to after its challenge: the buyer authenticated, failed, or is still at it. */
	function afterChallengeOf(intent: Stripe.PaymentIntent): ConnectorOutcome | ChallengeAsked {
		switch (intent.status) {
			case "succeeded":
			case "requires_capture":
				return { ...approved(intent.id), authentication: CHALLENGED };
			case "requires_action":
				return { status: "AWAITING_BUYER", reference: intent.id, challengeUrl: challengeUrlOf(intent) ?? "" };
			case "requires_payment_method":
				return { ...declined(intent.id, AUTHENTICATION_FAILED_REASON), authentication: FAILED_AUTHENTICATION };
			default:
				return failed(intent.status, intent.id);
		}
	}

	/**
	 * What a charge's or hold's intent says. `confirmed`: just confirmed by us; `lookup`: found later, and cancelled
	 * when it was never confirmed (null: nothing moved); `recheck`: found again after that cancel failed. Undecided: null.
	 */
	async function judgeIntent(
		stripe: Stripe,
		intent: Stripe.PaymentIntent,
		keys: (step: string) => Stripe.RequestOptions,
		when: "confirmed" | "lookup" | "recheck",
	): Promise<ConnectorOutcome | null> {
		switch (intent.status) {
			case "succeeded":
			case "requires_capture":
				return approved(intent.id);
			case "requires_action":
				// 3-D Secure that no buyer can take (off session, or a challenge whose time is over): cancelled, so that it
				// never completes. Found by a lookup, it moved nothing; just confirmed, the issuer wants an authentication.
				if (when !== "recheck") await cancelIntent(stripe, intent.id, keys, when === "lookup");
				return when === "lookup" ? null : declined(intent.id, AUTHENTICATION_REQUIRED_REASON);
			case "requires_payment_method":
				// Confirmed, it wants another payment method: declined (Stripe says why in last_payment_error).
				if (intent.last_payment_error || when === "confirmed") return declined(intent.id, codeOf(intent.last_payment_error));
				return when === "lookup" ? cancelUnconfirmed(stripe, intent, keys) : null;
			case "requires_confirmation":
				return when === "lookup" ? cancelUnconfirmed(stripe, intent, keys) : null;
			case "canceled":
				// Cancelled by a lookup (never confirmed), or after 3-D Secure, or voided: it moved no money.
				return when === "confirmed" ? failed("canceled", intent.id) : null;
			default:
				// processing: the outcome is not known yet; a later lookup tells.
				return failed(intent.status, intent.id);
		}
	}

	/** Cancels an intent that was created but not confirmed. Cancel refused: someone confirmed it meanwhile, so it is judged again. */
	async function cancelUnconfirmed(
		stripe: Stripe,
		intent: Stripe.PaymentIntent,
		keys: (step: string) => Stripe.RequestOptions,
	): Promise<ConnectorOutcome | null> {
		try {
			const canceled = await stripe.paymentIntents.cancel(intent.id, {}, keys("cancel"));
			if (canceled.status === "canceled") return null;
			return (await judgeIntent(stripe, canceled, keys, "recheck")) ?? failed(canceled.status, intent.id);
		} catch (err) {
			if (!isInvalidRequest(err)) throw err;
			const now = await stripe.paymentIntents.retrieve(intent.id);
			return (await judgeIntent(stripe, now, keys, "recheck")) ?? failed(OPERATION_IN_PROGRESS_REASON, intent.id);
		}
	}

	/** A 3-D Secure intent's cancel. After a confirm its failure is ignored: no one holds its client secret, so it cannot complete. */
	async function cancelIntent(stripe: Stripe, id: string, keys: (step: string) => Stripe.RequestOptions, mustCancel: boolean) {
		try {
			await stripe.paymentIntents.cancel(id, {}, keys("cancel"));
		} catch (err) {
			if (mustCancel || !(err instanceof Stripe.errors.StripeError)) throw err;
		}
	}

	/**
	 * The card set up for the merchant's later charges, the buyer present (a SCHEDULE checkout, a card update with
	 * nothing owed): a SetupIntent, created, remembered, then confirmed; the issuer may ask for a challenge.
	 */
	async function setUpForLater(op: MoneyOperation, remember: Remember, always: boolean): Promise<ConnectorOutcome | ChallengeAsked> {
		const stripe = clientOf(op.mid);
		if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
		const keys = keysOf(op.idempotencyKey);
		let reference: string | null = null;
		try {
			const card = await cardOnAccount(stripe, op, undefined, keys);
			const setup = await stripe.setupIntents.create(
				{ customer: card.customer, ...buyerPresent(always), usage: "off_session", metadata: { idempotency_key: op.idempotencyKey } },
				keys("setup"),
			);
			reference = setup.id;
			await remember(setup.id);
			const confirmed = await stripe.setupIntents.confirm(
				setup.id,
				{ payment_method: card.paymentMethod, ...(returnUrl ? { return_url: returnUrl } : {}) },
				keys("confirm"),
			);
			if (confirmed.status === "requires_action") {
				const url = challengeUrlOf(confirmed);
				if (url) return { status: "AWAITING_BUYER", reference: confirmed.id, challengeUrl: url };
			}
			return (await judgeSetup(stripe, confirmed, keys, "confirmed")) ?? failed(confirmed.status, confirmed.id);
		} catch (err) {
			return outcomeOfError(err, reference);
		}
	}

	/** What a set-up came to after its challenge: the buyer authenticated, failed, or is still at it. */
	function afterSetupChallengeOf(setup: Stripe.SetupIntent): ConnectorOutcome | ChallengeAsked {
		switch (setup.status) {
			case "succeeded":
				return { ...approved(setup.id), authentication: CHALLENGED };
			case "requires_action":
				return { status: "AWAITING_BUYER", reference: setup.id, challengeUrl: challengeUrlOf(setup) ?? "" };
			case "requires_payment_method":
			case "canceled":
				return { ...declined(setup.id, AUTHENTICATION_FAILED_REASON), authentication: FAILED_AUTHENTICATION };
			default:
				return failed(setup.status, setup.id);
		}
	}

	/** What a set-up's SetupIntent says; `when` as for judgeIntent. */
	async function judgeSetup(
		stripe: Stripe,
		setup: Stripe.SetupIntent,
		keys: (step: string) => Stripe.RequestOptions,
		when: "confirmed" | "lookup",
	): Promise<ConnectorOutcome | null> {
		switch (setup.status) {
			case "succeeded":
				return approved(setup.id);
			case "requires_action":
				// 3-D Secure that no buyer can take (no return page, or a challenge whose time is over): cancelled. Found by a
				// lookup, nothing was set up; just confirmed, the issuer wants an authentication.
				await cancelSetup(stripe, setup.id, keys, when === "lookup");
				return when === "lookup" ? null : declined(setup.id, AUTHENTICATION_REQUIRED_REASON);
			case "requires_payment_method":
			case "requires_confirmation":
			case "canceled":
				if (setup.last_setup_error || (when === "confirmed" && setup.status === "requires_payment_method"))
					return declined(setup.id, codeOf(setup.last_setup_error));
				if (when === "confirmed") return failed(setup.status, setup.id);
				// Never confirmed: nothing was asked of the issuer.
				if (setup.status !== "canceled") await cancelSetup(stripe, setup.id, keys, true);
				return null;
			default:
				return failed(setup.status, setup.id);
		}
	}

	async function cancelSetup(stripe: Stripe, id: string, keys: (step: string) => Stripe.RequestOptions, mustCancel: boolean) {
		try {
			await stripe.setupIntents.cancel(id, {}, keys("cancel"));
		} catch (err) {
			if (mustCancel || !(err instanceof Stripe.errors.StripeError)) throw err;
		}
	}

	/** A capture's outcome by its intent; null while the hold is not captured. */
	function judgeCapture(intent: Stripe.PaymentIntent): ConnectorOutcome | null {
		if (intent.status === "succeeded") return approved(intent.id);
		if (intent.status === "requires_capture") return null;
		// Voided, expired (Stripe cancels a hold after 7 days) or never approved: there is no hold to capture.
		return declinedAs(intent.id, "authorization_not_found", true);
	}

	/** A void's outcome by its intent; null while the hold stands. */
	function judgeVoid(intent: Stripe.PaymentIntent): ConnectorOutcome | null {
		if (intent.status === "canceled") return approved(intent.id);
		if (intent.status === "requires_capture") return null;
		return declinedAs(intent.id, "already_captured", true);
	}

	/** The refund made under our key, by its metadata: a refund's id is only known once Stripe answers. */
	async function refundByKey(stripe: Stripe, chargeReference: string, idempotencyKey: string): Promise<Stripe.Refund | null> {
		for await (const refund of stripe.refunds.list({ payment_intent: chargeReference, limit: 100 })) {
			if (refund.metadata?.idempotency_key === idempotencyKey) return refund;
		}
		return null;
	}

	function judgeRefund(refund: Stripe.Refund): ConnectorOutcome {
		switch (refund.status) {
			case "succeeded":
			case "pending":
				return approved(refund.id);
			case "failed":
			case "canceled":
				return declinedAs(refund.id, refund.failure_reason ?? "refund_failed", false);
			default:
				return failed(refund.status ?? "unknown_refund_status", refund.id);
		}
	}

	async function lookupOn(stripe: Stripe, op: LookupOp, keys: (step: string) => Stripe.RequestOptions): Promise<ConnectorOutcome | null> {
		switch (op.kind) {
			// A verification made nothing to confirm (only versions before 3-D Secure made a SetupIntent for it).
			case "verify":
			case "setup":
				return op.reference?.startsWith("seti_")
					? judgeSetup(stripe, await stripe.setupIntents.retrieve(op.reference), keys, "lookup")
					: null;
			case "charge":
			case "authorize":
				// No reference: the intent was never remembered, so never confirmed.
				return op.reference ? judgeIntent(stripe, await stripe.paymentIntents.retrieve(op.reference), keys, "lookup") : null;
			// Without the hold's reference: null, since trying a capture or void again is judged by the hold's state and never moves money twice.
			case "capture":
				return op.reference ? judgeCapture(await stripe.paymentIntents.retrieve(op.reference)) : null;
			case "void":
				return op.reference ? judgeVoid(await stripe.paymentIntents.retrieve(op.reference)) : null;
			case "refund": {
				if (op.reference) return judgeRefund(await stripe.refunds.retrieve(op.reference));
				if (!op.chargeReference) throw new Error(`lookup of refund ${op.idempotencyKey} needs the charge it refunds`);
				const refund = await refundByKey(stripe, op.chargeReference, op.idempotencyKey);
				return refund ? judgeRefund(refund) : null;
			}
		}
	}

	return {
		decidingMs: MOST_REQUESTS * timeout + 5_000,

		verifyEvent(payload, signature, webhookSecret) {
			try {
				return Stripe.webhooks.constructEvent(payload, signature ?? "", webhookSecret);
			} catch (err) {
				// Anything else is thrown once the signature matched: a body that is not JSON, or not a snapshot event.
				return err instanceof Stripe.errors.StripeSignatureVerificationError ? StripeEventError.BadSignature : StripeEventError.Malformed;
			}
		},

		// payByIntent puts our key on every intent it creates (metadata.idempotency_key).
		async chargeKeyOf(mid, concerns) {
			const stripe = clientOf(mid);
			if (!stripe) return StripeEventError.Unavailable;
			try {
				const intentId = concerns.paymentIntent ?? intentOf(await stripe.charges.retrieve(concerns.charge!));
				// A charge made without an intent (Stripe's older Charges API): not one of ours.
				if (intentId === null) return { chargeKey: null };
				const intent = await stripe.paymentIntents.retrieve(intentId);
				return { chargeKey: intent.metadata?.idempotency_key ?? null };
			} catch (err) {
				if (!(err instanceof Stripe.errors.StripeError)) throw err;
				// Unknown to the MID's Stripe account: another account's payment (localstripe's 404 has no code, Stripe's resource_missing).
				if (err.statusCode === 404) return StripeEventError.NotThisAccount;
				if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError)
					return StripeEventError.KeyRefused;
				return StripeEventError.Unavailable;
			}
		},

		// Submitted at once (submit: true): Stripe sends the evidence to the issuer and the dispute goes under review.
		async submitDisputeEvidence(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return { error: EvidenceError.Refused };
			try {
				const dispute = await stripe.disputes.update(op.reference, { evidence: op.evidence, submit: true });
				return { status: disputeStatusOf(dispute.status) };
			} catch (err) {
				if (!(err instanceof Stripe.errors.StripeError)) throw err;
				// A closed dispute, one past its due date, or a key that may not: Stripe refused it.
				const refused = err instanceof Stripe.errors.StripeInvalidRequestError || err instanceof Stripe.errors.StripePermissionError;
				return { error: refused ? EvidenceError.Refused : EvidenceError.Unavailable };
			}
		},

		// The card on the MID's account, with its CVC: Stripe's checks run when the payment method is attached (the issuer
		// may decline there). No SetupIntent: one could ask for 3-D Secure, which only the payment (step 5) can show the buyer.
		async verify(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
			try {
				return approved((await cardOnAccount(stripe, op, op.cvc, keysOf(op.idempotencyKey))).paymentMethod);
			} catch (err) {
				return outcomeOfError(err, null);
			}
		},

		charge(op, remember) {
			return payByIntent(op, false, op.initiator === "merchant", remember);
		},

		authorize(op, remember) {
			// A hold is placed at checkout, the buyer present.
			return payByIntent(op, true, false, remember);
		},

		// The buyer present: the issuer may ask for a challenge (docs/authentication.md).
		async pay(op, remember) {
			const always = op.authenticate === "ALWAYS";
			const outcome =
				op.kind === "setup"
					? await setUpForLater(op, remember, always)
					: await payByIntent(op, op.kind === "authorize", false, remember, true, always);
			// Approved or declined without a challenge: whether it was authenticated, Stripe says on the charge (not read yet).
			return outcome.status === "AWAITING_BUYER" || outcome.authentication ? outcome : { ...outcome, authentication: null };
		},

		async afterChallenge(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return declinedAs(op.reference, MERCHANT_REFUSED, false);
			try {
				if (op.kind === "setup") return afterSetupChallengeOf(await stripe.setupIntents.retrieve(op.reference));
				return afterChallengeOf(await stripe.paymentIntents.retrieve(op.reference));
			} catch (err) {
				return outcomeOfError(err, op.reference, true);
			}
		},

		async capture(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return declinedAs(op.reference, MERCHANT_REFUSED, false);
			try {
				const intent = await stripe.paymentIntents.capture(
					op.reference,
					{ amount_to_capture: op.amount },
					keysOf(op.idempotencyKey)("capture"),
				);
				return judgeCapture(intent) ?? failed(intent.status, op.reference);
			} catch (err) {
				// Refused for the intent's state (captured already, voided): its state is the answer.
				if (isInvalidRequest(err)) {
					const judged = await judgeAfter(stripe, op.reference, judgeCapture);
					if (judged) return judged;
				}
				return outcomeOfError(err, op.reference);
			}
		},

		async void(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return declinedAs(op.reference, MERCHANT_REFUSED, false);
			try {
				const intent = await stripe.paymentIntents.cancel(op.reference, {}, keysOf(op.idempotencyKey)("void"));
				return judgeVoid(intent) ?? failed(intent.status, op.reference);
			} catch (err) {
				if (isInvalidRequest(err)) {
					const judged = await judgeAfter(stripe, op.reference, judgeVoid);
					if (judged) return judged;
				}
				return outcomeOfError(err, op.reference);
			}
		},

		async refund(op, remember) {
			const stripe = clientOf(op.mid);
			if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
			try {
				// Made already under our key (its answer was lost): that one is the answer, even where Idempotency-Key is ignored.
				const made =
					(await refundByKey(stripe, op.reference, op.idempotencyKey)) ??
					(await stripe.refunds.create(
						{ payment_intent: op.reference, amount: op.amount, metadata: { idempotency_key: op.idempotencyKey } },
						// The same for every attempt: Stripe itself then never makes a second refund for our key.
						{ idempotencyKey: `${op.idempotencyKey}:refund` },
					));
				await remember(made.id);
				return judgeRefund(made);
			} catch (err) {
				return outcomeOfError(err, null);
			}
		},

		async lookup(op) {
			const stripe = clientOf(op.mid);
			if (!stripe) return failed(MERCHANT_REFUSED, op.reference);
			try {
				return await lookupOn(stripe, op, keysOf(op.idempotencyKey));
			} catch (err) {
				return outcomeOfError(err, op.reference, true);
			}
		},
	};
}

/** The intent's state judged after a refused request; null when it cannot be read or judged. */
async function judgeAfter(
	stripe: Stripe,
	reference: string,
	judge: (intent: Stripe.PaymentIntent) => ConnectorOutcome | null,
): Promise<ConnectorOutcome | null> {
	try {
		return judge(await stripe.paymentIntents.retrieve(reference));
	} catch (err) {
		if (err instanceof Stripe.errors.StripeError) return null;
		throw err;
	}
}

/** A charge's PaymentIntent id, expanded or not. */
function intentOf(charge: Stripe.Charge): string | null {
	const intent = charge.payment_intent;
	return typeof intent === "string" ? intent : (intent?.id ?? null);
}

/** The library's host, port and protocol for another server; none for Stripe itself. */
function serverOf(apiBase: string | undefined): { host?: string; port?: string; protocol?: "http" | "https" } {
	if (!apiBase) return {};
	const url = new URL(apiBase);
	const protocol = url.protocol === "http:" ? "http" : "https";
	return { host: url.hostname, port: url.port || (protocol === "http" ? "80" : "443"), protocol };
}
