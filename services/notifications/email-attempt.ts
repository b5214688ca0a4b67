// One attempt at one email: claim it with a lease, read the account's settings
// (turned off since: SKIPPED), fill in its template (a receipt with its
// invoice's PDF, asked of invoicing now), hand it to the SMTP server
// and settle it while still holding the lease. A node that dies after the SMTP
// server took the email and before settling sends it again once the lease
// expires (the buyer may then see it twice, with the same Message-ID); every
// other failure is retried with backoff until the retry window closes.
import { randomUUID } from "node:crypto";
import { DateTime } from "luxon";
import type { EmailLanguage } from "../../shared/contracts/accounts";
import { findCurrency, formatMoney, toMinorUnits } from "../../shared/money";
import { leaseFree, newLease } from "../../shared/persistence";
import { retryDelayMs } from "./backoff";
import type { EmailAttachment, NotificationsDeps, OutgoingEmail } from "./deps";
import type { DunningStage, Template } from "./email-templates";
import { renderEmail } from "./email-templates";
import type { EmailDoc } from "./models";
import { EmailStatus, emailMove } from "./states";

/** Covers the settings, the link, the invoice's PDF and the SMTP exchange; past it another node may try. */
const EMAIL_LEASE_MS = 60_000;
const NEUTRAL_COLOR = "#1f2328";

const STAY_PENDING = emailMove(EmailStatus.Pending, EmailStatus.Pending);
const SENT = emailMove(EmailStatus.Pending, EmailStatus.Sent);
const SKIPPED = emailMove(EmailStatus.Pending, EmailStatus.Skipped);
const DEAD = emailMove(EmailStatus.Pending, EmailStatus.Dead);

/** PENDING -> PENDING (claimed): the email if it is due and its lease free, in one atomic update. */
async function claim(deps: NotificationsDeps, id: string, now: Date): Promise<EmailDoc | null> {
	return deps.db.emails
		.findOneAndUpdate(
			{ _id: id, ...STAY_PENDING.filter, nextAttemptAt: { $lte: now }, ...leaseFree("lease", now) },
			{ $set: { lease: newLease(`${deps.nodeId}/${randomUUID()}`, now, EMAIL_LEASE_MS) }, $inc: { attempts: 1 } },
			{ returnDocument: "after" },
		)
		.lean<EmailDoc>();
}

/** What a declined renewal's email says: suspended, the last try next, or tried again. */
export function dunningStage(email: Pick<EmailDoc, "facts">, retryDays: number): DunningStage {
	if (email.facts.customerStatus === "SUSPENDED") return "SUSPENDED";
	return email.facts.attempts >= retryDays ? "LAST_NOTICE" : "RETRYING";
}

/** When the email stops being retried: EMAIL_RETRY_HOURS after its event. */
const windowEndOf = (deps: NotificationsDeps, email: EmailDoc) => email.createdAt.getTime() + deps.emails.settings.retryHours * 3_600_000;

/**
 * A receipt's invoice PDF. Billing not answering fails the attempt (retried as an SMTP failure is) until the last
 * attempt, at the retry window's end, which sends the receipt with the invoice's link alone rather than not at all.
 */
async function invoiceAttachment(deps: NotificationsDeps, email: EmailDoc, lastTry: boolean): Promise<EmailAttachment[]> {
	const invoiceId = email.facts.invoiceId;
	// Only a receipt carries its invoice (INVOICE_ISSUED names it: email-drafts.ts).
	if (email.kind !== "RECEIPT" || invoiceId === null) return [];
	try {
		return [await deps.emails.invoicePdf(email.accountId, invoiceId)];
	} catch (err) {
		if (lastTry) return [];
		throw new Error(`the invoice's PDF could not be had from invoicing: ${(err as Error).message || String(err)}`);
	}
}

/** The email's decimal amount as the language writes it in the product's currency; as it is when the currency is unknown. */
function amountText(amount: number | null, currencyCode: string | undefined, language: EmailLanguage): string {
	const currency = currencyCode ? findCurrency(currencyCode) : undefined;
	const minor = currency && amount !== null ? toMinorUnits(amount, currency) : null;
	return typeof minor === "number" && currency ? formatMoney(minor, currency, language) : String(amount);
}

/** The email as it goes out, or null when the account has turned its emails off. */
async function compose(deps: NotificationsDeps, email: EmailDoc, lastTry: boolean): Promise<OutgoingEmail | null> {
	const account = await deps.emails.account(email.accountId);
	const settings = account.emails;
	if (!settings.enabled) return null;
	const terms = await deps.emails.renewalTerms(email.accountId, email.facts.productId);
	const language = settings.language;
	const template: Template = email.kind === "DUNNING" ? dunningStage(email, terms?.retryDays.length ?? 0) : email.kind;
	const nextTry = email.facts.nextRenewalTimestamp
		? DateTime.fromISO(email.facts.nextRenewalTimestamp).setLocale(language).toLocaleString(DateTime.DATE_FULL)
		: null;
	const merchant = settings.fromName ?? account.name;
	const attachments = await invoiceAttachment(deps, email, lastTry);
	const rendered = renderEmail(template, language, {
		facts: email.facts,
		merchant,
		product: terms?.product.name ?? account.name,
		amount: amountText(email.facts.amount, terms?.product.currency, language),
		nextTry,
		cardUpdateLink:
			email.kind === "RECEIPT" || email.kind === "PORTAL_SIGN_IN"
				? null
				: await deps.emails.cardUpdateLink(email.accountId, email.customerId),
		portalLink: email.kind === "PORTAL_SIGN_IN" ? await deps.emails.portalLink(email.accountId, email.customerId) : null,
		brandColor: settings.brandColor ?? NEUTRAL_COLOR,
		invoiceAttached: attachments.length > 0,
		baseUrl: deps.emails.settings.baseUrl,
	});
	return {
		from: { name: merchant, address: settings.from ?? deps.emails.settings.from },
		to: email.to,
		...(settings.replyTo ? { replyTo: settings.replyTo } : {}),
		...rendered,
		...(attachments.length > 0 ? { attachments } : {}),
		messageId: `<${email._id.replace(/[^A-Za-z0-9.#-]/g, "-")}.${email.accountId}@payment-service>`,
	};
}

type Outcome = { status: EmailStatus.Sent; subject: string } | { status: EmailStatus.Skipped } | { status: null; error: string };

async function send(deps: NotificationsDeps, email: EmailDoc, lastTry: boolean): Promise<Outcome> {
	try {
		const outgoing = await compose(deps, email, lastTry);
		if (!outgoing) return { status: EmailStatus.Skipped };
		if (!deps.emails.send) return { status: null, error: "no SMTP server configured (SMTP_URL)" };
		await deps.emails.send(outgoing);
		return { status: EmailStatus.Sent, subject: outgoing.subject };
	} catch (err) {
		return { status: null, error: (err as Error).message || String(err) };
	}
}

/** The settle's update: sent, skipped, retried later, or DEAD when the last try (begun once the window was over) failed. */
function settleUpdate(deps: NotificationsDeps, email: EmailDoc, outcome: Outcome, now: Date, lastTry: boolean) {
	const released = { lease: null };
	if (outcome.status === EmailStatus.Sent)
		return { $set: { ...released, ...SENT.set, subject: outcome.subject, sentAt: now, lastError: null } };
	if (outcome.status === EmailStatus.Skipped) return { $set: { ...released, ...SKIPPED.set } };
	if (lastTry) return { $set: { ...released, ...DEAD.set, lastError: outcome.error } };
	// Past the window's end already (a slow attempt): the last try is due at once.
	const windowEnd = windowEndOf(deps, email);
	const step = email.backoffStep + 1;
	const next = new Date(Math.min(windowEnd, now.getTime() + retryDelayMs(step, deps.emails.settings.retryBaseMs)));
	return { $set: { ...released, nextAttemptAt: next, backoffStep: step, lastError: outcome.error } };
}

/** Claims, sends and settles the email if it is due; answers its status after, or null when it was not this node's to try. */
export async function attemptEmail(deps: NotificationsDeps, id: string): Promise<EmailStatus | null> {
	const startedAt = deps.now();
	const email = await claim(deps, id, startedAt);
	if (!email) return null;
	// Judged once, at the start: the attachment's fallback and DEAD agree on which try is the last.
	const lastTry = startedAt.getTime() >= windowEndOf(deps, email);
	const outcome = await send(deps, email, lastTry);
	const update = settleUpdate(deps, email, outcome, deps.now(), lastTry);
	// A retry is listed at its new time before the email says so (shared/schedule.ts).
	if ("nextAttemptAt" in update.$set) await deps.emails.schedule.add(email._id, update.$set.nextAttemptAt as Date);
	const held = { _id: email._id, ...STAY_PENDING.filter, "lease.owner": email.lease!.owner };
	const settled = await deps.db.emails.updateOne(held, update);
	// Ids and the outcome only: never the address, the body or the link.
	const what = `Email ${email._id} (account ${email.accountId}) attempt ${email.attempts}`;
	if (settled.matchedCount === 0) deps.logger.warn(`${what}: lease lost before settling`);
	else if (outcome.status === null) deps.logger.info(`${what} failed: ${outcome.error}`);
	const status = (update.$set as { status?: EmailStatus }).status;
	return status ?? EmailStatus.Pending;
}
