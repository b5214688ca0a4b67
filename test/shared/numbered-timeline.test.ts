// Numbered timelines on the real database server: refs placed at their
// numbers by concurrent writers in any order and again by retries, read back
// by number with the numbers not placed yet passed over, the date search, and
// the numbered bag.
import mongoose from "mongoose";
import { inBag, inTimeline, numberedAtOrBefore, numberedBag, numberedBelow, placeAll } from "../../shared/numbered-timeline";
import { CHUNK, createTimelines, type Timelines } from "../../shared/timeline";
import { uniqueDatabaseName } from "../setup/app";

let connection: mongoose.Connection;
let timelines: Timelines;

beforeAll(async () => {
	connection = await mongoose
		.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false, monitorCommands: true })
		.asPromise();
	timelines = createTimelines(connection);
});
afterAll(() => connection.close());

/** Every placed ref below `top`, newest first, a page of `count` at a time, as a list reads them. */
async function readDown(key: string, top: number, count: number): Promise<number[]> {
	const ids: number[] = [];
	let below: number | null = null;
	while (below === null || below > 1) {
		const { refs } = await numberedBelow(timelines, key, top, below, count);
		if (refs.length === 0) break;
		for (const { ref } of [...refs].reverse()) if (Number(ref[0]) > 0) ids.push(Number(ref[0]));
		below = refs[0].position;
	}
	return ids;
}

describe("Numbered timelines", () => {
	test("When 250 numbers are placed by 25 writers at once, in shuffled order, each placed twice, then the list reads every id once, by number", async () => {
		// Arrange: number n belongs to id 1000 + n; the writers finish in any order, and each retries once.
		const numbers = Array.from({ length: 250 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);

		// Act
		await Promise.all(
			Array.from({ length: 25 }, async (_, w) => {
				for (let i = w; i < numbers.length; i += 25) {
					const n = numbers[i];
					await placeAll(timelines, [inTimeline("numbered", n, [1000 + n, n * 10])]);
					await placeAll(timelines, [inTimeline("numbered", n, [1000 + n, n * 10 + 5])]);
				}
			}),
		);

		// Assert: the first placement stays, once per number, newest first.
		const expected = Array.from({ length: 250 }, (_, i) => 1250 - i);
		expect(await readDown("numbered", 250, 30)).toEqual(expected);
		const { refs } = await numberedBelow(timelines, "numbered", 250, null, 3);
		expect(refs.map(e => [e.position, e.ref])).toEqual([
			[248, [1248, 2480]],
			[249, [1249, 2490]],
			[250, [1250, 2500]],
		]);
	});

	test("When some numbers are taken but not placed yet, then they read as refs naming nothing, at the latest time, and the rest reads as placed", async () => {
		for (const n of [1, 2, 4, 5, CHUNK + 2]) await placeAll(timelines, [inTimeline("gaps", n, [n, n])]);

		const { n, refs } = await numberedBelow(timelines, "gaps", CHUNK + 3, null, CHUNK + 3);

		expect(n).toBe(CHUNK + 3);
		expect(refs).toHaveLength(CHUNK + 3);
		expect(refs[2]).toEqual({ position: 3, ref: [-3, Number.MAX_SAFE_INTEGER] });
		expect(refs.filter(e => Number(e.ref[0]) > 0).map(e => e.position)).toEqual([1, 2, 4, 5, CHUNK + 2]);
		expect(await readDown("gaps", CHUNK + 3, 2)).toEqual([CHUNK + 2, 5, 4, 2, 1]);
	});

	test("When a date is searched, then the last number placed at or before it is found across chunks", async () => {
		const top = 3 * CHUNK + 10;
		for (let n = 1; n <= top; n++) if (n % 7 !== 0) await placeAll(timelines, [inTimeline("dated", n, [n, 1000 * n])]);

		expect(await numberedAtOrBefore(timelines, "dated", top, 999)).toBe(0);
		expect(await numberedAtOrBefore(timelines, "dated", top, 1000 * (CHUNK + 6))).toBe(CHUNK + 6);
		// 2·CHUNK + 3 = 203 is a multiple of 7, not placed: the one before it.
		expect(await numberedAtOrBefore(timelines, "dated", top, 1000 * (2 * CHUNK + 3) + 500)).toBe(2 * CHUNK + 2);
		expect(await numberedAtOrBefore(timelines, "dated", top, Number.MAX_SAFE_INTEGER - 1)).toBe(top);
	});

	test("When a bag's numbers are placed out of order and again, then it reads each once, in number order", async () => {
		await Promise.all([7, 3, 12, 3, 7, 1].map(n => placeAll(timelines, [inBag("bag", n, [n * 100, n])])));

		expect(await numberedBag(timelines, "bag")).toEqual([
			[100, 1],
			[300, 3],
			[700, 7],
			[1200, 12],
		]);
		expect(await numberedBag(timelines, "never")).toEqual([]);
	});

	test("When 40 documents are placed at once, each in a list and a bag, some twice, then each slot holds its first ref, in few commands", async () => {
		// Arrange: document n is number n of the list and of its customer's bag (customers 0 to 3); every fifth places twice.
		const placements = (n: number, at: number) => [inTimeline("both", n, [n, at]), inBag(`bag-${n % 4}`, n, [n, at])];
		const commands: string[] = [];
		const client = connection.getClient();
		const listener = (event: { commandName: string; command: Record<string, unknown> }) => {
			if (event.command.update === "timeline_chunks") commands.push(event.commandName);
		};
		client.on("commandStarted", listener);

		// Act
		try {
			await Promise.all(
				Array.from({ length: 40 }, async (_, i) => {
					const n = i + 1;
					await placeAll(timelines, placements(n, n * 10));
					if (n % 5 === 0) await placeAll(timelines, placements(n, n * 10 + 5));
				}),
			);
		} finally {
			client.off("commandStarted", listener);
		}

		// Assert
		expect(await readDown("both", 40, 7)).toEqual(Array.from({ length: 40 }, (_, i) => 40 - i));
		for (let c = 0; c < 4; c++) {
			const expected = Array.from({ length: 10 }, (_, i) => 4 * i + (c === 0 ? 4 : c)).map(n => [n, n * 10]);
			expect(await numberedBag(timelines, `bag-${c}`)).toEqual(expected);
		}
		// 48 placement calls: those that came while one command was out went in the next.
		expect(commands.length).toBeGreaterThan(0);
		expect(commands.length).toBeLessThan(20);
	});
});
