// Digests and secret comparison shared by the services: SHA-256 in hex, and a constant-time comparison.
import { createHash, timingSafeEqual } from "node:crypto";

export function sha256Hex(value: string): string {
	return createHash("sha256").update(value).digest("hex");
}

/** Compares two secrets in constant time by comparing their digests. */
export function secretsEqual(a: string, b: string): boolean {
	return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}
