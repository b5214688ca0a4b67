// Bearer authentication for /api and /admin, with the rate limits the
// gateway enforces: requests per second per account, failed authentications
// per minute per client address (against token guessing), and checkout
// submissions per minute per client address (against card testing, since the
// checkout needs no token).
import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import { LRUCache } from "lru-cache";
import type { Context } from "moleculer";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { call } from "../../shared/call";
import type { AuthenticatedAccount } from "../../shared/contracts/accounts";
import { secretsEqual, sha256Hex } from "../../shared/crypto";
import { ApiError, ApiErrorType } from "../../shared/errors";

export interface AuthOptions {
	rateLimitPerSecond: number;
	authFailuresPerMinute: number;
	checkoutsPerMinute: number;
	adminToken: string | undefined;
}

/** Token lookups are cached briefly; rotations clear an account's entries at once. */
const CACHE_TTL_MS = 30_000;

function bearerToken(req: IncomingMessage): string | undefined {
	const match = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(req.headers.authorization ?? "");
	return match?.[1];
}

/**
 * The client a limit counts against: the TCP peer's address (a proxy's
 * X-Forwarded-For is not trusted: it would let a client pick its own key).
 * An IPv4-mapped IPv6 address is the IPv4 address; an IPv6 address counts by
 * its /64, the block one subscriber gets, so rotating through it does not
 * bypass the limit.
 */
export function clientKey(address: string | undefined): string {
	if (!address || !ipaddr.isValid(address)) return address || "unknown";
	const ip = ipaddr.process(address);
	if (ip.kind() === "ipv4") return ip.toString();
	const parts = (ip as ipaddr.IPv6).parts.slice(0, 4);
	return `${parts.map(p => p.toString(16)).join(":")}::/64`;
}

/** A connection's key, computed once per socket (a keep-alive connection sends many requests). */
const socketKeys = new WeakMap<object, string>();

function clientAddress(req: IncomingMessage): string {
	const known = socketKeys.get(req.socket);
	if (known !== undefined) return known;
	const key = clientKey(req.socket.remoteAddress);
	socketKeys.set(req.socket, key);
	return key;
}

function tooManyRequests(rejection: unknown): ApiError {
	const ms = rejection instanceof RateLimiterRes ? rejection.msBeforeNext : 1000;
	return new ApiError(ApiErrorType.TooManyRequests, "Too many requests, retry later", {
		retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)),
	});
}

export function createAuthenticator(options: AuthOptions) {
	const cache = new LRUCache<string, AuthenticatedAccount | "none">({ max: 50_000, ttl: CACHE_TTL_MS });
	const perAccount = new RateLimiterMemory({ points: options.rateLimitPerSecond, duration: 1 });
	const failures = new RateLimiterMemory({ points: options.authFailuresPerMinute, duration: 60 });
	const checkouts = new RateLimiterMemory({ points: options.checkoutsPerMinute, duration: 60 });

	async function refuseBlockedClient(req: IncomingMessage): Promise<void> {
		const state = await failures.get(clientAddress(req));
		if (state && state.consumedPoints >= options.authFailuresPerMinute) throw tooManyRequests(state);
	}

	async function unauthorized(req: IncomingMessage): Promise<ApiError> {
		await failures.consume(clientAddress(req)).catch(() => undefined);
		return new ApiError(ApiErrorType.Unauthorized);
	}

	async function lookUp(ctx: Context, tokenHash: string): Promise<AuthenticatedAccount | null> {
		let entry = cache.get(tokenHash);
		if (entry === undefined) {
			const account = await call(ctx, "accounts.authenticate", { tokenHash });
			entry = account ?? "none";
			const ttl = account?.tokenExpiresAt ? Math.min(CACHE_TTL_MS, account.tokenExpiresAt - Date.now()) : CACHE_TTL_MS;
			if (ttl > 0) cache.set(tokenHash, entry, { ttl });
		}
		if (entry === "none" || (entry.tokenExpiresAt !== null && entry.tokenExpiresAt <= Date.now())) return null;
		return entry;
	}

	return {
		/** The API token's account; throws 401 or 429 as ApiError. */
		async authenticateApi(ctx: Context, req: IncomingMessage): Promise<AuthenticatedAccount> {
			await refuseBlockedClient(req);
			const token = bearerToken(req);
			const account = token ? await lookUp(ctx, sha256Hex(token)) : null;
			if (!account) throw await unauthorized(req);
			await perAccount.consume(account.accountId).catch(rejection => {
				throw tooManyRequests(rejection);
			});
			return account;
		},

		async authenticateAdmin(req: IncomingMessage): Promise<void> {
			await refuseBlockedClient(req);
			const token = bearerToken(req);
			if (!token || !options.adminToken || !secretsEqual(token, options.adminToken)) throw await unauthorized(req);
		},

		async limitCheckouts(req: IncomingMessage): Promise<void> {
			await checkouts.consume(clientAddress(req)).catch(rejection => {
				throw tooManyRequests(rejection);
			});
		},

		forgetAccount(accountId: number): void {
			for (const [hash, entry] of cache.entries()) {
				if (entry !== "none" && entry.accountId === accountId) cache.delete(hash);
			}
		},
	};
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
