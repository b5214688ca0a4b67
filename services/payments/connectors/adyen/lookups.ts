// What became of an operation whose answer was lost: Adyen's Checkout API has no
// read of a payment, so the notification Adyen sends for it tells
// (notifications.ts keeps it by our reference). Until it came, a lookup cannot
// tell: ERROR, the operation stays undecided, and it is never paid again.
import { OUTCOME_UNKNOWN_REASON } from "../../../../shared/contracts/payments";
import type { Connector, ConnectorOutcome } from "../connector";
import { type AdyenClients, referenceOf } from "./client";
import type { SettlingEvent } from "./notifications";
import { approved, declinedAs, failed } from "./outcomes";
import { outcomeOfRefusal } from "./refusals";

type LookupKind = Parameters<Connector["lookup"]>[0]["kind"];

/** The event whose notification tells an operation's outcome. */
const SETTLED_BY: Readonly<Record<LookupKind, SettlingEvent>> = Object.freeze({
	verify: "AUTHORISATION",
	setup: "AUTHORISATION",
	charge: "AUTHORISATION",
	authorize: "AUTHORISATION",
	capture: "CAPTURE",
	void: "CANCELLATION",
	refund: "REFUND",
});

export async function lookup(clients: AdyenClients, op: Parameters<Connector["lookup"]>[0]): Promise<ConnectorOutcome> {
	const merchantAccount = op.mid.adyen?.merchantAccount;
	const found = merchantAccount
		? await clients.outcomes.get({ accountId: op.mid.accountId, merchantAccount }, referenceOf(op.idempotencyKey), SETTLED_BY[op.kind])
		: null;
	if (!found) return failed(OUTCOME_UNKNOWN_REASON, op.reference);
	if (found.success) return approved(found.pspReference);
	const refusal = outcomeOfRefusal(null, found.reason);
	return declinedAs(found.pspReference, refusal.reason, refusal.hardDecline);
}
