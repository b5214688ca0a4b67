// `npm start` needs no set-up: secrets it generates for the embedded default
// are kept in DATA_DIR/secrets.json (mode 600) so they survive restarts.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface LocalSecrets {
	adminToken?: string;
	demoApiToken?: string;
	demoAccountId?: number;
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
