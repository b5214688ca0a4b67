// The body every attempt of an event sends: serialized once, at enqueue, so
// retries are byte-identical and a signature always covers the stored text.
import type { WebhookEvent } from "../../shared/contracts/notifications";

/** `{id, type, createdAt, accountId, customerId, transaction_id?, data}`; transaction_id is left out when null. */
export function serializeEnvelope(event: WebhookEvent): string {
	const { id, type, createdAt, accountId, customerId, transaction_id, data } = event;
	return JSON.stringify({ id, type, createdAt, accountId, customerId, ...(transaction_id === null ? {} : { transaction_id }), data });
}
