// Console logging that never prints a card number or a secret, whatever
// logged it (our code, Moleculer, moleculer-web's request lines, a library's
// error): any run of 13-19 digits (spaces or dashes allowed between them) is
// masked to its first 6 and last 4 digits; API tokens, webhook secrets,
// bearer credentials, private keys, the values of query parameters named like
// a secret, buyers' signed links to invoices, and the configured secrets
// themselves are replaced.
import { Loggers } from "moleculer";
import { config } from "./config";

const CARD_NUMBER = /\b\d(?:[ -]?\d){12,18}\b/g;

export function redactCardNumbers(text: string): string {
	return text.replace(CARD_NUMBER, match => {
		const digits = match.replace(/[ -]/g, "");
		return `${digits.slice(0, 6)}${"*".repeat(digits.length - 10)}${digits.slice(-4)}`;
	});
}

const SECRETS: [RegExp, string][] = [
	// API tokens keep their prefix, so a log still tells sandbox from production.
	[/\b(sk_(?:test|live)_)[A-Za-z0-9_-]+/g, "$1[redacted]"],
	// A MID's restricted Stripe key.
	[/\b(rk_(?:test|live)_)[A-Za-z0-9_-]+/g, "$1[redacted]"],
	[/\bwhsec_[A-Za-z0-9_-]+/g, "whsec_[redacted]"],
	[/\b(Bearer|Basic)\s+[^\s,;"']+/gi, "$1 [redacted]"],
	[/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, "[redacted private key]"],
	// A buyer's link to an invoice or credit note: its signature opens the document without a token (docs/invoices.md#links).
	[/(\/api\/buyer\/(?:invoices|credit-notes)\/\d+\/)[A-Za-z0-9_-]+/g, "$1[redacted]"],
	// ?token=…, &api_key=…, ?access_token=… in a logged URL (a client's mistake, but then it is in our logs).
	[/([?&][^=&\s]*(?:token|secret|key|password|passwd|auth|signature)[^=&\s]*=)[^&\s]*/gi, "$1[redacted]"],
];

/** The configured secrets, as they would appear in a line (at least 8 characters, so nothing short is masked by accident). */
function configuredSecrets(): string[] {
	try {
		const { adminToken, cardFingerprintKey, vaultKey, vaultPreviousKeys, credentialsKey, credentialsPreviousKeys, invoiceLinkKey } =
			config();
		const keys = [adminToken, cardFingerprintKey, vaultKey, credentialsKey, invoiceLinkKey];
		return [...keys, ...vaultPreviousKeys, ...credentialsPreviousKeys].filter((s): s is string => typeof s === "string" && s.length >= 8);
	} catch {
		// An invalid configuration is reported when the broker starts; logging must not fail before that.
		return [];
	}
}

export function redactSecrets(text: string, known: string[] = configuredSecrets()): string {
	let out = text;
	for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
	for (const secret of known) if (out.includes(secret)) out = out.split(secret).join("[redacted]");
	return out;
}

export function redact(text: string): string {
	return redactCardNumbers(redactSecrets(text));
}

export class RedactingConsoleLogger extends Loggers.Console {
	override getFormatter(bindings: Parameters<Loggers.Console["getFormatter"]>[0]) {
		const format = super.getFormatter(bindings);
		// Objects are already printed to strings by the formatter, so every part is redacted.
		return (type: Parameters<typeof format>[0], args: unknown[]) => format(type, args).map(part => redact(String(part)));
	}
}
