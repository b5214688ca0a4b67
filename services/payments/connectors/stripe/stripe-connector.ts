// Our connector to Stripe, which speaks to it only through the official library. Each MID
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
import type { StripeEventError } from "../../../../shared/contracts/payments";
import type { Connector, MidContext } from "../connector";
import { cardOnAccount, createStripeClients, keysOf, type StripeKeyStore } from "./client";
import { submitDisputeEvidence } from "./disputes";
import type { EventConcerns } from "./events";
import { capture, voidHold } from "./holds";
import { lookup } from "./lookups";
import { approved, declinedAs, MERCHANT_REFUSED, outcomeOfError } from "./outcomes";
import { afterChallengeOf, payByIntent } from "./payments";
import { refund } from "./refunds";
import { afterSetupChallengeOf, setUpForLater } from "./setups";
import { chargeKeyOf, verifyEvent } from "./webhooks";

const DEFAULT_TIMEOUT_MS = 30_000;
/** The most requests one operation makes one after another: a first charge's customer, payment method, attach, intent, confirm, cancel. */
const MOST_REQUESTS = 6;

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

/**
 * The connector: one file per operation (payments.ts, setups.ts, holds.ts, refunds.ts, lookups.ts, disputes.ts,
 * webhooks.ts), sharing the clients and the dialect (client.ts) and one mapping of Stripe's errors (outcomes.ts).
 */
export function createStripeConnector(options: StripeConnectorOptions): StripeConnector {
	const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	const clients = createStripeClients({ ...options, timeout });
	return {
		decidingMs: MOST_REQUESTS * timeout + 5_000,
		verifyEvent,
		chargeKeyOf: (mid, concerns) => chargeKeyOf(clients, mid, concerns),
		submitDisputeEvidence: op => submitDisputeEvidence(clients, op),

		// The card on the MID's account, with its CVC: Stripe's checks run when the payment method is attached (the issuer
		// may decline there). No SetupIntent: one could ask for 3-D Secure, which only the payment (step 5) can show the buyer.
		async verify(op) {
			const stripe = clients.clientOf(op.mid);
			if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
			try {
				return approved((await cardOnAccount(clients, stripe, op, op.cvc, keysOf(op.idempotencyKey))).paymentMethod);
			} catch (err) {
				return outcomeOfError(err, null);
			}
		},

		charge: (op, remember) => payByIntent(clients, op, { hold: false, offSession: op.initiator === "merchant" }, remember),
		// A hold is placed at checkout, the buyer present.
		authorize: (op, remember) => payByIntent(clients, op, { hold: true, offSession: false }, remember),

		// The buyer present: the issuer may ask for a challenge (docs/authentication.md).
		async pay(op, remember) {
			const always = op.authenticate === "ALWAYS";
			const outcome =
				op.kind === "setup"
					? await setUpForLater(clients, op, remember, always)
					: await payByIntent(clients, op, { hold: op.kind === "authorize", offSession: false, challenge: { always } }, remember);
			// Approved or declined without a challenge: whether it was authenticated, Stripe says on the charge (not read yet).
			return outcome.status === "AWAITING_BUYER" || outcome.authentication ? outcome : { ...outcome, authentication: null };
		},

		async afterChallenge(op) {
			const stripe = clients.clientOf(op.mid);
			if (!stripe) return declinedAs(op.reference, MERCHANT_REFUSED, false);
			try {
				if (op.kind === "setup") return afterSetupChallengeOf(clients, await stripe.setupIntents.retrieve(op.reference));
				return afterChallengeOf(clients, await stripe.paymentIntents.retrieve(op.reference));
			} catch (err) {
				return outcomeOfError(err, op.reference, true);
			}
		},

		capture: op => capture(clients, op),
		void: op => voidHold(clients, op),
		refund: (op, remember) => refund(clients, op, remember),
		lookup: op => lookup(clients, op),
	};
}
