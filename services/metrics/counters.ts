// Applies metrics entries to the month counters exactly once
// (docs/metrics.md#days-and-keys). An entry rides on one of billing's outbox
// events, and billing's relay hands it here (metrics.apply) before the event
// leaves the outbox, under the event's id: one keyed update per month document
// adds the counts and notes the ids in `applied`, and matches only while none
// of them is noted there. A relay or a metrics node that crashed after that
// update and before the event left the outbox applies it again at the next
// sweep, which then matches nothing: counted once. Once the events have left
// the outbox (the relay says so in a later metrics.apply), their ids are
// dropped from `applied` at an update of the same month on this node once
// releaseGraceMs() has passed (or stay, if the node stops first: harmless).
// Not sooner: another relay that read the event before it left the outbox may
// still be handing it over, and would count it again once its id is gone.
// Not much later either: a month document keeps the ids of that long.
// The entries handed over in the same moment (APPLY_LINGER_MS) go to each
// month document in one update, whatever relay handed them.
import { config } from "../../shared/config";
import { type Applicable, type MetricsEntry, monthKey } from "../../shared/contracts/metrics";
import { keyedGroupCommit } from "../../shared/group-commit";
import { isDuplicateKey, raw } from "../../shared/persistence";
import type { MetricsDb } from "./models";

/**
 * How long an id stays in `applied` after its event left the outbox: longer than a relay that read the event before
 * takes to hand it over (its calls to notifications and to the metrics service time out after REQUEST_TIMEOUT_MS),
 * three such calls and at least 30 s. At 90 events a second for one account, about 2,700 ids (120 kB) in its month.
 */
export const releaseGraceMs = () => Math.max(30_000, 3 * config().requestTimeoutMs);

/** How long a month's update waits for the entries other relays hand over in the same moment. */
const APPLY_LINGER_MS = 250;

/** An event's id that left the outbox, under the month key its entry was counted in. */
export interface Released {
	eventId: string;
	month: string;
}

/** The `$inc` of entries: `days.<DD>.<scope>.<count>`. */
function increments(entries: MetricsEntry[]): Record<string, number> {
	const inc: Record<string, number> = {};
	for (const entry of entries) {
		const day = entry.day.slice(8, 10);
		for (const [scope, counts] of Object.entries(entry.counts))
			for (const [count, n] of Object.entries(counts ?? {})) {
				const path = `days.${day}.${scope}.${count}`;
				inc[path] = (inc[path] ?? 0) + (n as number);
			}
	}
	return inc;
}

const notApplied = (ids: string[]) => Object.fromEntries(ids.map(id => [`applied.${id}`, { $exists: false }]));

export function createMetricsCounters(db: MetricsDb, now: () => Date = () => new Date()) {
	const months = raw(db.metricsMonths);
	/** Per account and currency, the earliest month this node knows the index records. */
	const indexed = new Map<string, string>();
	/** Per month document, ids of events that left the outbox and when this node heard so: dropped from `applied` later. */
	const droppable = new Map<string, Map<string, number>>();

	/** The account's first month in each currency is recorded before anything is counted in it (reads sum from there). */
	async function index(entries: MetricsEntry[]): Promise<void> {
		const earliest = new Map<string, { accountId: number; currency: string; month: string }>();
		for (const { accountId, currency, day } of entries) {
			const key = `${accountId}:${currency}`;
			const month = day.slice(0, 7);
			const known = indexed.get(key);
			if (known !== undefined && known <= month) continue;
			const seen = earliest.get(key);
			if (!seen || month < seen.month) earliest.set(key, { accountId, currency, month });
		}
		if (earliest.size === 0) return;
		await raw(db.metricsIndex).bulkWrite(
			[...earliest.values()].map(({ accountId, currency, month }) => ({
				updateOne: { filter: { _id: accountId }, update: { $min: { [`first.${currency}`]: month } }, upsert: true },
			})),
			{ ordered: false },
		);
		for (const [key, { month }] of earliest) indexed.set(key, month);
	}

	/**
	 * One month's entries in one update. A duplicate key means the document exists and one of them is noted in it, or
	 * another node inserted the document meanwhile: tried again now that it exists, then each alone (an entry noted
	 * then matches nothing: applied before).
	 */
	async function applyMonth(key: string, applicable: Applicable[], exists = false): Promise<void> {
		const [{ entry }] = applicable;
		const ids = applicable.map(a => a.eventId);
		const due = now().getTime() - releaseGraceMs();
		const drop = [...(droppable.get(key) ?? [])].filter(([id, at]) => at <= due && !ids.includes(id)).map(([id]) => id);
		const update = {
			$setOnInsert: { accountId: entry.accountId, currency: entry.currency, month: entry.day.slice(0, 7) },
			$inc: increments(applicable.map(a => a.entry)),
			$set: Object.fromEntries(ids.map(id => [`applied.${id}`, 1])),
			...(drop.length ? { $unset: Object.fromEntries(drop.map(id => [`applied.${id}`, ""])) } : {}),
		};
		if (await updated(key, ids, update)) {
			for (const id of drop) droppable.get(key)?.delete(id);
			return;
		}
		if (!exists) return applyMonth(key, applicable, true);
		if (applicable.length > 1) for (const one of applicable) await applyMonth(key, [one], true);
	}

	/**
	 * Each month's entries of the moment, in one update. An event two relays handed over at once is applied once: only
	 * its first copy is counted (the update would add both).
	 */
	const applyTogether = keyedGroupCommit<Applicable[]>(
		async (key, groups) => {
			const seen = new Set<string>();
			await applyMonth(
				key,
				groups.flat().filter(a => !seen.has(a.eventId) && seen.add(a.eventId)),
			);
			return undefined;
		},
		{ lingerMs: APPLY_LINGER_MS },
	);

	/** The month's update, if no id is noted in it; false on a duplicate key (see applyMonth). */
	async function updated(key: string, ids: string[], update: object): Promise<boolean> {
		try {
			await months.updateOne({ _id: key, ...notApplied(ids) } as never, update as never, { upsert: true });
			return true;
		} catch (err) {
			if (isDuplicateKey(err)) return false;
			throw err;
		}
	}

	return {
		/** Applies the entries (of any accounts and days) not applied yet; call it before their events leave the outbox. */
		async apply(applicable: Applicable[]): Promise<void> {
			if (applicable.length === 0) return;
			await index(applicable.map(a => a.entry));
			const byMonth = new Map<string, Applicable[]>();
			for (const a of applicable) {
				const key = monthKey(a.entry.accountId, a.entry.currency, a.entry.day.slice(0, 7));
				(byMonth.get(key) ?? byMonth.set(key, []).get(key)!).push(a);
			}
			await Promise.all([...byMonth].map(([key, of]) => applyTogether(key, of)));
		},
		/** Their events left the outbox: their ids may go from `applied`. */
		released(released: Released[]): void {
			const at = now().getTime();
			for (const { eventId, month } of released) (droppable.get(month) ?? droppable.set(month, new Map()).get(month)!).set(eventId, at);
		},
	};
}

export type MetricsCounters = ReturnType<typeof createMetricsCounters>;
