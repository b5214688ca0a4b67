// Refunds. A refund's id is only known once Stripe answers, so ours is found
// by our key in its metadata: a refund whose answer was lost is found again
// rather than made twice, even where Idempotency-Key is ignored.
import type Stripe from "stripe";
import type { Connector, ConnectorOutcome, Remember } from "../connector";
import type { StripeClients } from "./client";
import { approved, declinedAs, failed, MERCHANT_REFUSED, outcomeOfError } from "./outcomes";

export async function refund(
	clients: StripeClients,
	op: Parameters<Connector["refund"]>[0],
	remember: Remember,
): Promise<ConnectorOutcome> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return declinedAs(null, MERCHANT_REFUSED, false);
	try {
		// Made already under our key (its answer was lost): that one is the answer.
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
}

/** A refund found by a lookup: by its remembered id, else by our key on the charge it refunds; null: none was made. */
export async function lookupRefund(stripe: Stripe, op: Parameters<Connector["lookup"]>[0]): Promise<ConnectorOutcome | null> {
	if (op.reference) return judgeRefund(await stripe.refunds.retrieve(op.reference));
	if (!op.chargeReference) throw new Error(`lookup of refund ${op.idempotencyKey} needs the charge it refunds`);
	const found = await refundByKey(stripe, op.chargeReference, op.idempotencyKey);
	return found ? judgeRefund(found) : null;
}

/** The refund made under our key, by its metadata. */
async function refundByKey(stripe: Stripe, chargeReference: string, idempotencyKey: string): Promise<Stripe.Refund | null> {
	for await (const made of stripe.refunds.list({ payment_intent: chargeReference, limit: 100 })) {
		if (made.metadata?.idempotency_key === idempotencyKey) return made;
	}
	return null;
}

function judgeRefund(made: Stripe.Refund): ConnectorOutcome {
	switch (made.status) {
		case "succeeded":
		case "pending":
			return approved(made.id);
		case "failed":
		case "canceled":
			return declinedAs(made.id, made.failure_reason ?? "refund_failed", false);
		default:
			return failed(made.status ?? "unknown_refund_status", made.id);
	}
}
