// A merchant's list read whole, as a merchant pages through it: every page of
// `GET /api/<list>`, following `nextCursor` until it is null.
import type { TestApp } from "../setup/app";
import { bearer, type TestMerchant } from "./merchant";

/** Every item of the list at `path` (query parameters allowed), `limit` a page, in the order the pages list them. */
export async function everyPage<T = { id: number | string }>(
	app: TestApp,
	merchant: TestMerchant,
	path: string,
	options: { limit?: number; timeoutMs?: number } = {},
): Promise<T[]> {
	const items: T[] = [];
	let cursor = "";
	do {
		const query = `${path.includes("?") ? "&" : "?"}limit=${options.limit ?? 100}${cursor ? `&cursor=${cursor}` : ""}`;
		const res = await app
			.http()
			.get(`${path}${query}`)
			.set(bearer(merchant))
			.timeout(options.timeoutMs ?? 10_000);
		if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
		items.push(...(res.body.data as T[]));
		cursor = res.body.nextCursor ?? "";
		// An events page ends early, even empty, before an event still being stored: ask again a moment later.
		if (cursor && res.body.data.length === 0) await new Promise(r => setTimeout(r, 500));
	} while (cursor);
	return items;
}
