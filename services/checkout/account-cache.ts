// What a checkout node keeps of the accounts it serves, so that a checkout
// reads no account, product, MID group or blacklist: the checkout context of
// each (account, product) and the blacklist's answer for each (account, card
// prefix). A change to the account drops all of it on every node at once
// (accounts.updated, broadcast by the accounts service after the write); the
// entries also expire after CACHE_TTL_MS, in case that event was lost in a
// transporter outage (docs/operations.md).
import { LRUCache } from "lru-cache";
import type { Call } from "../../shared/call";
import type { CheckoutContext } from "../../shared/contracts/accounts";

export const CACHE_TTL_MS = 30_000;

/** The context plus whether this card's BIN is blocked. */
export type CardContext = CheckoutContext & { binBlacklisted: boolean };

export interface AccountCache {
	/** null: no such account. */
	checkoutContext(input: { accountId: number; productId: number; cardPrefix: string }): Promise<CardContext | null>;
	/** The account changed: nothing cached of it is used again. */
	drop(accountId: number): void;
}

export function createAccountCache(call: Call): AccountCache {
	// Keys carry the account's generation: dropping an account moves it on, and its old entries age out unused.
	const generations = new Map<number, number>();
	const contexts = new LRUCache<string, Promise<CheckoutContext | null>>({ max: 10_000, ttl: CACHE_TTL_MS });
	const bins = new LRUCache<string, Promise<boolean>>({ max: 50_000, ttl: CACHE_TTL_MS });
	const key = (accountId: number, rest: string | number) => `${accountId}:${generations.get(accountId) ?? 0}:${rest}`;

	/** One request per key however many checkouts ask at once; a failed or empty answer is not kept. */
	function cached<T>(cache: LRUCache<string, Promise<T>>, k: string, load: () => Promise<T>): Promise<T> {
		let answer = cache.get(k);
		if (!answer) {
			answer = load();
			cache.set(k, answer);
			answer.then(
				value => value === null && cache.delete(k),
				() => cache.delete(k),
			);
		}
		return answer;
	}

	return {
		async checkoutContext({ accountId, productId, cardPrefix }) {
			const [context, binBlacklisted] = await Promise.all([
				cached(contexts, key(accountId, productId), () => call("accounts.checkoutContext", { accountId, productId })),
				cached(bins, key(accountId, cardPrefix), () => call("accounts.isBinBlacklisted", { accountId, cardPrefix })),
			]);
			return context && { ...context, binBlacklisted };
		},
		drop(accountId) {
			generations.set(accountId, (generations.get(accountId) ?? 0) + 1);
		},
	};
}
