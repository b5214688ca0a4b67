// INVOICE_ISSUED and CREDIT_NOTE_ISSUED (docs/webhooks.md): invoicing issues
// the documents billing asks for and hands their events to notifications
// before it answers. Each event's id is derived from its document, so a
// request repeated after a crash sends the same event, which notifications and
// receivers drop as a repeat.
import { createHash } from "node:crypto";
import type { CustomerView } from "../../shared/contracts/billing";
import type { IssueRequest } from "../../shared/contracts/invoicing";
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { formatDateTime } from "../../shared/time";
import { issuedSummary, type LinkOf } from "./document-views";
import { type IssueDeps, type Issued, issueDocuments } from "./issue";

/** A UUID (version 5's layout) derived from a name: the same document always gives its event the same id. */
export function derivedEventId(name: string): string {
	const hex = createHash("sha256").update(name).digest("hex");
	const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The event of an issued document, with its customer as every event has it (a buyer's receipt is sent on it). Made
 * `now`, the real time, as every event is; the document is dated in the account's time (its `issuedAt`).
 */
export function issuedEvent(issued: Issued, linkOf: LinkOf, customer: CustomerView | null, now: Date): WebhookEvent {
	const { doc, kind } = issued;
	const type = kind === "invoice" ? "INVOICE_ISSUED" : "CREDIT_NOTE_ISSUED";
	return {
		id: derivedEventId(`${type}:${doc.accountId}:${doc._id}`),
		type,
		createdAt: formatDateTime(now),
		accountId: doc.accountId,
		customerId: doc.customerId,
		transaction_id: doc._id,
		data: {
			[kind === "invoice" ? "invoice" : "creditNote"]: issuedSummary(doc, kind, linkOf),
			customer,
		},
	};
}

export interface IssueEventsDeps extends IssueDeps {
	linkOf: LinkOf;
	/** Stores the events in notifications (notifications.enqueueAll), which drops a repeat by its id; `resent`: some may be repeats. */
	enqueueAll(events: WebhookEvent[], resent: boolean): Promise<unknown>;
}

/**
 * Issues each request's document (concurrently; one account's numbers in turn, numbering.ts), then hands their events
 * to notifications: when this resolves, every document and its event is stored, and billing may drop the requests.
 */
export async function issueAll(deps: IssueEventsDeps, requests: IssueRequest[]): Promise<{ issued: number }> {
	const issued = await issueDocuments(deps, requests);
	const now = deps.now();
	const events = issued.flatMap((one, i) => (one ? [issuedEvent(one, deps.linkOf, requests[i].customer, now)] : []));
	// A document written before (a repeated request) may have had its event handed over: notifications looks it up.
	if (events.length > 0)
		await deps.enqueueAll(
			events,
			issued.some(one => one !== null && !one.fresh),
		);
	// Answered once the numbers' pending entries are gone (a moment after the documents, numbering.ts): billing then
	// forgets the requests. A node that dies before its pulls leaves them to billing's resend, which pulls them.
	await Promise.all(issued.map(one => one?.released));
	return { issued: events.length };
}
