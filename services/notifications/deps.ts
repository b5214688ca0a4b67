// What the notifications service's domain functions get: its database, the webhook attempts' schedule and settings,
// an account's webhook target, the emails' schedule, settings and SMTP sender, the clock.
import type { Logger } from "moleculer";
import type { AccountView, RenewalTerms, WebhookTarget } from "../../shared/contracts/accounts";
import type { Schedule } from "../../shared/schedule";
import type { NotificationsDb } from "./models";

export interface DeliverySettings {
	timeoutMs: number;
	retryBaseMs: number;
	retryHours: number;
	sandboxRetryHours: number;
	/** An event of an account without a webhook URL is sent if it gets one within this many days. */
	waitDays: number;
	/** Zone of the events' local createdAt. */
	timeZone: string;
}

/** A file sent with an email: a receipt's invoice PDF. */
export interface EmailAttachment {
	filename: string;
	contentType: string;
	content: Buffer;
}

/** One email as the SMTP server is handed it. */
export interface OutgoingEmail {
	from: { name: string; address: string };
	to: string;
	replyTo?: string;
	subject: string;
	text: string;
	html: string;
	attachments?: EmailAttachment[];
	/** Derived from the email's key: the same email sent again has the same Message-ID. */
	messageId: string;
}

/** What sending buyers' emails needs (docs/emails.md). */
export interface EmailDeps {
	/** Emails by the second their next attempt is due. */
	schedule: Schedule<string>;
	/** Hands an email to the SMTP server (SMTP_URL); null when none is configured: emails wait. Throws when it is not taken. */
	send: ((email: OutgoingEmail) => Promise<void>) | null;
	/** The account, its email settings among it (cached; accounts.updated drops it). */
	account(accountId: number): Promise<AccountView>;
	/** The product's name and currency, and the retry days (accounts.renewalTerms); null for an unknown product. */
	renewalTerms(accountId: number, productId: number): Promise<RenewalTerms | null>;
	/** The invoice's PDF, rendered by invoicing now (invoicing.invoicePdf), as `<number>.pdf`; throws when invoicing does not answer it. */
	invoicePdf(accountId: number, invoiceId: number): Promise<EmailAttachment>;
	/** A fresh card update link (sessions.createCardUpdateLink); null when the customer cannot take one. */
	cardUpdateLink(accountId: number, customerId: number): Promise<string | null>;
	/** A fresh single-use portal link for a sign-in email (portal.signInLink); it throws when none can be made, and the email is retried. */
	portalLink(accountId: number, customerId: number): Promise<string>;
	/** `baseUrl`: every link in an email is absolute, from it (buyerBaseUrl in shared/config.ts). */
	settings: { from: string; retryBaseMs: number; retryHours: number; baseUrl: string };
}

export interface NotificationsDeps {
	db: NotificationsDb;
	/** Deliveries by the time their next attempt is due. */
	attempts: Schedule<string>;
	/** This node's id: leases and attempt records name it. */
	nodeId: string;
	settings: DeliverySettings;
	webhookTarget(accountId: number): Promise<WebhookTarget>;
	emails: EmailDeps;
	logger: Logger;
	now: () => Date;
}
