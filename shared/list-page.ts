// A page of a merchant list (docs/api.md, "Lists"): items read from a
// timeline or a bag (shared/timeline.ts) by key, filtered, and an opaque
// cursor to the next page. The cursor names the account and the filters it
// was made for, so it cannot be replayed against another list.
import { ApiError, ApiErrorType } from "./errors";
import type { Positioned } from "./timeline";

export interface Page<T> {
	data: T[];
	/** Where the next page starts; null when there is nothing after this page. */
	nextCursor: string | null;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/**
 * Refs one page may examine. A filter that matches few items (a rare
 * status) can end a page early, with a cursor to go on: a page's cost is
 * bounded whatever the data.
 */
export const MAX_SCAN = 1000;

export enum ListError {
	BadCursor = "BAD_CURSOR",
	ForeignCursor = "FOREIGN_CURSOR",
	BadDateRange = "BAD_DATE_RANGE",
	UnknownEvent = "UNKNOWN_EVENT",
	CursorAndAfter = "CURSOR_AND_AFTER",
}

/** The 400's message for each (docs/api.md, "Lists"). */
export const LIST_ERROR_MESSAGES: Record<ListError, string> = {
	[ListError.BadCursor]: "cursor is not one this API gave out",
	[ListError.ForeignCursor]: "cursor was given for another list: another account, or other filters",
	[ListError.BadDateRange]: "from and to must be dates (YYYY-MM-DD), from not after to",
	[ListError.UnknownEvent]: "after names no event of this account (unknown, or older than the retention)",
	[ListError.CursorAndAfter]: "either cursor or after, not both",
};

interface CursorBody {
	/** The account. */
	a: number;
	/** The filters, as `filtersKey` wrote them. */
	f: string;
	/** The position the page ended at. */
	p: number;
}

/** The filters of a request in a stable text (the order of query parameters does not matter). */
export function filtersKey(filters: Record<string, unknown>): string {
	return JSON.stringify(
		Object.keys(filters)
			.filter(name => filters[name] !== undefined)
			.sort()
			.map(name => [name, filters[name]]),
	);
}

export function encodeCursor(accountId: number, filters: string, position: number): string {
	return Buffer.from(JSON.stringify({ a: accountId, f: filters, p: position } satisfies CursorBody)).toString("base64url");
}

/** The position a cursor carries, if it was made for this account and these filters. */
export function decodeCursor(cursor: string, accountId: number, filters: string): number | ListError {
	let body: Partial<CursorBody>;
	try {
		if (!/^[A-Za-z0-9_-]{1,1000}$/.test(cursor)) return ListError.BadCursor;
		body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
	} catch {
		return ListError.BadCursor;
	}
	if (typeof body !== "object" || body === null || !Number.isSafeInteger(body.a) || typeof body.f !== "string") return ListError.BadCursor;
	if (!Number.isSafeInteger(body.p) || (body.p as number) < 0) return ListError.BadCursor;
	if (body.a !== accountId || body.f !== filters) return ListError.ForeignCursor;
	return body.p as number;
}

export interface PageQuery<T> {
	/** Refs next to a position, in position order: below it (newest first) or above it (oldest first). */
	read(from: number | null, count: number): Promise<{ n: number; refs: Positioned[] }>;
	/** The items of these ids that exist. */
	load(ids: (number | string)[]): Promise<Map<number | string, T>>;
	/** Whether the item belongs on the page (its account, the filters). */
	keep(item: T, at: Positioned): boolean;
	limit: number;
}

/** Where a page ended inside a batch of refs: the next page's position, or null at the list's end. */
interface PageEnd {
	next: number | null;
}

/** How many refs to read next: a page's worth first, then twice that, never past MAX_SCAN. */
const batchSize = (limit: number, scanned: number) => Math.min(MAX_SCAN - scanned, scanned === 0 ? limit : 2 * limit);

/** The ref's item when it exists and belongs on the page. */
function keptItem<T>(query: PageQuery<T>, found: Map<number | string, T>, at: Positioned): T | undefined {
	const item = found.get(at.ref[0]);
	return item !== undefined && query.keep(item, at) ? item : undefined;
}

/**
 * Newest first: from just below `below` (null: the newest) downwards. A ref
 * whose item does not exist is skipped (its insert failed or has not landed:
 * refs are written before their items). `until` ends the list at the first
 * ref older than it (a date range's start).
 */
export async function pageNewestFirst<T>(
	query: PageQuery<T> & { below: number | null; until?: number },
): Promise<{ items: T[]; next: number | null }> {
	const items: T[] = [];
	let below = query.below;
	let scanned = 0;
	for (;;) {
		const { refs } = await query.read(below, batchSize(query.limit, scanned));
		if (refs.length === 0) return { items, next: null };
		const found = await query.load(refs.map(e => e.ref[0]));
		const end = takeNewestFirst(query, refs, found, items);
		if (end) return { items, next: end.next };
		below = refs[0].position;
		scanned += refs.length;
		if (below <= 1) return { items, next: null };
		if (scanned >= MAX_SCAN) return { items, next: below };
	}
}

/** Adds a batch's items to the page, newest first; where the page ends inside the batch, if it does. */
function takeNewestFirst<T>(
	query: PageQuery<T> & { until?: number },
	refs: Positioned[],
	found: Map<number | string, T>,
	items: T[],
): PageEnd | undefined {
	for (let i = refs.length - 1; i >= 0; i--) {
		const at = refs[i];
		if (query.until !== undefined && at.ref[1] < query.until) return { next: null };
		const item = keptItem(query, found, at);
		if (item === undefined) continue;
		items.push(item);
		if (items.length === query.limit) return { next: at.position > 1 ? at.position : null };
	}
	return undefined;
}

/**
 * Oldest first: from just above `above` upwards, for catching up. A ref
 * whose item does not exist yet is a write in flight (refs are written
 * before their items): the page ends before it, so nothing is passed over,
 * unless it is older than `inFlightMs` (its writer died; the item, when its
 * sender retries, gets a new ref). `next` is null once the end was reached.
 */
export async function pageOldestFirst<T>(
	query: PageQuery<T> & { above: number; now: number; inFlightMs: number },
): Promise<{ items: T[]; next: number | null }> {
	const items: T[] = [];
	let above = query.above;
	let scanned = 0;
	for (;;) {
		const { n, refs } = await query.read(above, batchSize(query.limit, scanned));
		if (refs.length === 0) return { items, next: null };
		const found = await query.load(refs.map(e => e.ref[0]));
		const end = takeOldestFirst(query, { above, n, refs, found }, items);
		if (end) return { items, next: end.next };
		above = refs[refs.length - 1].position;
		scanned += refs.length;
		if (above >= n) return { items, next: null };
		if (scanned >= MAX_SCAN) return { items, next: above };
	}
}

/**
 * Adds a batch's items (read above `above`, `n` being the newest position) to the page, oldest first;
 * where the page ends inside the batch (full, or before a write in flight), if it does.
 */
function takeOldestFirst<T>(
	query: PageQuery<T> & { now: number; inFlightMs: number },
	batch: { above: number; n: number; refs: Positioned[]; found: Map<number | string, T> },
	items: T[],
): PageEnd | undefined {
	const { n, refs, found } = batch;
	let above = batch.above;
	for (const at of refs) {
		if (found.get(at.ref[0]) === undefined && query.now - at.ref[1] < query.inFlightMs) return { next: above };
		const item = keptItem(query, found, at);
		if (item !== undefined) {
			items.push(item);
			if (items.length === query.limit) return { next: at.position < n ? at.position : null };
		}
		above = at.position;
	}
	return undefined;
}

/** A bag's refs as a timeline's, newest first: position 1 is the oldest ref. */
export function bagReader(refs: Promise<Positioned["ref"][]>): PageQuery<never>["read"] {
	return async (below, count) => {
		const all = (await refs).map((ref, i) => ({ position: i + 1, ref }));
		const hi = Math.min(all.length, below === null ? all.length : below - 1);
		return { n: all.length, refs: all.slice(Math.max(0, hi - count), hi) };
	};
}

/** An action's answer: the page, or the 400 its error means. */
export function pageOrBadRequest<T>(result: Page<T> | ListError): Page<T> {
	if (typeof result === "string") throw new ApiError(ApiErrorType.BadRequest, LIST_ERROR_MESSAGES[result]);
	return result;
}

/** JSON Schema fragments of the list parameters every list takes. */
export const listParams = {
	limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT },
	cursor: { type: "string", minLength: 1, maxLength: 1000 },
};

/** `from` and `to`: calendar dates (checked for real dates by the list). */
export const dateRangeParams = {
	from: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" },
	to: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" },
};
