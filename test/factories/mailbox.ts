// What a test's Mailpit received, read through its HTTP API (GET /api/v1/messages,
// GET /api/v1/message/{id}, GET /api/v1/message/{id}/part/{partId}): the emails
// to one address, oldest first, with their attachments.
import type { Mailpit } from "../../dev/mailpit";

export interface ReceivedEmail {
	id: string;
	from: { Name: string; Address: string };
	to: string[];
	replyTo: string[];
	subject: string;
	text: string;
	html: string;
	messageId: string;
	attachments: ReceivedAttachment[];
}

/** An attached file as Mailpit lists it; its bytes: attachmentBytes. */
export interface ReceivedAttachment {
	partId: string;
	fileName: string;
	contentType: string;
	size: number;
}

interface Summary {
	ID: string;
	MessageID: string;
	From: { Name: string; Address: string };
	To: { Address: string }[];
	ReplyTo: { Address: string }[];
	Subject: string;
	Created: string;
}

async function json<T>(url: string): Promise<T> {
	const res = await fetch(url);
	if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
	return (await res.json()) as T;
}

/** Every email Mailpit holds for `address`, oldest first, with its text and HTML parts. */
export async function emailsTo(mailpit: Mailpit, address: string): Promise<ReceivedEmail[]> {
	const { messages } = await json<{ messages: Summary[] }>(`${mailpit.httpUrl}/api/v1/messages?limit=1000`);
	const mine = messages.filter(m => m.To.some(t => t.Address === address)).reverse();
	return Promise.all(
		mine.map(async m => {
			const full = await json<{
				Text: string;
				HTML: string;
				Attachments: { PartID: string; FileName: string; ContentType: string; Size: number }[] | null;
			}>(`${mailpit.httpUrl}/api/v1/message/${m.ID}`);
			return {
				id: m.ID,
				from: m.From,
				to: m.To.map(t => t.Address),
				replyTo: (m.ReplyTo ?? []).map(t => t.Address),
				subject: m.Subject,
				text: full.Text,
				html: full.HTML,
				messageId: m.MessageID,
				attachments: (full.Attachments ?? []).map(a => ({
					partId: a.PartID,
					fileName: a.FileName,
					contentType: a.ContentType,
					size: a.Size,
				})),
			};
		}),
	);
}

/** The bytes of one of the email's attachments, as Mailpit received them. */
export async function attachmentBytes(mailpit: Mailpit, email: ReceivedEmail, attachment: ReceivedAttachment): Promise<Buffer> {
	const url = `${mailpit.httpUrl}/api/v1/message/${email.id}/part/${attachment.partId}`;
	const res = await fetch(url);
	if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
	return Buffer.from(await res.arrayBuffer());
}

/** Waits until `address` has at least `count` emails (10 s at most, or `timeoutMs`), then a little longer so that a duplicate would show. */
export async function waitForEmails(
	mailpit: Mailpit,
	address: string,
	count: number,
	settleMs = 700,
	timeoutMs = 10_000,
): Promise<ReceivedEmail[]> {
	const deadline = Date.now() + timeoutMs;
	while ((await emailsTo(mailpit, address).catch(() => [])).length < count && Date.now() < deadline)
		await new Promise(r => setTimeout(r, 100));
	await new Promise(r => setTimeout(r, settleMs));
	return emailsTo(mailpit, address);
}
