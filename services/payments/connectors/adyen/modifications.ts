// A payment's modifications at Adyen: a hold's capture or cancel, and refunds,
// full or partial. Adyen takes each one ("received") and does it after: its
// outcome comes as a notification (CAPTURE, CANCELLATION, REFUND), a failure
// too. Taken is approved here, as Stripe's pending refund is.
import type { Connector, ConnectorOutcome, MidContext } from "../connector";
import { type AdyenClients, idempotencyOf, referenceOf } from "./client";
import { approved, declinedAs, MERCHANT_REFUSED, outcomeOfError } from "./outcomes";

interface Modification {
	idempotencyKey: string;
	mid: MidContext;
	/** The payment's pspReference. */
	reference: string;
}

/** What a modification's answer tells: taken ("received") under Adyen's own reference for it. */
function taken(answer: { pspReference?: string; status?: string }): ConnectorOutcome {
	return approved(answer.pspReference ?? null);
}

export async function capture(clients: AdyenClients, op: Parameters<Connector["capture"]>[0]): Promise<ConnectorOutcome> {
	return modify(clients, op, (api, merchantAccount) =>
		api.captureAuthorisedPayment(
			op.reference,
			{ merchantAccount, reference: referenceOf(op.idempotencyKey), amount: { currency: op.currency, value: op.amount } },
			idempotencyOf(op.idempotencyKey, "capture"),
		),
	);
}

export async function cancel(clients: AdyenClients, op: Parameters<Connector["void"]>[0]): Promise<ConnectorOutcome> {
	return modify(clients, op, (api, merchantAccount) =>
		api.cancelAuthorisedPaymentByPspReference(
			op.reference,
			{ merchantAccount, reference: referenceOf(op.idempotencyKey) },
			idempotencyOf(op.idempotencyKey, "cancel"),
		),
	);
}

export async function refund(clients: AdyenClients, op: Parameters<Connector["refund"]>[0]): Promise<ConnectorOutcome> {
	return modify(clients, op, (api, merchantAccount) =>
		api.refundCapturedPayment(
			op.reference,
			{ merchantAccount, reference: referenceOf(op.idempotencyKey), amount: { currency: op.currency, value: op.amount } },
			idempotencyOf(op.idempotencyKey, "refund"),
		),
	);
}

type ModificationsApi = NonNullable<ReturnType<AdyenClients["apisOf"]>>["checkout"]["ModificationsApi"];

async function modify(
	clients: AdyenClients,
	op: Modification,
	send: (api: ModificationsApi, merchantAccount: string) => Promise<{ pspReference?: string; status?: string }>,
): Promise<ConnectorOutcome> {
	const apis = clients.apisOf(op.mid);
	if (!apis) return declinedAs(null, MERCHANT_REFUSED, false);
	try {
		return taken(await send(apis.checkout.ModificationsApi, apis.merchantAccount));
	} catch (err) {
		return outcomeOfError(err, null);
	}
}
