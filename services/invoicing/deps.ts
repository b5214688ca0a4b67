// What invoicing's domain functions are given: its database, the signed
// links' key, and what it reads of accounts (the seller's settings and the
// products' names, kept 30 s per node) and hands to notifications.
import { LRUCache } from "lru-cache";
import type { ServiceBroker } from "moleculer";
import { call } from "../../shared/call";
import { config } from "../../shared/config";
import type { IssueEventsDeps } from "./document-events";
import { createDocumentLinks, type DocumentLinks } from "./links";
import type { InvoicingDb } from "./models";

export interface InvoicingDeps extends IssueEventsDeps {
	db: InvoicingDb;
	/** The signed links buyers open invoices and credit notes by (INVOICE_LINK_KEY). */
	documentLinks: DocumentLinks;
	/** Counts a compare-and-set lost to another node (numbering.ts). */
	lostCompareAndSet(): void;
}

/** Answers kept `ttl` ms per key (a failed call is not kept). */
function kept<V extends {}>(ttl: number, load: (key: string) => Promise<V>) {
	const cache = new LRUCache<string, V>({ max: 10_000, ttl });
	return async (key: string): Promise<V> => {
		const found = cache.get(key);
		if (found !== undefined) return found;
		const value = await load(key);
		cache.set(key, value);
		return value;
	};
}

/** The signed links of invoices (docs/invoices.md#links): the key every invoicing node shares. */
function documentLinks(): DocumentLinks {
	const { invoiceLinkKey, publicBaseUrl } = config();
	if (!invoiceLinkKey)
		throw new Error("INVOICE_LINK_KEY is not set: invoicing signs the links of invoices with it (npm start generates one)");
	return createDocumentLinks(Buffer.from(invoiceLinkKey, "base64"), publicBaseUrl);
}

const ACCOUNT_CACHE_MS = 30_000;

export function createInvoicingDeps(broker: ServiceBroker, db: InvoicingDb, counters: { lostCompareAndSet(): void }): InvoicingDeps {
	const seller = kept(ACCOUNT_CACHE_MS, async accountId => {
		const { name, invoicing } = await call(broker, "accounts.get", { accountId: Number(accountId) });
		return { name, invoicing };
	});
	const productName = kept(ACCOUNT_CACHE_MS, async key => {
		const [accountId, productId] = key.split(":").map(Number);
		return { name: (await call(broker, "accounts.getProduct", { accountId, productId }))?.name ?? null };
	});
	const links = documentLinks();
	return {
		db,
		now: () => new Date(),
		sellerOf: accountId => seller(String(accountId)),
		productNameOf: async (accountId, productId) => (await productName(`${accountId}:${productId}`)).name,
		documentLinks: links,
		linkOf: links.linkOf,
		enqueueAll: (events, resent) => call(broker, "notifications.enqueueAll", { events, resent }),
		lostCompareAndSet: counters.lostCompareAndSet,
	};
}
