// A notification request Adyen sent to a MID's endpoint (POST /api/processors/adyen/{midId}/notifications),
// verified with the MID's own HMAC key before anything is read from it. What
// Adyen did with an operation of ours is kept (adyen_outcomes, the first word
// for each) for its lookup; the notices it brings (a dispute's stage, a fraud
// report) go to billing, which applies each once. Items for another merchant
// account or the other platform, and payments this service did not make, bring
// nothing. Both are scoped by the account and Adyen merchant account, not by
// the MID: MIDs sharing a merchant account may share its webhook.
import { AdyenNotificationError, type ProcessorNotice } from "../../shared/contracts/payments";
import { insertOnce } from "../../shared/persistence";
import { HASHED_REFERENCE } from "./connectors/adyen/client";
import { readItem, verifiedItems } from "./connectors/adyen/notifications";
import type { PaymentsDeps } from "./deps";

export async function adyenNotification(
	deps: PaymentsDeps,
	input: { midId: number; payload: string },
): Promise<{ notices: { eventId: string; notice: ProcessorNotice }[] } | AdyenNotificationError> {
	const processor = await deps.processors.processorFor(input.midId);
	const adyen = processor?.name === "adyen" ? processor.mid.adyen : undefined;
	if (!adyen) return AdyenNotificationError.NotAdyenMid;
	const hmacKey = await deps.webhookSecretOf(input.midId);
	if (hmacKey === null) return AdyenNotificationError.NoHmacKey;
	const verified = verifiedItems(input.payload, hmacKey);
	if (typeof verified === "string") return verified;
	const notices: { eventId: string; notice: ProcessorNotice }[] = [];
	const scope = `${processor!.mid.accountId}:${adyen.merchantAccount}`;
	const mid = { merchantAccount: adyen.merchantAccount, live: adyen.liveUrlPrefix !== null };
	for (const item of verified.items) {
		const reading = readItem(item, mid, verified.live);
		if (reading.kind === "outcome") {
			const { reference, event, success, pspReference, reason } = reading.outcome;
			await insertOnce(deps.db.adyenOutcomes, {
				_id: `${scope}:${reference}:${event}`,
				success,
				pspReference,
				reason,
				receivedAt: deps.now(),
			});
		} else if (reading.kind === "notice") {
			const midId = await chargeMidOf(deps, reading.chargeReference, scope);
			if (midId !== null)
				notices.push({ eventId: reading.id, notice: { ...reading.notice, midId, chargeKey: reading.chargeReference } as ProcessorNotice });
		}
	}
	return { notices };
}

/**
 * The MID that made the charge a notice names: any MID of the same account on the same Adyen merchant account (MIDs
 * sharing one may share its webhook); null for a payment this service did not make there.
 */
async function chargeMidOf(deps: PaymentsDeps, chargeKey: string, scope: string): Promise<number | null> {
	if (chargeKey.startsWith(HASHED_REFERENCE)) return null;
	const charge = await deps.db.operations.findById(chargeKey).lean();
	if (charge?.processor !== "adyen" || charge.midId === null) return null;
	const processor = await deps.processors.processorFor(charge.midId);
	const adyen = processor?.name === "adyen" ? processor.mid.adyen : undefined;
	return adyen && `${processor!.mid.accountId}:${adyen.merchantAccount}` === scope ? charge.midId : null;
}
