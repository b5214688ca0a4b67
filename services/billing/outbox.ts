// Events a billing change writes in the same update as the change itself; the
// relay (outbox-relay.ts) hands them to notifications afterwards.
import { randomUUID } from "node:crypto";
import type { BillingDeps } from "./deps";
import type { OutboxEvent } from "./models";

export function outboxEvent(
	deps: Pick<BillingDeps, "now">,
	type: OutboxEvent["type"],
	details: Pick<OutboxEvent, "transactionId"> = {},
): OutboxEvent {
	return { id: randomUUID(), type, createdAt: deps.now(), ...details };
}
