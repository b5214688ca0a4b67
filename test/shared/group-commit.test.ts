// Group commit (shared/group-commit.ts), and the writes built on it
// (shared/persistence.ts) on the real database server: what arrives while a
// command is in flight leaves in the next one, each caller gets its own
// answer, and one document's refusal is that caller's alone.
import os from "node:os";
import mongoose from "mongoose";
import { startEmbeddedDb } from "../../dev/embedded-db";
import { groupCommit, keyedGroupCommit } from "../../shared/group-commit";
import { insertAllOnce, insertDoc, isDuplicateKey, storedIds } from "../../shared/persistence";
import { uniqueDatabaseName } from "../setup/app";

/** A send that records its groups and answers when released. */
function recordingSend() {
	const sent: number[][] = [];
	const releases: (() => void)[] = [];
	const send = (items: number[]) => {
		sent.push(items);
		return new Promise<number[]>(resolve => releases.push(() => resolve(items.map(i => i * 10))));
	};
	return { sent, releases, send };
}

describe("Group commit", () => {
	test("When callers arrive while a command is in flight, then they leave together in the next, and each gets its own answer", async () => {
		// Arrange
		const { sent, releases, send } = recordingSend();
		const write = groupCommit(send);

		// Act
		const first = write(1);
		const waiting = [write(2), write(3), write(4)];
		await Promise.resolve();
		releases[0]();
		await first;
		await new Promise(resolve => setImmediate(resolve));
		releases[1]();

		// Assert
		expect(await first).toBe(10);
		expect(await Promise.all(waiting)).toEqual([20, 30, 40]);
		expect(sent).toEqual([[1], [2, 3, 4]]);
	});

	test("When a lingering writer's callers arrive within its linger, then the first waits for them and they leave in one command", async () => {
		// Arrange: fake timers only for the linger's timeout.
		jest.useFakeTimers({ doNotFake: ["nextTick", "setImmediate", "queueMicrotask", "Date"] });
		try {
			const sent: number[][] = [];
			const write = groupCommit<number, number>(
				async items => {
					sent.push(items);
					return items;
				},
				{ lingerMs: 250 },
			);

			// Act
			const first = write(1);
			await jest.advanceTimersByTimeAsync(100);
			const second = write(2);
			await jest.advanceTimersByTimeAsync(100);
			const beforeLinger = sent.length;
			await jest.advanceTimersByTimeAsync(50);

			// Assert
			expect(beforeLinger).toBe(0);
			expect(await Promise.all([first, second])).toEqual([1, 2]);
			expect(sent).toEqual([[1, 2]]);
		} finally {
			jest.useRealTimers();
		}
	});

	test("When a command fails, then every caller it carried fails, and the next command is sent", async () => {
		// Arrange
		let calls = 0;
		const write = groupCommit<number, number>(async items => {
			calls++;
			if (calls === 2) throw new Error("refused");
			return items;
		});

		// Act
		const first = write(1);
		const carried = [write(2), write(3)].map(p => p.catch((err: Error) => err.message));
		await first;
		const later = await write(4);

		// Assert
		expect(await Promise.all(carried)).toEqual(["refused", "refused"]);
		expect(later).toBe(4);
	});

	test("When more callers wait than a command takes, then they leave in commands of at most that many", async () => {
		// Arrange
		const { sent, releases, send } = recordingSend();
		const write = groupCommit(send, { maxItems: 2 });

		// Act
		const all = [1, 2, 3, 4, 5].map(write);
		for (let i = 0; i < 3; i++) {
			await new Promise(resolve => setImmediate(resolve));
			releases[i]();
		}
		await Promise.all(all);

		// Assert
		expect(sent).toEqual([[1], [2, 3], [4, 5]]);
	});

	test("When two keys are written at once, then neither waits for the other and groups never mix them", async () => {
		// Arrange
		const sent: [string, number[]][] = [];
		const write = keyedGroupCommit<number, number>(async (key, items) => {
			sent.push([key, items]);
			await new Promise(resolve => setImmediate(resolve));
			return items;
		});

		// Act
		await Promise.all([write("a", 1), write("b", 2), write("a", 3), write("b", 4), write("a", 5)]);

		// Assert
		expect(sent).toEqual([
			["a", [1]],
			["b", [2]],
			["a", [3, 5]],
			["b", [4]],
		]);
	});
});

describe("Inserts and key reads made at once", () => {
	let connection: mongoose.Connection;
	let model: mongoose.Model<{ _id: string; n: number }>;
	let commands: string[];

	beforeAll(async () => {
		connection = await mongoose
			.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false, monitorCommands: true })
			.asPromise();
		model = connection.model(
			"Thing",
			new mongoose.Schema<{ _id: string; n: number }>({ _id: String, n: Number }, { versionKey: false }),
			"things",
		);
		commands = [];
		connection.getClient().on("commandStarted", event => {
			if (event.commandName === "insert" || event.commandName === "find") commands.push(event.commandName);
		});
	});
	afterAll(() => connection.close());

	test("When 20 documents are inserted at once and one key is taken, then only that caller is refused, in fewer than 20 commands", async () => {
		// Arrange
		await insertDoc(model, { _id: "taken", n: 0 });
		commands.length = 0;

		// Act
		const answers = await Promise.all(
			Array.from({ length: 20 }, (_, i) =>
				insertDoc(model, { _id: i === 7 ? "taken" : `t${i}`, n: i }).then(
					() => "inserted",
					(err: unknown) => (isDuplicateKey(err) ? "duplicate" : String(err)),
				),
			),
		);

		// Assert
		expect(answers.filter(a => a === "duplicate")).toHaveLength(1);
		expect(answers[7]).toBe("duplicate");
		expect(answers.filter(a => a === "inserted")).toHaveLength(19);
		expect(await model.countDocuments()).toBe(20);
		expect(commands.length).toBeLessThan(20);
	});

	test("When batches are inserted at once, then each says whether all of its own were new", async () => {
		// Act
		const [fresh, repeated] = await Promise.all([
			insertAllOnce(model, [
				{ _id: "b1", n: 1 },
				{ _id: "b2", n: 2 },
			]),
			insertAllOnce(model, [
				{ _id: "b3", n: 3 },
				{ _id: "t1", n: 1 },
			]),
		]);

		// Assert
		expect([fresh, repeated]).toEqual([true, false]);
		expect(await model.findById("b3").lean()).toEqual({ _id: "b3", n: 3 });
	});

	test("When keys are read at once, then each caller hears of its own keys only, in fewer commands than callers", async () => {
		// Arrange
		commands.length = 0;

		// Act
		const found = await Promise.all([["t1", "nope"], ["t2"], ["t1", "t3"], ["missing"]].map(ids => storedIds(model, ids)));

		// Assert
		expect(found.map(set => [...set].sort())).toEqual([["t1"], ["t2"], ["t1", "t3"], []]);
		expect(commands.length).toBeLessThan(4);
	});
});

describe("Inserts the database never answered", () => {
	test("When the database goes away before an insert of several documents, then every caller is refused, none told its document is stored", async () => {
		// Arrange: a database server of its own, connected to, then stopped. The driver reports a lost connection in
		// insertMany as a bulk write error without any write error, which once read as "every document inserted".
		const db = await startEmbeddedDb({ persistent: false, dataDir: os.tmpdir() });
		const connection = await mongoose.createConnection(`${db.url}/gone`, { serverSelectionTimeoutMS: 300, autoCreate: false }).asPromise();
		const things = connection.model("Thing", new mongoose.Schema({ _id: String, n: Number }, { versionKey: false }), "things");
		try {
			await insertDoc(things, { _id: "before", n: 0 });
			await db.stop();

			// Act
			const answers = await Promise.all([
				insertAllOnce(things, [
					{ _id: "a", n: 1 },
					{ _id: "b", n: 2 },
				]).then(String, (err: Error) => err.name),
				insertDoc(things, { _id: "c", n: 3 }).then(
					() => "inserted",
					(err: Error) => err.name,
				),
			]);

			// Assert
			expect(answers.filter(a => a === "true" || a === "false" || a === "inserted")).toEqual([]);
		} finally {
			await connection.close();
			await db.stop();
		}
	}, 60_000);
});
