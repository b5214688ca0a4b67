// `npm start` needs no set-up: secrets it generates for the embedded default
// are kept in DATA_DIR/secrets.json (mode 600) so they survive restarts.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface LocalSecrets {
	adminToken?: string;
	demoApiToken?: string;
	demoAccountId?: number;
	/** The demo account's dashboard user (an operator), made with it. */
	demoDashboardEmail?: string;
	demoDashboardPassword?: string;
	cardPrivateKey?: string;
	cardFingerprintKey?: string;
	vaultKey?: string;
	credentialsPrivateKey?: string;
	credentialsKey?: string;
	invoiceLinkKey?: string;
}

function file(dataDir: string): string {
	return path.join(dataDir, "secrets.json");
}

export function readLocalSecrets(dataDir: string): LocalSecrets {
	return existsSync(file(dataDir)) ? (JSON.parse(readFileSync(file(dataDir), "utf8")) as LocalSecrets) : {};
}

export function writeLocalSecrets(dataDir: string, secrets: LocalSecrets): void {
	mkdirSync(dataDir, { recursive: true });
	writeFileSync(file(dataDir), JSON.stringify(secrets, null, 2), { mode: 0o600 });
}

export function newAdminToken(): string {
	return `admin_${randomBytes(24).toString("base64url")}`;
}

const newRsaKey = () => generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();

/** The keys the checkout and payments services need, for a machine that has none configured. */
export function newCardSecrets(): Required<
	Pick<LocalSecrets, "cardPrivateKey" | "cardFingerprintKey" | "vaultKey" | "credentialsPrivateKey" | "credentialsKey" | "invoiceLinkKey">
> {
	return {
		cardPrivateKey: newRsaKey(),
		cardFingerprintKey: randomBytes(32).toString("base64"),
		vaultKey: randomBytes(32).toString("base64"),
		credentialsPrivateKey: newRsaKey(),
		credentialsKey: randomBytes(32).toString("base64"),
		invoiceLinkKey: randomBytes(32).toString("base64"),
	};
}

const CARD_SECRET_VARIABLES = {
	cardPrivateKey: "CARD_PRIVATE_KEY",
	cardFingerprintKey: "CARD_FINGERPRINT_KEY",
	vaultKey: "VAULT_KEY",
	credentialsPrivateKey: "CREDENTIALS_PRIVATE_KEY",
	credentialsKey: "CREDENTIALS_KEY",
	invoiceLinkKey: "INVOICE_LINK_KEY",
} as const;

/** Sets every card secret the environment lacks from `secrets` (generating what is missing there too); returns the names it set. */
export function applyCardSecrets(secrets: LocalSecrets, env: NodeJS.ProcessEnv = process.env): string[] {
	const generated = newCardSecrets();
	const applied: string[] = [];
	for (const [field, variable] of Object.entries(CARD_SECRET_VARIABLES) as [keyof typeof CARD_SECRET_VARIABLES, string][]) {
		if (env[variable]) continue;
		secrets[field] ??= generated[field];
		env[variable] = secrets[field];
		applied.push(variable);
	}
	return applied;
}
