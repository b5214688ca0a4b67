// The emails' words and layout: a text part and plain, accessible HTML (one
// column, real headings, a link with words, the merchant's colour), in the
// account's language (en, de). Never a card number: the brand and the expiry
// at most. Every value put into the HTML is escaped.
import type { EmailLanguage } from "../../shared/contracts/accounts";
import type { EmailFacts } from "./email-drafts";

/** What the buyer is told about a declined renewal: tried again, the last try next, or suspended. */
export type DunningStage = "RETRYING" | "LAST_NOTICE" | "SUSPENDED";
export type Template = "RECEIPT" | DunningStage | "CARD_EXPIRING" | "PORTAL_SIGN_IN";

export interface TemplateValues {
	facts: EmailFacts;
	merchant: string;
	product: string;
	/** The amount as the language writes it, in the currency. */
	amount: string | null;
	/** The next try's date, as the language writes it. */
	nextTry: string | null;
	/** A long-lived card update link (docs/emails.md#the-card-update-link); null when none could be made. */
	cardUpdateLink: string | null;
	/** A sign-in email's link to the customer portal (docs/portal.md#email-sign-in), made as it is sent. */
	portalLink: string | null;
	brandColor: string;
	/** The receipt carries its invoice's PDF. */
	invoiceAttached: boolean;
	/** Every link is made absolute from it: a relative one (an invoice's link without PUBLIC_BASE_URL) would do nothing in a mail client. */
	baseUrl: string;
}

export interface RenderedEmail {
	subject: string;
	text: string;
	html: string;
}

interface Words {
	subject: string;
	lines: string[];
	action?: { label: string; url: string | null };
}

type Phrasebook = Record<Template, (v: TemplateValues) => Words> & {
	hello: (name: string) => string;
	thanks: (merchant: string) => string;
};

const card = (f: EmailFacts) => `${f.cardType} (${f.cardExpiredTime.slice(0, 2)}/${f.cardExpiredTime.slice(2)})`;

const EN: Phrasebook = {
	hello: name => `Hello ${name},`,
	thanks: merchant => `Thank you, ${merchant}`,
	RECEIPT: v => ({
		subject: `Your receipt from ${v.merchant}${v.facts.invoiceNumber ? ` (${v.facts.invoiceNumber})` : ""}`,
		lines: [
			`We received your payment of ${v.amount} for ${v.product}.`,
			`Payment number: ${v.facts.transactionId}.`,
			...(v.invoiceAttached ? [`Your invoice ${v.facts.invoiceNumber} is attached as a PDF.`] : []),
		],
		action: v.facts.invoiceUrl ? { label: "View your invoice", url: v.facts.invoiceUrl } : undefined,
	}),
	RETRYING: v => ({
		subject: `Your payment to ${v.merchant} did not go through`,
		lines: [
			`Your payment of ${v.amount} for ${v.product} was declined by your card's bank.`,
			`We will try again on ${v.nextTry}. To avoid an interruption, you can update your card now.`,
		],
		action: { label: "Update your card", url: v.cardUpdateLink },
	}),
	LAST_NOTICE: v => ({
		subject: `Last notice: your ${v.product} subscription will be suspended`,
		lines: [
			`Your payment of ${v.amount} for ${v.product} was declined again.`,
			`We will make a last try on ${v.nextTry}. If it is declined, your subscription will be suspended. Please update your card before then.`,
		],
		action: { label: "Update your card", url: v.cardUpdateLink },
	}),
	SUSPENDED: v => ({
		subject: `Your ${v.product} subscription is suspended`,
		lines: [
			`Your payment of ${v.amount} for ${v.product} was declined, and your subscription is suspended.`,
			"Update your card to pay what is owed and continue your subscription.",
		],
		action: { label: "Update your card", url: v.cardUpdateLink },
	}),
	CARD_EXPIRING: v => ({
		subject: `Your card for ${v.product} is about to expire`,
		lines: [
			`The card you pay ${v.product} with, ${card(v.facts)}, expires before your next payment.`,
			"Update your card to keep your subscription going.",
		],
		action: { label: "Update your card", url: v.cardUpdateLink },
	}),
	PORTAL_SIGN_IN: v => ({
		subject: `Your link to manage your ${v.merchant} subscriptions`,
		lines: [
			`You asked to sign in to manage your subscriptions with ${v.merchant}.`,
			"The link below works once, for 15 minutes. If you did not ask for it, ignore this email.",
		],
		action: { label: "Manage your subscriptions", url: v.portalLink },
	}),
};

const DE: Phrasebook = {
	hello: name => `Hallo ${name},`,
	thanks: merchant => `Vielen Dank, ${merchant}`,
	RECEIPT: v => ({
		subject: `Ihre Quittung von ${v.merchant}${v.facts.invoiceNumber ? ` (${v.facts.invoiceNumber})` : ""}`,
		lines: [
			`Wir haben Ihre Zahlung von ${v.amount} für ${v.product} erhalten.`,
			`Zahlungsnummer: ${v.facts.transactionId}.`,
			...(v.invoiceAttached ? [`Ihre Rechnung ${v.facts.invoiceNumber} ist als PDF angehängt.`] : []),
		],
		action: v.facts.invoiceUrl ? { label: "Rechnung ansehen", url: v.facts.invoiceUrl } : undefined,
	}),
	RETRYING: v => ({
		subject: `Ihre Zahlung an ${v.merchant} ist fehlgeschlagen`,
		lines: [
			`Ihre Zahlung von ${v.amount} für ${v.product} wurde von Ihrer Bank abgelehnt.`,
			`Wir versuchen es am ${v.nextTry} erneut. Sie können Ihre Karte jetzt aktualisieren, um eine Unterbrechung zu vermeiden.`,
		],
		action: { label: "Karte aktualisieren", url: v.cardUpdateLink },
	}),
	LAST_NOTICE: v => ({
		subject: `Letzte Erinnerung: Ihr Abonnement ${v.product} wird ausgesetzt`,
		lines: [
			`Ihre Zahlung von ${v.amount} für ${v.product} wurde erneut abgelehnt.`,
			`Am ${v.nextTry} versuchen wir es ein letztes Mal. Wird die Zahlung abgelehnt, wird Ihr Abonnement ausgesetzt. Bitte aktualisieren Sie vorher Ihre Karte.`,
		],
		action: { label: "Karte aktualisieren", url: v.cardUpdateLink },
	}),
	SUSPENDED: v => ({
		subject: `Ihr Abonnement ${v.product} ist ausgesetzt`,
		lines: [
			`Ihre Zahlung von ${v.amount} für ${v.product} wurde abgelehnt, und Ihr Abonnement ist ausgesetzt.`,
			"Aktualisieren Sie Ihre Karte, um den offenen Betrag zu zahlen und Ihr Abonnement fortzusetzen.",
		],
		action: { label: "Karte aktualisieren", url: v.cardUpdateLink },
	}),
	CARD_EXPIRING: v => ({
		subject: `Ihre Karte für ${v.product} läuft bald ab`,
		lines: [
			`Die Karte, mit der Sie ${v.product} bezahlen, ${card(v.facts)}, läuft vor Ihrer nächsten Zahlung ab.`,
			"Aktualisieren Sie Ihre Karte, damit Ihr Abonnement weiterläuft.",
		],
		action: { label: "Karte aktualisieren", url: v.cardUpdateLink },
	}),
	PORTAL_SIGN_IN: v => ({
		subject: `Ihr Link zur Verwaltung Ihrer Abonnements bei ${v.merchant}`,
		lines: [
			`Sie möchten Ihre Abonnements bei ${v.merchant} verwalten.`,
			"Der Link unten funktioniert einmal, 15 Minuten lang. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail.",
		],
		action: { label: "Abonnements verwalten", url: v.portalLink },
	}),
};

const PHRASEBOOKS: Record<EmailLanguage, Phrasebook> = { en: EN, de: DE };

const escapeHtml = (s: string) =>
	s.replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

export function renderEmail(template: Template, language: EmailLanguage, values: TemplateValues): RenderedEmail {
	const book = PHRASEBOOKS[language];
	const words = book[template](values);
	const action = words.action?.url ? { ...words.action, url: new URL(words.action.url, values.baseUrl).href } : null;
	const hello = book.hello(values.facts.name);
	const thanks = book.thanks(values.merchant);
	const text = [hello, "", ...words.lines, ...(action ? ["", `${action.label}: ${action.url}`] : []), "", thanks, ""].join("\n");
	const color = escapeHtml(values.brandColor);
	const html = [
		`<!DOCTYPE html><html lang="${language}"><head><meta charset="utf-8"><title>${escapeHtml(words.subject)}</title></head>`,
		'<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:1.5;color:#1f2328;background:#ffffff">',
		`<main style="max-width:560px;margin:0 auto"><h1 style="font-size:20px;color:${color}">${escapeHtml(values.merchant)}</h1>`,
		`<p>${escapeHtml(hello)}</p>`,
		...words.lines.map(line => `<p>${escapeHtml(line)}</p>`),
		action
			? `<p><a href="${escapeHtml(action.url)}" style="display:inline-block;padding:12px 20px;background:${color};color:#ffffff;text-decoration:underline;border-radius:4px">${escapeHtml(action.label)}</a></p>`
			: "",
		`<p>${escapeHtml(thanks)}</p></main></body></html>`,
	].join("");
	return { subject: words.subject, text, html };
}
