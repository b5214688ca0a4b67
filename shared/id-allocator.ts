// Numeric ids that are unique across any number of nodes without a database
// round trip per id: each node reserves a block of ids at a time with one
// atomic $inc. The block is read from the pre-image (`returnDocument:
// "before"`), which is correct on MongoDB and on mongo-java-server alike.

import type { Connection, Model } from "mongoose";
import { Schema } from "mongoose";
import { insertOnce } from "./persistence";

interface SequenceDoc {
	_id: string;
	next: number;
}

const sequenceSchema = new Schema<SequenceDoc>({ _id: String, next: { type: Number, required: true } }, { versionKey: false });

export interface IdAllocator {
	next(): Promise<number>;
	/** Every id any node has allocated so far is below it (a walk over the ids by key stops there). */
	bound(): Promise<number>;
}

export function createIdAllocator(connection: Connection, sequence: string, blockSize = 100): IdAllocator {
	const sequences: Model<SequenceDoc> =
		connection.models.Sequence ?? connection.model<SequenceDoc>("Sequence", sequenceSchema, "sequences");
	let nextId = 0;
	let blockEnd = 0;
	let reserving: Promise<void> | null = null;

	async function reserveBlock(): Promise<void> {
		for (;;) {
			const before = await sequences
				.findOneAndUpdate({ _id: sequence }, { $inc: { next: blockSize } }, { returnDocument: "before" })
				.lean();
			if (before) {
				nextId = before.next;
				blockEnd = before.next + blockSize;
				return;
			}
			// First use of this sequence: create it; a racing node may win, which is fine.
			await insertOnce(sequences, { _id: sequence, next: 1 });
		}
	}

	return {
		async next() {
			while (nextId >= blockEnd) {
				reserving ??= reserveBlock().finally(() => {
					reserving = null;
				});
				await reserving;
			}
			return nextId++;
		},
		async bound() {
			return (await sequences.findById(sequence).lean())?.next ?? 1;
		},
	};
}
