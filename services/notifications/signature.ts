// X-Webhook-Signature: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
// The timestamp is the attempt's, so receivers can refuse replays of old
// requests; docs/webhooks.md shows how to verify it.
import { createHmac } from "node:crypto";

export function signatureHeader(secret: string, rawBody: string, at: Date): string {
	const t = Math.floor(at.getTime() / 1000);
	const v1 = createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex");
	return `t=${t},v1=${v1}`;
}
