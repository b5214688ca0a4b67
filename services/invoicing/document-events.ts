// INVOICE_ISSUED and CREDIT_NOTE_ISSUED (docs/webhooks.md): the relay issues the
// documents of the transactions whose events it hands over (outbox/relay-changes.ts)
// and sends these with them. Each event's id is derived from its document, so
// a relay repeated after a crash sends the same event, which notifications and
// receivers drop as a repeat.
import { createHash } from "node:crypto";
import type { WebhookEvent } from "../../../shared/contracts/notifications";
import { formatDateTime } from "../../../shared/time";
import type { CustomerDoc } from "../documents/customer";
import type { TransactionDoc } from "../documents/transaction";
import { toCustomerView } from "../views";
import { issuedSummary, type LinkOf } from "./document-views";
import { type IssueDeps, type Issued, issueDocument } from "./issue";

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
export function issuedEvent(issued: Issued, linkOf: LinkOf, customer: CustomerDoc | undefined, now: Date): WebhookEvent {
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
			customer: customer ? toCustomerView(customer) : null,
		},
	};
}

/** Issues each transaction's document (concurrently; one account's numbers in turn) and answers their events. */
export function createDocumentIssuer(deps: IssueDeps & { linkOf: LinkOf }) {
	return async (transactions: TransactionDoc[], customers: Map<number, CustomerDoc>): Promise<WebhookEvent[]> => {
		const issued = await Promise.all(transactions.map(tx => issueDocument(deps, tx)));
		const now = deps.now();
		return issued.flatMap(one => (one ? [issuedEvent(one, deps.linkOf, customers.get(one.doc.customerId), now)] : []));
	};
}
