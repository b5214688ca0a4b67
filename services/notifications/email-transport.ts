// SMTP through nodemailer: one transport per node, to SMTP_URL. Its own
// logging stays off (it would log addresses); a failure is a thrown error
// that the attempt records and retries.
import { createTransport } from "nodemailer";
import type { OutgoingEmail } from "./deps";

const SMTP_TIMEOUT_MS = 10_000;

export interface SmtpSender {
	send(email: OutgoingEmail): Promise<void>;
	close(): void;
}

export function smtpSender(smtpUrl: string): SmtpSender {
	const transport = createTransport({
		url: smtpUrl,
		connectionTimeout: SMTP_TIMEOUT_MS,
		greetingTimeout: SMTP_TIMEOUT_MS,
		socketTimeout: 2 * SMTP_TIMEOUT_MS,
		logger: false,
	});
	return {
		async send(email) {
			await transport.sendMail(email);
		},
		close: () => transport.close(),
	};
}
