// The schedule (shared/schedule.ts) against a simple model, on the real database server: two nodes, each with a
// schedule of its own over the same collection (so each keeps its own idea of where the cursor is), list ids at
// times from now on and poll for what is due while the clock moves on. Whatever the interleaving, every id listed
// is answered as due by the first poll of either node once its slot has completed, and never before. A node that skips
// reading because the cursor it last saw is past what it asks for must lose nothing the other node listed. A listing
// may land late (its time taken up to three slots before its command reached the database, after polls moved the
// cursor past its slot): it is found by the first poll of either node a slot after it landed.
import fc from "fast-check";
import mongoose, { type Connection } from "mongoose";
import { createSchedule, type ScheduleSlotDoc, scheduleSchema } from "../../shared/schedule";

const SLOT_MS = 1000;

let connection: Connection;

beforeAll(async () => {
	// As the services connect (shared/db.mixin.ts): a collection mongoose created in the background could race the first writes.
	connection = await mongoose
		.createConnection(process.env.MONGO_URL!, { dbName: "schedule_property", autoCreate: false, autoIndex: false })
		.asPromise();
});

afterAll(async () => {
	await connection.dropDatabase();
	await connection.close();
});

type Step =
	| { kind: "add"; node: 0 | 1; id: number; aheadMs: number }
	| { kind: "late"; node: 0 | 1; id: number; lateMs: number }
	| { kind: "poll"; node: 0 | 1 }
	| { kind: "tick"; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
	fc.record({ kind: fc.constant("add" as const), node: fc.constantFrom(0 as const, 1 as const), id: fc.nat(50), aheadMs: fc.nat(3500) }),
	fc.record({
		kind: fc.constant("late" as const),
		node: fc.constantFrom(0 as const, 1 as const),
		id: fc.nat(50),
		lateMs: fc.integer({ min: 1, max: 3 * SLOT_MS }),
	}),
	fc.record({ kind: fc.constant("poll" as const), node: fc.constantFrom(0 as const, 1 as const) }),
	fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 1, max: 1700 }) }),
);

let run = 0;

test("When two nodes list and poll in any order while the clock moves on, then every id listed is found due once its slot completes, by one node or the other", async () => {
	await fc.assert(
		fc.asyncProperty(fc.nat(SLOT_MS - 1), fc.array(step, { maxLength: 40 }), async (offset, steps) => {
			const model = connection.model<ScheduleSlotDoc>(`schedule_${run++}`, scheduleSchema());
			const nodes = [0, 1].map(() => createSchedule<number>(model, { slotMs: SLOT_MS, shards: 2 }));
			let now = 1_800_000_000_000 + offset;
			await nodes[0].initialize(new Date(now));
			/** Listed and not yet found due: id -> the time it is due, and the time by which a poll must have found it. */
			const waiting = new Map<number, { dueAt: number; by: number }>();
			const slotOf = (ms: number) => Math.floor(ms / SLOT_MS) * SLOT_MS;
			const poll = async (node: 0 | 1) => {
				// As the workers ask: complete slots only.
				const due = await nodes[node].due(new Date(now - SLOT_MS), new Date(now));
				for (const { id, at } of due) {
					const listed = waiting.get(id);
					// Never answered before its slot is complete.
					if (listed !== undefined) expect(slotOf(listed.dueAt)).toBe(at.getTime());
					expect(at.getTime() + SLOT_MS).toBeLessThanOrEqual(now);
					waiting.delete(id);
					await nodes[node].remove(id, at);
				}
				// Nor later: whatever is listed in a slot that has completed is answered by the first poll after it (a late
				// listing, by the first a slot after it landed).
				expect([...waiting].filter(([, { by }]) => by <= now)).toEqual([]);
			};
			for (const s of steps) {
				if (s.kind === "tick") now += s.ms;
				else if (s.kind === "poll") await poll(s.node);
				else if (waiting.has(s.id)) continue;
				else if (s.kind === "add") {
					waiting.set(s.id, { dueAt: now + s.aheadMs, by: slotOf(now + s.aheadMs) + SLOT_MS });
					await nodes[s.node].add(s.id, new Date(now + s.aheadMs));
				} else {
					const dueAt = now - s.lateMs;
					waiting.set(s.id, { dueAt, by: Math.max(slotOf(dueAt) + SLOT_MS, slotOf(now) + 2 * SLOT_MS) });
					await nodes[s.node].add(s.id, new Date(dueAt));
				}
			}
			// Every slot with work completes, and each node polls after it: nothing is left.
			now += 4 * SLOT_MS + 3500;
			await poll(0);
			await poll(1);
			expect([...waiting.keys()]).toEqual([]);
		}),
		{ numRuns: 300 },
	);
});

test("When a listing lands between a poll's reading of its slot and the poll's moving of the cursor past it, then the poll a slot later finds it", async () => {
	// Arrange: a node whose next cursor move is preceded by another node's late listing in the slot it read as empty.
	const model = connection.model<ScheduleSlotDoc>(`schedule_${run++}`, scheduleSchema());
	const late = createSchedule<number>(model, { slotMs: SLOT_MS, shards: 2 });
	let landLate: (() => Promise<void>) | null = null;
	const racing = new Proxy(model, {
		get(target, property, receiver) {
			const value = Reflect.get(target, property, receiver);
			if (property !== "updateOne") return value;
			return async (filter: { _id?: string }, ...rest: unknown[]) => {
				// The cursor's compare-and-set: the listing lands just before it.
				if (filter._id === "cursor" && landLate) {
					const land = landLate;
					landLate = null;
					await land();
				}
				return (value as (...args: unknown[]) => unknown).call(target, filter, ...rest);
			};
		},
	});
	const poller = createSchedule<number>(racing, { slotMs: SLOT_MS, shards: 2 });
	let now = 1_800_000_000_000;
	await poller.initialize(new Date(now));
	const slot = now;
	now += 1500;
	landLate = () => late.add(7, new Date(slot));

	// Act: the first poll reads the slot empty and moves past it; the listing lands in between.
	const first = await poller.due(new Date(now - SLOT_MS), new Date(now));
	now += SLOT_MS;
	const second = await poller.due(new Date(now - SLOT_MS), new Date(now));

	// Assert
	expect(first).toEqual([]);
	expect(landLate).toBeNull();
	expect(second).toEqual([{ id: 7, at: new Date(slot) }]);
});
