// Reads records for the relay by id, one command per collection, and takes
// the events off the records once notifications has stored them.
import { updateLater } from "../../../shared/persistence";
import type { OutboxEvent } from "../records/outbox-event";

export const byId = <Doc extends { _id: number }>(docs: Doc[]) => new Map(docs.map(doc => [doc._id, doc]));

/** Records by id, one command per collection (those already at hand are not read again). */
export async function readByIds<Doc extends { _id: number }>(
	model: { find(filter: object): { lean(): Promise<unknown> } },
	ids: Iterable<number>,
	known: Map<number, Doc> = new Map(),
): Promise<Map<number, Doc>> {
	const missing = [...new Set(ids)].filter(id => !known.has(id));
	if (missing.length === 0) return known;
	const docs = (await model.find({ _id: { $in: missing } }).lean()) as Doc[];
	return new Map([...known, ...byId(docs)]);
}

/**
 * Moves each record's relayed events from its outbox to `relayed`, with what other relays on this node mark in the
 * same moment (updateLater): nothing waits on it but the relay's end, and the sweep leaves a record alone while its
 * relay is in flight.
 */
export function markRelayed(model: { collection: unknown }, docs: { _id: number; outbox: OutboxEvent[] }[]): Promise<void> {
	return updateLater(
		model,
		docs
			.filter(doc => doc.outbox.length > 0)
			.map(doc => {
				const ids = doc.outbox.map(event => event.id);
				return {
					updateOne: { filter: { _id: doc._id }, update: { $pull: { outbox: { id: { $in: ids } } }, $push: { relayed: { $each: ids } } } },
				};
			}),
	);
}
