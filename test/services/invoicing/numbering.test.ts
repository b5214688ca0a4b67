// Gapless numbers on the real database server (services/invoicing/numbering.ts): a call's look-up of its documents
// stands in for each key's own read only while nothing this node knows of could have written the document since.
// Each case lays out one interleaving by hand, in the order the database sees it.
import mongoose from "mongoose";
import { createInvoicingModels, type InvoicingDb } from "../../../services/invoicing/models";
import { numberingMoment, releaseNumber, takeNumber } from "../../../services/invoicing/numbering";
import { uniqueDatabaseName } from "../../setup/app";

let connection: mongoose.Connection;
let db: InvoicingDb;
let nextAccount = 1;

beforeAll(async () => {
	connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false }).asPromise();
	db = createInvoicingModels(connection);
});
afterAll(() => connection.close());

const deps = () => ({ db, now: () => new Date() });

/** An `exists` that answers `answer` and counts its reads. */
function existsAnswering(answer: boolean) {
	const asked = { count: 0 };
	const exists = async () => {
		asked.count++;
		return answer;
	};
	return { asked, exists };
}

describe("Invoice numbering", () => {
	test("When a call looked its documents up after the sequence was read, then each number is taken without reading its key again", async () => {
		// Arrange: the sequence is read (and kept) by a first number.
		const accountId = nextAccount++;
		expect(await takeNumber(deps(), accountId, "invoice", 1, existsAnswering(false).exists)).toEqual({ sequence: 1 });
		const since = numberingMoment();
		const { asked, exists } = existsAnswering(false);

		// Act: keys 2 and 3, looked up at `since` and not found.
		const taken = [
			await takeNumber(deps(), accountId, "invoice", 2, exists, since),
			await takeNumber(deps(), accountId, "invoice", 3, exists, since),
		];

		// Assert
		expect(taken).toEqual([{ sequence: 2 }, { sequence: 3 }]);
		expect(asked.count).toBe(0);
	});

	test("When this node wrote a key's document after the look-up, then the key is read again and gets no second number", async () => {
		// Arrange: key 11 numbered; the look-up, then its document written and its number released on this node.
		const accountId = nextAccount++;
		await takeNumber(deps(), accountId, "invoice", 10, existsAnswering(false).exists);
		await takeNumber(deps(), accountId, "invoice", 11, existsAnswering(false).exists);
		const since = numberingMoment();
		await releaseNumber(deps(), accountId, "invoice", 11);
		const { asked, exists } = existsAnswering(true);

		// Act: key 11 again, as the look-up found nothing.
		const taken = await takeNumber(deps(), accountId, "invoice", 11, exists, since);

		// Assert: written, no number; the next key takes 3, so no number went unused.
		expect(taken).toBeNull();
		expect(asked.count).toBe(1);
		expect(await takeNumber(deps(), accountId, "invoice", 12, existsAnswering(false).exists)).toEqual({ sequence: 3 });
	});

	test("When the sequence is read from the database after the look-up, then the key is read again", async () => {
		// Arrange: another node took number 1 and wrote key 20's document; this node has not read the sequence yet.
		const accountId = nextAccount++;
		const since = numberingMoment();
		await db.documentSequences.create({ _id: `${accountId}:invoice`, last: 1, pending: [] });
		const { asked, exists } = existsAnswering(true);

		// Act
		const taken = await takeNumber(deps(), accountId, "invoice", 20, exists, since);

		// Assert
		expect(taken).toBeNull();
		expect(asked.count).toBe(1);
	});

	test("When another node took a number after the sequence was read, then the compare-and-set fails and the key is read again", async () => {
		// Arrange: this node read the sequence (number 1); another node then numbers key 31 and writes it.
		const accountId = nextAccount++;
		await takeNumber(deps(), accountId, "invoice", 30, existsAnswering(false).exists);
		const since = numberingMoment();
		await db.documentSequences.updateOne({ _id: `${accountId}:invoice` }, { $set: { last: 2 } });
		const { asked, exists } = existsAnswering(true);

		// Act: key 31, as the look-up (before the other node wrote it) found nothing.
		const taken = await takeNumber(deps(), accountId, "invoice", 31, exists, since);

		// Assert
		expect(taken).toBeNull();
		expect(asked.count).toBe(1);
	});
});
