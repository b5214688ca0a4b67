// A hold's capture and void. Stripe refuses either for the intent's state
// (captured already, voided, expired): the intent's state is then the answer.
import Stripe from "stripe";
import type { Connector, ConnectorOutcome } from "../connector";
import { keysOf, type StripeClients } from "./client";
import { approved, declinedAs, failed, isInvalidRequest, MERCHANT_REFUSED, outcomeOfError } from "./outcomes";

type HoldOp = Parameters<Connector["void"]>[0];
/** What a hold's intent says for the operation; null while the operation is still to be done. */
type HoldJudge = (intent: Stripe.PaymentIntent) => ConnectorOutcome | null;

export async function capture(clients: StripeClients, op: Parameters<Connector["capture"]>[0]): Promise<ConnectorOutcome> {
	return onHold(clients, op, judgeCapture, (stripe, keys) =>
		stripe.paymentIntents.capture(op.reference, { amount_to_capture: op.amount }, keys("capture")),
	);
}

export async function voidHold(clients: StripeClients, op: HoldOp): Promise<ConnectorOutcome> {
	return onHold(clients, op, judgeVoid, (stripe, keys) => stripe.paymentIntents.cancel(op.reference, {}, keys("void")));
}

/** Runs a capture or void, judged by the intent it answers, or by the intent's state when Stripe refused it. */
async function onHold(
	clients: StripeClients,
	op: HoldOp,
	judge: HoldJudge,
	act: (stripe: Stripe, keys: ReturnType<typeof keysOf>) => Promise<Stripe.PaymentIntent>,
): Promise<ConnectorOutcome> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return declinedAs(op.reference, MERCHANT_REFUSED, false);
	try {
		const intent = await act(stripe, keysOf(op.idempotencyKey));
		return judge(intent) ?? failed(intent.status, op.reference);
	} catch (err) {
		const judged = isInvalidRequest(err) ? await judgeAfter(stripe, op.reference, judge) : null;
		return judged ?? outcomeOfError(err, op.reference);
	}
}

/** A capture's outcome by its intent; null while the hold is not captured. */
export function judgeCapture(intent: Stripe.PaymentIntent): ConnectorOutcome | null {
	if (intent.status === "succeeded") return approved(intent.id);
	if (intent.status === "requires_capture") return null;
	// Voided, expired (Stripe cancels a hold after 7 days) or never approved: there is no hold to capture.
	return declinedAs(intent.id, "authorization_not_found", true);
}

/** A void's outcome by its intent; null while the hold stands. */
export function judgeVoid(intent: Stripe.PaymentIntent): ConnectorOutcome | null {
	if (intent.status === "canceled") return approved(intent.id);
	if (intent.status === "requires_capture") return null;
	return declinedAs(intent.id, "already_captured", true);
}

/** The intent's state judged after a refused request; null when it cannot be read or judged. */
async function judgeAfter(stripe: Stripe, reference: string, judge: HoldJudge): Promise<ConnectorOutcome | null> {
	try {
		return judge(await stripe.paymentIntents.retrieve(reference));
	} catch (err) {
		if (err instanceof Stripe.errors.StripeError) return null;
		throw err;
	}
}
