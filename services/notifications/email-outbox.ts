// Emails to buyers are stored, keyed, in the enqueue that stores their event:
// an event accepted is an email that will be sent, whatever crashes after. A
// repeated event makes no second email (its key exists). Only accounts with
// emails turned on get any; the setting is read again when the email is sent.
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { insertAllOnce } from "../../shared/persistence";
import type { NotificationsDeps } from "./deps";
import { draftsOf } from "./email-drafts";
import type { EmailDoc } from "./models";
import { EmailStatus } from "./states";

/** Stores the emails the events make, listed for their first attempt now; answers their keys. */
export async function enqueueEmails(deps: NotificationsDeps, events: WebhookEvent[]): Promise<string[]> {
	const drafts = events.flatMap(draftsOf);
	if (drafts.length === 0) return [];
	const accounts = [...new Set(drafts.map(d => d.accountId))];
	const enabled = new Set<number>();
	for (const accountId of accounts) if ((await deps.emails.account(accountId)).emails.enabled) enabled.add(accountId);
	const now = deps.now();
	const emails: EmailDoc[] = drafts
		.filter(d => enabled.has(d.accountId))
		.map(d => ({
			...d,
			status: EmailStatus.Pending,
			attempts: 0,
			backoffStep: 0,
			createdAt: now,
			nextAttemptAt: now,
			lease: null,
			subject: null,
			lastError: null,
			sentAt: null,
		}));
	if (emails.length === 0) return [];
	// Listed before stored, so a node that dies in between leaves them for any other to find.
	await deps.emails.schedule.addAll(emails.map(e => ({ id: e._id, at: now })));
	await insertAllOnce(deps.db.emails, emails);
	return emails.map(e => e._id);
}
