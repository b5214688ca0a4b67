// The body every attempt of an event sends: serialized once, at enqueue, so
// retries are byte-identical and a signature always covers the stored text.
import type { EventType } from "./states";

export interface EventInput {
	id: string;
	type: EventType;
	createdAt: string;
	accountId: number;
	customerId: number;
	transaction_id: number | null;
	data: Record<string, unknown>;
}

/** `{id, type, createdAt, accountId, customerId, transaction_id?, data}`; transaction_id is left out when null. */
export function serializeEnvelope(event: EventInput): string {
	const { id, type, createdAt, accountId, customerId, transaction_id, data } = event;
	return JSON.stringify({ id, type, createdAt, accountId, customerId, ...(transaction_id === null ? {} : { transaction_id }), data });
}
