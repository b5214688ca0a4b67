// API tokens and webhook secrets carry 256 random bits and are shown once.
// Tokens are stored as their SHA-256 (see shared/crypto.ts), which needs no
// salt because the tokens are random.
import { randomBytes } from "node:crypto";
import type { Environment } from "../../shared/contracts/accounts";

export function newApiToken(environment: Environment): string {
	return `${environment === "production" ? "sk_live_" : "sk_test_"}${randomBytes(32).toString("base64url")}`;
}

export function newWebhookSecret(): string {
	return `whsec_${randomBytes(32).toString("base64url")}`;
}
