// A webhook delivery's life, in one place. Every move is a conditional update
// on the expected current state (and, for a worker, on still holding the
// lease), so two nodes or an operator racing a worker cannot both win.
//
//   PENDING   -> PENDING    a worker claims it (lease set, attempts + 1)
//   PENDING   -> PENDING    a stopping worker gives back a claim it did not attempt
//   PENDING   -> DELIVERED  the receiver answered 2xx
//   PENDING   -> PENDING    the attempt failed (non-2xx, 3xx, timeout, network,
//                           refused address, no URL): lease released,
//                           nextAttemptAt = now + backoff
//   PENDING   -> DEAD       an attempt failed after the retry window closed
//   PENDING   -> WAITING    a worker claimed it and the account has no webhook URL:
//                           nothing is sent, the attempt number is given back
//   WAITING   -> PENDING    the account gets a URL: released oldest first, with a
//                           fresh retry window (or by an operator's redeliver)
//   WAITING   -> DEAD       released after the waiting window (WEBHOOK_WAIT_DAYS)
//   PENDING   -> PENDING    an operator redelivers it: due now, fresh window
//   DELIVERED -> PENDING    an operator redelivers it: due now, fresh window
//   DEAD      -> PENDING    an operator redelivers it: due now, fresh window
import { stateMachine } from "../../shared/state-machine";

export enum DeliveryStatus {
	Pending = "PENDING",
	/** The account has no webhook URL: kept, never attempted, until it has one. */
	Waiting = "WAITING",
	Delivered = "DELIVERED",
	Dead = "DEAD",
}

export const DELIVERY_TRANSITIONS: Record<DeliveryStatus, DeliveryStatus[]> = {
	[DeliveryStatus.Pending]: [DeliveryStatus.Pending, DeliveryStatus.Waiting, DeliveryStatus.Delivered, DeliveryStatus.Dead],
	[DeliveryStatus.Waiting]: [DeliveryStatus.Pending, DeliveryStatus.Dead],
	[DeliveryStatus.Delivered]: [DeliveryStatus.Pending],
	[DeliveryStatus.Dead]: [DeliveryStatus.Pending],
};

/** A delivery's status write (shared/state-machine.ts). */
export const deliveryMove = stateMachine<"status", DeliveryStatus>("delivery", "status", DELIVERY_TRANSITIONS);

/** PENDING -> PENDING: a worker claims it, gives the claim back, or schedules its retry. */
export const STAY_PENDING = deliveryMove(DeliveryStatus.Pending, DeliveryStatus.Pending);

/** The states a delivery may leave for `to`. */
export function statesLeadingTo(to: DeliveryStatus): DeliveryStatus[] {
	return (Object.keys(DELIVERY_TRANSITIONS) as DeliveryStatus[]).filter(from => DELIVERY_TRANSITIONS[from].includes(to));
}

// An email's life (docs/emails.md#retries). Every move is a conditional update
// on the expected state (and, for a worker, on still holding the lease).
//
//   PENDING -> PENDING  a worker claims it (lease set, attempts + 1), or the SMTP
//                       server did not take it: retried after a backoff
//   PENDING -> SENT     the SMTP server accepted it
//   PENDING -> SKIPPED  the account turned its emails off before it was sent
//   PENDING -> DEAD     the SMTP server still did not take it after the retry window
export enum EmailStatus {
	Pending = "PENDING",
	Sent = "SENT",
	Skipped = "SKIPPED",
	Dead = "DEAD",
}

export const EMAIL_TRANSITIONS: Record<EmailStatus, EmailStatus[]> = {
	[EmailStatus.Pending]: [EmailStatus.Pending, EmailStatus.Sent, EmailStatus.Skipped, EmailStatus.Dead],
	[EmailStatus.Sent]: [],
	[EmailStatus.Skipped]: [],
	[EmailStatus.Dead]: [],
};

/** An email's status write (shared/state-machine.ts). */
export const emailMove = stateMachine<"status", EmailStatus>("email", "status", EMAIL_TRANSITIONS);
