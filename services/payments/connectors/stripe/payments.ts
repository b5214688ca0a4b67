// Charges and holds by PaymentIntent: created unconfirmed and remembered, then
// confirmed, so a lost answer is found again by its reference (lookups.ts),
// and an intent that was never confirmed is cancelled rather than left to move money.
import Stripe from "stripe";
import {
	AUTHENTICATION_FAILED_REASON,
	AUTHENTICATION_REQUIRED_REASON,
	OPERATION_IN_PROGRESS_REASON,
} from "../../../../shared/contracts/payments";
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
	isInvalidRequest,
	MERCHANT_REFUSED,
	outcomeOfError,
} from "./outcomes";

/** How an intent pays: a charge (automatic capture) or a hold (manual capture), and who is present. */
export interface IntentPayment {
	hold: boolean;
	/** A merchant's charge, no buyer present (a renewal). */
	offSession: boolean;
	/** The buyer is present to take the issuer's 3-D Secure challenge (the checkout's first payment); `always`: the product asks for one. */
	challenge?: { always: boolean };
}

/** When an intent is judged: just confirmed by us; found by a lookup (cancelled if never confirmed); found again after that cancel failed. */
export type IntentMoment = "confirmed" | "lookup" | "recheck";

/**
 * Create unconfirmed, remember, confirm. With `challenge`, the issuer's challenge is asked for instead of a decline:
 * the issuer's page (`redirect_to_url`), which returns to `returnUrl` inside the card frame.
 */
export function payByIntent(
	clients: StripeClients,
	op: MoneyOperation,
	how: IntentPayment & { challenge?: undefined },
	remember: Remember,
): Promise<ConnectorOutcome>;
export function payByIntent(
	clients: StripeClients,
	op: MoneyOperation,
	how: IntentPayment,
	remember: Remember,
): Promise<ConnectorOutcome | ChallengeAsked>;
export async function payByIntent(
	clients: StripeClients,
	op: MoneyOperation,
	how: IntentPayment,
	remember: Remember,
): Promise<ConnectorOutcome | ChallengeAsked> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
	const keys = keysOf(op.idempotencyKey);
	let reference: string | null = null;
	try {
		const card = await cardOnAccount(clients, stripe, op, undefined, keys);
		const created = await stripe.paymentIntents.create(intentParams(clients, op, how, card), keys("intent"));
		reference = created.id;
		await remember(created.id);
		const confirmed = await stripe.paymentIntents.confirm(created.id, confirmParams(clients, how), keys("confirm"));
		const asked = how.challenge ? challengeAsked(clients, confirmed) : null;
		if (asked) return asked;
		return (await judgeIntent(stripe, confirmed, keys, "confirmed")) ?? failed(confirmed.status, confirmed.id);
	} catch (err) {
		return outcomeOfError(err, reference);
	}
}

/** The intent as created: unconfirmed, carrying our key (metadata.idempotency_key, read back by webhooks.ts). */
function intentParams(
	clients: StripeClients,
	op: MoneyOperation,
	how: IntentPayment,
	card: StripeCardKeys,
): Stripe.PaymentIntentCreateParams {
	return {
		amount: op.amount,
		currency: op.currency.toLowerCase(),
		customer: card.customer,
		payment_method: card.paymentMethod,
		...(how.challenge ? buyerPresent(clients, how.challenge.always) : clients.noRedirects),
		confirm: false,
		metadata: { idempotency_key: op.idempotencyKey },
		...(how.hold ? { capture_method: "manual" as const } : {}),
		// The buyer's first payment: the card is kept for the merchant's later charges, which Stripe then sends
		// referring to this payment (exempt from authentication). localstripe refuses the parameter.
		...(how.challenge && clients.fullStripe ? { setup_future_usage: "off_session" as const } : {}),
	};
}

function confirmParams(clients: StripeClients, how: IntentPayment): Stripe.PaymentIntentConfirmParams {
	if (how.offSession && clients.fullStripe) return { off_session: true };
	const redirect = how.challenge ? clients.returnUrl : null;
	return redirect ? { return_url: redirect } : {};
}

/** What a first payment's intent came to after its challenge: the buyer authenticated, failed, or is still at it. */
export function afterChallengeOf(clients: StripeClients, intent: Stripe.PaymentIntent): ConnectorOutcome | ChallengeAsked {
	switch (intent.status) {
		case "succeeded":
		case "requires_capture":
			return { ...approved(intent.id), authentication: CHALLENGED };
		case "requires_action":
			return { status: "AWAITING_BUYER", reference: intent.id, challengeUrl: challengeUrlOf(clients, intent) ?? "" };
		case "requires_payment_method":
			return { ...declined(intent.id, AUTHENTICATION_FAILED_REASON), authentication: FAILED_AUTHENTICATION };
		default:
			return failed(intent.status, intent.id);
	}
}

/** What a charge's or hold's intent says at `when` (IntentMoment). Undecided: null; found by a lookup, null also means nothing moved. */
export async function judgeIntent(
	stripe: Stripe,
	intent: Stripe.PaymentIntent,
	keys: StepKeys,
	when: IntentMoment,
): Promise<ConnectorOutcome | null> {
	switch (intent.status) {
		case "succeeded":
		case "requires_capture":
			return approved(intent.id);
		case "requires_action":
			return judgeRequiringAction(stripe, intent, keys, when);
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

/**
 * 3-D Secure that no buyer can take (off session, or a challenge whose time is over): cancelled, so that it
 * never completes. Found by a lookup, it moved nothing; just confirmed, the issuer wants an authentication.
 */
async function judgeRequiringAction(
	stripe: Stripe,
	intent: Stripe.PaymentIntent,
	keys: StepKeys,
	when: IntentMoment,
): Promise<ConnectorOutcome | null> {
	if (when !== "recheck") await cancelIntent(stripe, intent.id, keys, when === "lookup");
	return when === "lookup" ? null : declined(intent.id, AUTHENTICATION_REQUIRED_REASON);
}

/** Cancels an intent that was created but not confirmed. Cancel refused: someone confirmed it meanwhile, so it is judged again. */
async function cancelUnconfirmed(stripe: Stripe, intent: Stripe.PaymentIntent, keys: StepKeys): Promise<ConnectorOutcome | null> {
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
async function cancelIntent(stripe: Stripe, id: string, keys: StepKeys, mustCancel: boolean) {
	try {
		await stripe.paymentIntents.cancel(id, {}, keys("cancel"));
	} catch (err) {
		if (mustCancel || !(err instanceof Stripe.errors.StripeError)) throw err;
	}
}
