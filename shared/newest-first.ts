// One page of a merchant's list, newest first, read from a timeline or a bag
// (shared/timeline.ts, shared/numbered-timeline.ts) and loaded by key: the
// customers', transactions' and disputes' lists (billing) and the invoices'
// and credit notes' (invoicing) page alike, with the same cursors and date
// ranges (docs/api.md#lists).
import { DateTime } from "luxon";
import { config } from "./config";
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, filtersKey, ListError, type Page, type PageQuery, pageNewestFirst } from "./list-page";
import { zoneOf } from "./time";

/**
 * Refs are in append order, which follows the items' times to within a
 * request's duration; a date range starts reading this much past its end and
 * stops this much before its start, and checks each item's own time.
 */
const ORDER_SKEW_MS = 5 * 60_000;

export interface ListQuery {
	accountId: number;
	limit?: number;
	cursor?: string;
	/** YYYY-MM-DD, in the service's time zone (TIME_ZONE), inclusive. */
	from?: string;
	to?: string;
}

interface DateRange {
	/** Epoch ms, inclusive; the start of `from`. */
	start?: number;
	/** Epoch ms, exclusive; the start of the day after `to`. */
	end?: number;
}

function dateRange(query: ListQuery): DateRange | ListError {
	const zone = zoneOf(config().timeZone);
	const day = (text: string) => DateTime.fromISO(text, { zone }).startOf("day");
	const from = query.from === undefined ? undefined : day(query.from);
	const to = query.to === undefined ? undefined : day(query.to).plus({ days: 1 });
	if (from?.isValid === false || to?.isValid === false || (from && to && from >= to)) return ListError.BadDateRange;
	return { start: from?.toMillis(), end: to?.toMillis() };
}

const within = (range: DateRange, at: number) =>
	(range.start === undefined || at >= range.start) && (range.end === undefined || at < range.end);

/** Where a list's refs are read: a timeline (which a date range's end is searched in) or a bag. */
export interface ListSource {
	read: PageQuery<never>["read"];
	/** The last position whose ref's time is at most `at`; absent: a bag, read whole. */
	lastAtOrBefore?(at: number): Promise<number>;
}

/** One page of a list of documents keyed by number, newest first. */
export async function newestFirst<Doc extends { _id: number; accountId: number }, View>(
	query: ListQuery,
	filters: Record<string, unknown>,
	source: ListSource,
	model: { find(filter: object): { lean<R>(): Promise<R> } },
	keep: (doc: Doc) => boolean,
	view: (doc: Doc) => View,
	/** The time a document is listed at: a ref that names its id at another time is not its own (recordTransactions). */
	timeOf?: (doc: Doc) => number,
): Promise<Page<View> | ListError> {
	const range = dateRange(query);
	if (typeof range === "string") return range;
	const fingerprint = filtersKey(filters);
	let below: number | null = null;
	if (query.cursor !== undefined) {
		const position = decodeCursor(query.cursor, query.accountId, fingerprint);
		if (typeof position === "string") return position;
		below = position;
	} else if (range.end !== undefined && source.lastAtOrBefore) {
		below = (await source.lastAtOrBefore(range.end + ORDER_SKEW_MS)) + 1;
	}
	const { items, next } = await pageNewestFirst<Doc>({
		read: source.read,
		load: async ids => new Map((await model.find({ _id: { $in: ids } }).lean<Doc[]>()).map(doc => [doc._id, doc])),
		keep: (doc, at) =>
			doc.accountId === query.accountId && within(range, at.ref[1]) && (timeOf === undefined || timeOf(doc) === at.ref[1]) && keep(doc),
		limit: query.limit ?? DEFAULT_LIMIT,
		below,
		until: range.start === undefined ? undefined : range.start - ORDER_SKEW_MS,
	});
	return { data: items.map(view), nextCursor: next === null ? null : encodeCursor(query.accountId, fingerprint, next) };
}
