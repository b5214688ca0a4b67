// The emails sent to a customer, as operators see them (the admin API and the
// dashboard): from the customer's bag (`em:<customer>`), read by key, newest
// first, only those of the asking account. Never a body: the kind, the
// subject once sent, the status and the last error.
import { ownedBy } from "../../shared/persistence";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import { bag } from "../../shared/timeline";
import type { NotificationsDeps } from "./deps";
import type { EmailKind } from "./email-drafts";
import type { EmailDoc } from "./models";
import type { EmailStatus } from "./states";

export const customerEmailsKey = (customerId: number) => `em:${customerId}`;

export interface EmailView {
	/** Its key: `<kind>:<what it is about>`. */
	id: string;
	kind: EmailKind;
	to: string;
	status: EmailStatus;
	/** The subject it was sent with; null until it is. */
	subject: string | null;
	attempts: number;
	createdAt: string;
	sentAt: string | null;
	/** Why its last attempt failed (the SMTP server's words); null when none did. */
	lastError: string | null;
}

function toView(doc: EmailDoc): EmailView {
	return {
		id: doc._id,
		kind: doc.kind,
		to: doc.to,
		status: doc.status,
		subject: doc.subject,
		attempts: doc.attempts,
		createdAt: formatDateTime(doc.createdAt),
		sentAt: formatOptionalDateTime(doc.sentAt),
		lastError: doc.lastError,
	};
}

/** The customer's emails, newest first; none for an unknown customer or one of another account. */
export async function customerEmails(deps: NotificationsDeps, input: { accountId: number; customerId: number }): Promise<EmailView[]> {
	const ids = (await bag(deps.db.timelines, customerEmailsKey(input.customerId))).map(([id]) => String(id));
	if (ids.length === 0) return [];
	const docs = await deps.db.emails.find({ _id: { $in: ids } }).lean<EmailDoc[]>();
	const byId = new Map(docs.map(d => [d._id, d]));
	return ids
		.reverse()
		.map(id => ownedBy(byId.get(id) ?? null, input.accountId))
		.filter((doc): doc is EmailDoc => doc !== null)
		.map(toView);
}
