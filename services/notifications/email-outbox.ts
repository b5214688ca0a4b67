// Emails to buyers are stored, keyed, in the enqueue that stores their event:
// an event accepted is an email that will be sent, whatever crashes after. A
// repeated event makes no second email (its key exists). Only accounts with
// emails turned on get any; the setting is read again when the email is sent.
// Each new email is added to its customer's bag (`em:<customer>`, email-views.ts)
// before it is stored.
import type { WebhookEvent } from "../../shared/contracts/notifications";
import { insertAllOnce, storedIds } from "../../shared/persistence";
import { addToBags } from "../../shared/timeline";
import type { NotificationsDeps } from "./deps";
import { draftsOf, type EmailDraft } from "./email-drafts";
import { customerEmailsKey } from "./email-views";
import type { EmailDoc } from "./models";
import { EmailStatus } from "./states";

/** Stores the emails the events make, listed for their first attempt now; answers their keys. */
export function enqueueEmails(deps: NotificationsDeps, events: WebhookEvent[]): Promise<string[]> {
	return enqueueDrafts(deps, events.flatMap(draftsOf));
}

/** How often a buyer may get a sign-in email: one key per customer and window, so asking again within it sends nothing more. */
const SIGN_IN_WINDOW_MS = 60_000;

/**
 * The customer portal's sign-in email (docs/portal.md#email-sign-in): its link is made when it is sent, never stored,
 * as a card update link is.
 */
export async function enqueuePortalSignIn(
	deps: NotificationsDeps,
	input: { accountId: number; customerId: number; to: string; name: string; productId: number },
): Promise<{ id: string | null }> {
	const window = Math.floor(deps.now().getTime() / SIGN_IN_WINDOW_MS);
	const facts = {
		name: input.name,
		productId: input.productId,
		amount: null,
		transactionId: null,
		invoiceId: null,
		invoiceNumber: null,
		invoiceUrl: null,
		cardType: "",
		cardExpiredTime: "",
		attempts: 0,
		customerStatus: "",
		nextRenewalTimestamp: null,
	};
	const draft = { _id: `PORTAL_SIGN_IN:c${input.customerId}#${window}`, kind: "PORTAL_SIGN_IN" as const, eventId: "-", ...input, facts };
	const [id] = await enqueueDrafts(deps, [draft]);
	return { id: id ?? null };
}

async function enqueueDrafts(deps: NotificationsDeps, drafts: EmailDraft[]): Promise<string[]> {
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
	// A repeated event adds nothing, not even a second place in its customer's list: read first, one command.
	const stored = await storedIds(
		deps.db.emails,
		emails.map(e => e._id),
	);
	const fresh = emails.filter(e => !stored.has(e._id));
	if (fresh.length === 0) return [];
	// Listed before stored, so a node that dies in between leaves them for any other to find.
	await addToBags(
		deps.db.timelines,
		fresh.map(e => ({ key: customerEmailsKey(e.customerId), ref: [e._id, now.getTime()] })),
	);
	await deps.emails.schedule.addAll(fresh.map(e => ({ id: e._id, at: now })));
	await insertAllOnce(deps.db.emails, fresh);
	return fresh.map(e => e._id);
}
