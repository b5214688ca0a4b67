// `npm run --silent secrets:env > .env`: fresh secrets for a deployment, as
// an env file docker compose reads. Every node that needs a key must get the
// same one, so generate them once and keep the file safe.
import { newAdminToken, newCardSecrets } from "../dev/local-secrets";

const { cardPrivateKey, cardFingerprintKey, vaultKey, credentialsPrivateKey, credentialsKey, invoiceLinkKey } = newCardSecrets();
const lines = [
	`ADMIN_TOKEN=${newAdminToken()}`,
	// One line: the service turns the \n escapes back into line breaks.
	`CARD_PRIVATE_KEY=${cardPrivateKey.trim().replace(/\n/g, "\\n")}`,
	`CARD_FINGERPRINT_KEY=${cardFingerprintKey}`,
	`VAULT_KEY=${vaultKey}`,
	`CREDENTIALS_PRIVATE_KEY=${credentialsPrivateKey.trim().replace(/\n/g, "\\n")}`,
	`CREDENTIALS_KEY=${credentialsKey}`,
	`INVOICE_LINK_KEY=${invoiceLinkKey}`,
];
process.stdout.write(`${lines.join("\n")}\n`);
