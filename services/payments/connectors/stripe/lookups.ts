// What became of an operation whose answer was lost, found by the reference
// remembered for it (or, for a refund, our key). Never moves money: an intent
// left unconfirmed is cancelled. null: nothing moved, the key may be tried again.
import type Stripe from "stripe";
import type { Connector, ConnectorOutcome } from "../connector";
import { keysOf, type StepKeys, type StripeClients } from "./client";
import { judgeCapture, judgeVoid } from "./holds";
import { failed, MERCHANT_REFUSED, outcomeOfError } from "./outcomes";
import { judgeIntent } from "./payments";
import { lookupRefund } from "./refunds";
import { lookupSetup } from "./setups";

type LookupOp = Parameters<Connector["lookup"]>[0];

export async function lookup(clients: StripeClients, op: LookupOp): Promise<ConnectorOutcome | null> {
	const stripe = clients.clientOf(op.mid);
	if (!stripe) return failed(MERCHANT_REFUSED, op.reference);
	try {
		return await lookupOn(stripe, op, keysOf(op.idempotencyKey));
	} catch (err) {
		return outcomeOfError(err, op.reference, true);
	}
}

async function lookupOn(stripe: Stripe, op: LookupOp, keys: StepKeys): Promise<ConnectorOutcome | null> {
	switch (op.kind) {
		// A verification made nothing to confirm (only versions before 3-D Secure made a SetupIntent for it).
		case "verify":
		case "setup":
			return lookupSetup(stripe, op.reference, keys);
		case "charge":
		case "authorize":
			// No reference: the intent was never remembered, so never confirmed.
			return op.reference ? judgeIntent(stripe, await stripe.paymentIntents.retrieve(op.reference), keys, "lookup") : null;
		// Without the hold's reference: null, since trying a capture or void again is judged by the hold's state and never moves money twice.
		case "capture":
			return op.reference ? judgeCapture(await stripe.paymentIntents.retrieve(op.reference)) : null;
		case "void":
			return op.reference ? judgeVoid(await stripe.paymentIntents.retrieve(op.reference)) : null;
		case "refund":
			return lookupRefund(stripe, op);
	}
}
