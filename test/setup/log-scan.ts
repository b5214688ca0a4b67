// After the whole suite: the logs of every app the tests started (see
// test-logger.ts) may hold no test card number, no CVC and no secret: no API
// token, webhook secret, admin token or key, whatever the tests did.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CARDS } from "../factories/checkout";
import { ADMIN_TOKEN } from "./app";

const EXTRA_NUMBERS = ["4242424242424241", "6011111111111117"];

/** Patterns of secrets whatever their value; the values known to this process are added by `knownSecrets`. */
const SECRET_PATTERNS: [what: string, pattern: RegExp][] = [
	["an API token or a Stripe secret key", /\bsk_(test|live)_[A-Za-z0-9_-]{20,}/],
	["a Stripe restricted key", /\brk_(test|live)_[A-Za-z0-9_-]{8,}/],
	["a webhook secret", /\bwhsec_[A-Za-z0-9_-]{16,}/],
	["an Adyen API key", /\bAQE[A-Za-z0-9+/=_-]{40,}/],
	["a private key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
	["a bearer credential", /\bBearer\s+[A-Za-z0-9._~+/-]{16,}/],
	["a CVC", /\b(cvc|cvv|cvn|cid|securityCode)\b["']?\s*[:=]\s*["']?\d/i],
];

/** The configured secrets of this run (the global setup puts the card keys in the environment). */
export function knownSecrets(env: NodeJS.ProcessEnv = process.env): [what: string, value: string][] {
	const values: [string, string | undefined][] = [
		["the admin token", ADMIN_TOKEN],
		["CARD_FINGERPRINT_KEY", env.CARD_FINGERPRINT_KEY],
		["VAULT_KEY", env.VAULT_KEY],
		["CREDENTIALS_KEY", env.CREDENTIALS_KEY],
		["INVOICE_LINK_KEY", env.INVOICE_LINK_KEY],
		// A line of the PEM body is enough to give the key away.
		[
			"CARD_PRIVATE_KEY",
			env.CARD_PRIVATE_KEY?.replace(/\\n/g, "\n")
				.split("\n")
				.find(line => /^[A-Za-z0-9+/]{40,}$/.test(line)),
		],
	];
	return values.filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1].length >= 8);
}

/** One finding per line that holds card data or a secret: `<file>:<line>: <what>` (never the secret itself). */
export function findSecretsInLog(text: string, where: string, secrets = knownSecrets()): string[] {
	const numbers = [...Object.values(CARDS), ...EXTRA_NUMBERS];
	const findings: string[] = [];
	text.split("\n").forEach((line, index) => {
		const at = `${where}:${index + 1}`;
		const digits = line.replace(/[ -]/g, "");
		for (const number of numbers) if (digits.includes(number)) findings.push(`${at}: card number ${number.slice(0, 6)}…`);
		for (const [what, pattern] of SECRET_PATTERNS) if (pattern.test(line)) findings.push(`${at}: ${what}`);
		for (const [what, value] of secrets) if (line.includes(value)) findings.push(`${at}: ${what}`);
	});
	return findings;
}

export function findSecretsInLogs(dir: string): string[] {
	let files: string[];
	try {
		files = readdirSync(dir).filter(name => name.endsWith(".log"));
	} catch {
		return [];
	}
	return files.flatMap(name => findSecretsInLog(readFileSync(path.join(dir, name), "utf8"), name));
}
