// Hands the entries of relayed events to the metrics service, which owns the
// counters (metrics.apply, docs/metrics.md#counted-once). The relay calls
// `apply` after the events were enqueued to notifications and before they
// leave the outbox, and waits for the answer: a crash, or a metrics outage,
// leaves them in the outbox for the next sweep, which hands them again, and
// the metrics service applies each event's entry once by its id. `released`
// notes the events that have since left the outbox; their ids ride on the
// next call, so the metrics service may drop them from its month records.
import { type Applicable, type MetricsActions, monthKey } from "../../../shared/contracts/metrics";

type Apply = (params: MetricsActions["metrics.apply"]["params"]) => Promise<unknown>;

export function metricsHandover(apply: Apply) {
	/** Events that left the outbox since the last call, under their entries' month keys. */
	let released: { eventId: string; month: string }[] = [];
	return {
		/** Applied once each, whatever was applied before; throws when the metrics service did not answer. */
		async apply(entries: Applicable[]): Promise<void> {
			if (entries.length === 0) return;
			const sending = released;
			released = [];
			try {
				await apply({ entries, ...(sending.length > 0 ? { released: sending } : {}) });
			} catch (err) {
				released.push(...sending);
				throw err;
			}
		},
		/** Their events left the outbox. */
		released(entries: Applicable[]): void {
			for (const { eventId, entry } of entries)
				released.push({ eventId, month: monthKey(entry.accountId, entry.currency, entry.day.slice(0, 7)) });
		},
	};
}

export type MetricsHandover = ReturnType<typeof metricsHandover>;
