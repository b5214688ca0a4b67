// Timelines on the real database server: positions from concurrent appends,
// reads across chunk boundaries, the date search, and the chunk a dead
// appender failed to copy out.
import mongoose from "mongoose";
import {
	addToBags,
	append,
	bag,
	CHUNK,
	createTimelines,
	lastAtOrBefore,
	refsAbove,
	refsBelow,
	type Timelines,
} from "../../shared/timeline";
import { uniqueDatabaseName } from "../setup/app";

let connection: mongoose.Connection;
let timelines: Timelines;

beforeAll(async () => {
	connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false }).asPromise();
	timelines = createTimelines(connection);
});
afterAll(() => connection.close());

describe("Timelines", () => {
	test("When 450 refs are appended by 30 writers at once, then positions 1..450 each hold one ref, readable from both ends", async () => {
		// Act
		const ids = Array.from({ length: 450 }, (_, i) => i + 1);
		const positions = new Map<number, number>();
		await Promise.all(
			Array.from({ length: 30 }, async (_, w) => {
				for (let i = w; i < ids.length; i += 30) positions.set(ids[i], await append(timelines, "concurrent", [[ids[i], 1000 + ids[i]]]));
			}),
		);

		// Assert
		expect([...positions.values()].sort((a, b) => a - b)).toEqual(ids);
		const down: number[] = [];
		for (let below: number | null = null; below !== 1; ) {
			const { refs } = await refsBelow(timelines, "concurrent", below, 37);
			for (const e of refs.reverse()) {
				expect(positions.get(e.ref[0] as number)).toBe(e.position);
				down.push(e.position);
			}
			below = refs[refs.length - 1].position;
		}
		expect(down).toEqual([...ids].reverse());
		const up = (await refsAbove(timelines, "concurrent", 95, 120)).refs.map(e => e.position);
		expect(up).toEqual(ids.slice(95, 215));
	});

	test("When a batch is appended, then its refs take consecutive positions and the chunk it completes is copied out", async () => {
		await append(timelines, "batch", [[1, 1]]);

		const first = await append(
			timelines,
			"batch",
			Array.from({ length: CHUNK }, (_, i) => [i + 2, i + 2] as [number, number]),
		);

		expect(first).toBe(2);
		expect(await timelines.chunks.findById("batch#0").lean()).toEqual(expect.objectContaining({ entries: expect.any(Array) }));
		expect((await refsBelow(timelines, "batch", null, 3)).refs.map(e => e.position)).toEqual([99, 100, 101]);
	});

	test("When the appender that completes a chunk dies before copying it, then the one half a chunk later copies it", async () => {
		for (let i = 1; i <= 2 * CHUNK; i++) await append(timelines, "dead", [[i, i]]);
		await timelines.chunks.deleteOne({ _id: "dead#1" });

		for (let i = 2 * CHUNK + 1; i <= 2.5 * CHUNK; i++) await append(timelines, "dead", [[i, i]]);
		for (let i = 2.5 * CHUNK + 1; i <= 4 * CHUNK; i++) await append(timelines, "dead", [[i, i]]);

		const { refs } = await refsAbove(timelines, "dead", CHUNK, CHUNK);
		expect(refs.map(e => e.ref[0])).toEqual(Array.from({ length: CHUNK }, (_, i) => CHUNK + i + 1));
	});

	test("When a time is searched, then the last position at or before it is found, in the head or in a chunk", async () => {
		// Arrange: ref i at time 10 * i.
		for (let i = 1; i <= 1000; i += 100) {
			await append(
				timelines,
				"times",
				Array.from({ length: 100 }, (_, j) => [i + j, 10 * (i + j)] as [number, number]),
			);
		}

		// Act / Assert
		expect(await lastAtOrBefore(timelines, "times", 5)).toBe(0);
		expect(await lastAtOrBefore(timelines, "times", 10)).toBe(1);
		expect(await lastAtOrBefore(timelines, "times", 1234)).toBe(123);
		expect(await lastAtOrBefore(timelines, "times", 6999)).toBe(699);
		expect(await lastAtOrBefore(timelines, "times", 9995)).toBe(999);
		expect(await lastAtOrBefore(timelines, "times", 100_000)).toBe(1000);
		expect(await lastAtOrBefore(timelines, "never-written", 100)).toBe(0);
	});

	test("When bags get refs in one bulk write, then each keeps all of its own in order", async () => {
		await addToBags(timelines, [
			{ key: "bag-a", ref: [1, 1] },
			{ key: "bag-b", ref: [2, 2] },
			{ key: "bag-a", ref: [3, 3] },
		]);

		expect(await bag(timelines, "bag-a")).toEqual([
			[1, 1],
			[3, 3],
		]);
		expect(await bag(timelines, "bag-b")).toEqual([[2, 2]]);
		expect(await bag(timelines, "bag-none")).toEqual([]);
	});
});
