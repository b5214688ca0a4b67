// Our connector to Adyen, which speaks to it only through the official library
// (@adyen/api-library, its Checkout API). Each MID is an Adyen merchant
// account, reached with its API key on Adyen's test platform or, with its live
// URL prefix, on the live one; the account must be allowed to send raw card
// numbers, as a Stripe MID's must.
//
// Decisions:
// - One /payments request per operation, under Adyen's Idempotency-Key for our
//   key: a repeat of the operation gets Adyen's first answer, never a second payment.
// - The card is stored at its first payment (or its verification), for this
//   merchant account's shopper of the card; renewals charge the stored card,
//   merchant-initiated (ContAuth, Subscription). A card not stored at this
//   merchant account (a cascade moved it here) is sent as it is, with the
//   network's transaction id of its first payment.
// - A hold is a payment with manualCapture; captures, cancels and refunds are
//   taken by Adyen ("received") and done after: approved when taken.
// - 401/403 decline with merchant_account_refused (billing moves to another
//   MID), as on Stripe.
// - 3-D Secure by redirect (challenges.ts, docs/authentication.md): a first
//   payment (charge, hold, set-up) Adyen answers RedirectShopper with a GET
//   redirect is a challenge, the issuer's page shown in the card frame. Its
//   return URL is our route for that payment, GET /api/processors/adyen/returns/{token},
//   the token the SHA-256 of the MID and our key: it keeps the redirectResult
//   Adyen appends, once, and moves no money. No native 3-D Secure is asked
//   for, so every other buyer action (a POST redirect, IdentifyShopper,
//   ChallengeShopper, PresentToShopper) stays a decline, authentication_required,
//   as does any buyer action on a renewal or a verification.
// - After the challenge the payment is read, never paid again: Adyen's
//   AUTHORISATION notification if it came, else /payments/details with the
//   redirectResult under its own Idempotency-Key. Authorised is approved
//   (CHALLENGED), refusal 11 authentication_failed (FAILED). A challenge
//   whose buyer never came back is cancelled by our reference (Adyen's
//   technical cancel) once the checkout's session is over: nothing moved.
// - An answer that was lost is settled by Adyen's notification for our
//   reference; until it came, a lookup cannot tell (ERROR), and nothing is paid again.
// - A dispute's evidence is submitted in Adyen's Customer Area (its Disputes
//   API is another contract): refused here.
import { EvidenceError } from "../../../../shared/contracts/payments";
import type { Connector } from "../connector";
import { type AdyenCardStore, type AdyenOutcomeStore, createAdyenClients } from "./client";
import { afterChallenge, lookup } from "./lookups";
import { cancel, capture, refund } from "./modifications";
import { payAtAdyen } from "./payments";

const DEFAULT_TIMEOUT_MS = 30_000;
/** A zero-amount verification names a currency: any the merchant account takes. */
const VERIFY_CURRENCY = "EUR";

export interface AdyenConnectorOptions {
	/** Another server speaking Adyen's Checkout API in place of Adyen's test platform (Prism); undefined: Adyen itself. */
	apiBase?: string;
	/** Per request. */
	timeoutMs?: number;
	cards: AdyenCardStore;
	outcomes: AdyenOutcomeStore;
	/** The service's address as buyers reach it: an issuer's page sends the buyer back to its return route there. */
	buyerBaseUrl: string;
}

export interface AdyenConnector extends Connector {
	/** How long an operation may take at most (its one request timing out); the ledger's deciding time. */
	readonly decidingMs: number;
}

export function createAdyenConnector(options: AdyenConnectorOptions): AdyenConnector {
	const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	const clients = createAdyenClients({ ...options, timeoutMs });
	return {
		decidingMs: timeoutMs + 5_000,

		// A zero-amount authorisation with the CVC, the card stored for later.
		verify: (op, remember) =>
			payAtAdyen(
				clients,
				{ ...op, amount: 0, currency: VERIFY_CURRENCY },
				{ initiator: "customer", hold: false, cvc: op.cvc },
				remember,
				"verify",
			),

		charge: (op, remember) =>
			payAtAdyen(clients, op, { initiator: op.initiator, hold: false, networkTransactionId: op.networkTransactionId }, remember, "charge"),
		authorize: (op, remember) => payAtAdyen(clients, op, { initiator: "customer", hold: true }, remember, "authorize"),

		async pay(op, remember) {
			const outcome = await payAtAdyen(
				clients,
				op,
				{ initiator: "customer", hold: op.kind === "authorize", authenticateAlways: op.authenticate === "ALWAYS", challenge: true },
				remember,
				op.kind,
			);
			if (outcome.status === "AWAITING_BUYER") return outcome;
			return { ...outcome, authentication: outcome.authentication ?? null };
		},

		afterChallenge: op => afterChallenge(clients, op),

		capture: op => capture(clients, op),
		void: op => cancel(clients, op),
		refund: op => refund(clients, op),

		lookup: op => lookup(clients, op),

		submitDisputeEvidence: async () => ({ error: EvidenceError.Refused }),
	};
}
