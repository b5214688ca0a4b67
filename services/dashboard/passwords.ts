// Passwords hashed with scrypt (Node's crypto, memory-hard): `scrypt$N$r$p$salt$hash`,
// so the cost can rise later and old hashes still verify.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** 2^15 × 8 × 128 B = 32 MiB per hash: OWASP's scrypt minimum is 2^17 with r=8 at 128 MiB, or this with p=3. */
const COST = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

export async function hashPassword(password: string): Promise<string> {
	const salt = randomBytes(16);
	const hash = await scrypt(password, salt, KEY_LENGTH, { ...COST, maxmem: MAX_MEMORY });
	return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
	const [kind, n, r, p, salt, hash] = stored.split("$");
	if (kind !== "scrypt" || !salt || !hash) return false;
	const expected = Buffer.from(hash, "base64url");
	const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, {
		N: Number(n),
		r: Number(r),
		p: Number(p),
		maxmem: MAX_MEMORY,
	});
	return timingSafeEqual(actual, expected);
}

/** A hash of a password nobody has: sign-in for an unknown email verifies against it, so it takes as long as for a known one. */
export const DECOY_HASH = hashPassword(randomBytes(16).toString("hex"));
