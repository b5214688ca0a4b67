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
// - 3-D Secure is not shown to the buyer yet: a payment Adyen wants
//   authenticated is declined authentication_required.
// - An answer that was lost is settled by Adyen's notification for our
//   reference; until it came, a lookup cannot tell (ERROR), and nothing is paid again.
// - A dispute's evidence is submitted in Adyen's Customer Area (its Disputes
//   API is another contract): refused here.
import { AUTHENTICATION_REQUIRED_REASON, EvidenceError } from "../../../../shared/contracts/payments";
import type { Connector } from "../connector";
import { type AdyenCardStore, type AdyenOutcomeStore, createAdyenClients } from "./client";
import { lookup } from "./lookups";
import { cancel, capture, refund } from "./modifications";
import { declinedAs } from "./outcomes";
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
	/** Where an issuer's page sends the buyer back, inside the card frame. */
	returnUrl: string;
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
				{ initiator: "customer", hold: op.kind === "authorize", authenticateAlways: op.authenticate === "ALWAYS" },
				remember,
				op.kind,
			);
			return { ...outcome, authentication: outcome.authentication ?? null };
		},

		// No challenge is ever asked (above): nothing awaits the buyer.
		afterChallenge: async op => declinedAs(op.reference, AUTHENTICATION_REQUIRED_REASON, false),

		capture: op => capture(clients, op),
		void: op => cancel(clients, op),
		refund: op => refund(clients, op),

		lookup: op => lookup(clients, op),

		submitDisputeEvidence: async () => ({ error: EvidenceError.Refused }),
	};
}
