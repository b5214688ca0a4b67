// The card set up for the merchant's later charges, the buyer present (a
// SCHEDULE checkout, a card update with nothing owed): a SetupIntent,
// created, remembered, then confirmed; the issuer may ask for a challenge.
import Stripe from "stripe";
import { AUTHENTICATION_FAILED_REASON, AUTHENTICATION_REQUIRED_REASON } from "../../../../shared/contracts/payments";
import type { ChallengeAsked, ConnectorOutcome, MoneyOperation, Remember } from "../connector";
import {
	buyerPresent,
	cardOnAccount,
	challengeAsked,
	challengeUrlOf,
	keysOf,
	type StepKeys,
	type StripeCardKeys,
	type StripeClients,
} from "./client";
import {
	approved,
	CHALLENGED,
	codeOf,
	declined,
	declinedAs,
	FAILED_AUTHENTICATION,
	failed,
	MERCHANT_REFUSED,
	outcomeOfError,
} from "./outcomes";

/** When a set-up is judged: just confirmed by us, or found by a lookup (cancelled if never confirmed). */
type SetupMoment = "confirmed" | "lookup";

export async function setUpForLater(
	clients: StripeClients,
	op: MoneyOperation,
	remember: Remember,
	always: boolean,
): Promise<ConnectorOutcome | ChallengeAsked> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
	const keys = keysOf(op.idempotencyKey);
	let reference: string | null = null;
	try {
		const card = await cardOnAccount(clients, stripe, op, undefined, keys);
		const setup = await stripe.setupIntents.create(setupParams(clients, op, card, always), keys("setup"));
		reference = setup.id;
		await remember(setup.id);
		const confirmParams = { payment_method: card.paymentMethod, ...(clients.returnUrl ? { return_url: clients.returnUrl } : {}) };
		const confirmed = await stripe.setupIntents.confirm(setup.id, confirmParams, keys("confirm"));
		return (
			challengeAsked(clients, confirmed) ??
			(await judgeSetup(stripe, confirmed, keys, "confirmed")) ??
			failed(confirmed.status, confirmed.id)
		);
	} catch (err) {
		return outcomeOfError(err, reference);
	}
}

/** The SetupIntent as created: for the merchant's later charges, carrying our key. */
function setupParams(clients: StripeClients, op: MoneyOperation, card: StripeCardKeys, always: boolean): Stripe.SetupIntentCreateParams {
	return {
		customer: card.customer,
		...buyerPresent(clients, always),
		usage: "off_session",
		metadata: { idempotency_key: op.idempotencyKey },
	};
}

/** What a set-up came to after its challenge: the buyer authenticated, failed, or is still at it. */
export function afterSetupChallengeOf(clients: StripeClients, setup: Stripe.SetupIntent): ConnectorOutcome | ChallengeAsked {
	switch (setup.status) {
		case "succeeded":
			return { ...approved(setup.id), authentication: CHALLENGED };
		case "requires_action":
			return { status: "AWAITING_BUYER", reference: setup.id, challengeUrl: challengeUrlOf(clients, setup) ?? "" };
		case "requires_payment_method":
		case "canceled":
			return { ...declined(setup.id, AUTHENTICATION_FAILED_REASON), authentication: FAILED_AUTHENTICATION };
		default:
			return failed(setup.status, setup.id);
	}
}

/** A verification's or set-up's SetupIntent found by a lookup (only versions before 3-D Secure made one to verify). */
export async function lookupSetup(stripe: Stripe, reference: string | null, keys: StepKeys): Promise<ConnectorOutcome | null> {
	if (!reference?.startsWith("seti_")) return null;
	return judgeSetup(stripe, await stripe.setupIntents.retrieve(reference), keys, "lookup");
}

/** What a set-up's SetupIntent says at `when`; undecided, or nothing set up: null. */
async function judgeSetup(stripe: Stripe, setup: Stripe.SetupIntent, keys: StepKeys, when: SetupMoment): Promise<ConnectorOutcome | null> {
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
			return judgeUnfinishedSetup(stripe, setup, keys, when);
		default:
			return failed(setup.status, setup.id);
	}
}

/** A SetupIntent that wants a payment method, a confirmation, or was cancelled. */
async function judgeUnfinishedSetup(
	stripe: Stripe,
	setup: Stripe.SetupIntent,
	keys: StepKeys,
	when: SetupMoment,
): Promise<ConnectorOutcome | null> {
	if (setup.last_setup_error || (when === "confirmed" && setup.status === "requires_payment_method"))
		return declined(setup.id, codeOf(setup.last_setup_error));
	if (when === "confirmed") return failed(setup.status, setup.id);
	// Never confirmed: nothing was asked of the issuer.
	if (setup.status !== "canceled") await cancelSetup(stripe, setup.id, keys, true);
	return null;
}

async function cancelSetup(stripe: Stripe, id: string, keys: StepKeys, mustCancel: boolean) {
	try {
		await stripe.setupIntents.cancel(id, {}, keys("cancel"));
	} catch (err) {
		if (mustCancel || !(err instanceof Stripe.errors.StripeError)) throw err;
	}
}
