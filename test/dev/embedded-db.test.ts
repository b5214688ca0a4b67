// Checks that the embedded database (real mongod or mongo-java-server) supports the MongoDB features
// the services rely on: unique indexes, atomic compare-and-set, atomic $inc pre-images, aggregation.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import mongoose, { type Connection, Schema } from "mongoose";
import { type EmbeddedDb, startEmbeddedDb } from "../../dev/embedded-db";

jest.setTimeout(60_000);

interface MongoErrorLike {
	code?: number;
	message: string;
}

function rejectionsOf(results: PromiseSettledResult<unknown>[]): MongoErrorLike[] {
	return results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map(r => r.reason as MongoErrorLike);
}

describe("embedded db (memory mode)", () => {
	let db: EmbeddedDb;
	let conn: Connection;

	beforeAll(async () => {
		db = await startEmbeddedDb({ persistent: false, dataDir: path.join(os.tmpdir(), "unused") });
		conn = await mongoose.createConnection(`${db.url}/embedded_db_test`).asPromise();
		await conn.dropDatabase();
	});

	afterAll(async () => {
		await conn?.close();
		await db?.stop();
	});

	it("reports what it started", () => {
		expect(db.url).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+$/);
		expect(["mongod", "mongo-java-server"]).toContain(db.kind);
		expect(db.reason.length).toBeGreaterThan(10);
	});

	it("enforces unique indexes with E11000, also under parallel inserts", async () => {
		const Key = conn.model("UniqueKey", new Schema({ key: { type: String, required: true, unique: true } }));
		await Key.init(); // builds the unique index

		await Key.create({ key: "a" });
		const dup = await Key.create({ key: "a" }).then(
			() => undefined,
			(err: MongoErrorLike) => err,
		);
		expect(dup?.code).toBe(11000);
		expect(dup?.message).toMatch(/E11000 duplicate key/);

		const results = await Promise.allSettled(Array.from({ length: 20 }, () => Key.create({ key: "parallel" })));
		expect(results.filter(r => r.status === "fulfilled")).toHaveLength(1);
		const errors = rejectionsOf(results);
		expect(errors).toHaveLength(19);
		expect(errors.every(e => e.code === 11000)).toBe(true);
		expect(await Key.countDocuments({ key: "parallel" })).toBe(1);
	});

	it("lets exactly one of 3 parallel claimers win a conditional findOneAndUpdate", async () => {
		const jobs = conn.collection<{ _id: string; owner: string | null }>("jobs");
		await jobs.insertOne({ _id: "job-1", owner: null });

		const claims = await Promise.all(
			["w1", "w2", "w3"].map(owner =>
				jobs.findOneAndUpdate({ _id: "job-1", owner: null }, { $set: { owner } }, { returnDocument: "after" }),
			),
		);
		const winners = claims.filter(doc => doc !== null);
		expect(winners).toHaveLength(1);
		expect((await jobs.findOne({ _id: "job-1" }))?.owner).toBe(winners[0]?.owner);
	});

	it("returns 300 distinct post-images for 300 parallel $inc, each a snapshot taken under the lock", async () => {
		const counters = conn.collection<{ _id: string; n: number }>("post_images");

		const after = await Promise.all(
			Array.from({ length: 300 }, () =>
				counters.findOneAndUpdate({ _id: "c" }, { $inc: { n: 1 } }, { upsert: true, returnDocument: "after" }),
			),
		);

		expect(new Set(after.map(doc => doc?.n)).size).toBe(300);
	});

	it("returns 200 distinct pre-images for 200 parallel $inc (id allocator)", async () => {
		const Counter = conn.model("Counter", new Schema({ _id: String, n: Number }));
		await Counter.create({ _id: "c", n: 0 });

		const before = await Promise.all(
			Array.from({ length: 200 }, () => Counter.findOneAndUpdate({ _id: "c" }, { $inc: { n: 1 } }, { returnDocument: "before" }).lean()),
		);
		const values = before.map(doc => doc?.n);
		expect(new Set(values).size).toBe(200);
		expect([...values].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(Array.from({ length: 200 }, (_, i) => i));
		expect((await Counter.findById("c").lean())?.n).toBe(200);
	});

	it("supports countDocuments, aggregate $group and bulkWrite", async () => {
		const Payment = conn.model("Payment", new Schema({ customer: String, amount: Number, status: String }));
		const bulk = await Payment.bulkWrite([
			{ insertOne: { document: { customer: "alice", amount: 100, status: "paid" } } },
			{ insertOne: { document: { customer: "alice", amount: 250, status: "paid" } } },
			{ insertOne: { document: { customer: "bob", amount: 70, status: "pending" } } },
			{ insertOne: { document: { customer: "carol", amount: 5, status: "paid" } } },
			{ updateOne: { filter: { customer: "bob" }, update: { $set: { status: "paid" } } } },
			{ deleteOne: { filter: { customer: "carol" } } },
			{ updateOne: { filter: { customer: "dave" }, update: { $set: { amount: 30, status: "paid" } }, upsert: true } },
		]);
		expect(bulk.insertedCount).toBe(4);
		expect(bulk.modifiedCount).toBe(1);
		expect(bulk.deletedCount).toBe(1);
		expect(bulk.upsertedCount).toBe(1);

		expect(await Payment.countDocuments({ status: "paid" })).toBe(4);
		expect(await Payment.countDocuments({ amount: { $gte: 70 } })).toBe(3);

		const totals = await Payment.aggregate<{ _id: string; total: number; count: number }>([
			{ $match: { status: "paid" } },
			{ $group: { _id: "$customer", total: { $sum: "$amount" }, count: { $sum: 1 } } },
			{ $sort: { _id: 1 } },
		]);
		expect(totals).toEqual([
			{ _id: "alice", total: 350, count: 2 },
			{ _id: "bob", total: 70, count: 1 },
			{ _id: "dave", total: 30, count: 1 },
		]);
	});
});

describe("embedded db (persistent mode)", () => {
	let dataDir: string;

	beforeAll(() => {
		dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "embedded-db-test-"));
	});

	afterAll(() => {
		fs.rmSync(dataDir, { recursive: true, force: true });
	});

	it("keeps data and unique indexes across stop/start", async () => {
		const Item = new Schema({ sku: { type: String, unique: true }, qty: Number });

		const first = await startEmbeddedDb({ persistent: true, dataDir });
		try {
			const conn = await mongoose.createConnection(`${first.url}/embedded_db_test`).asPromise();
			try {
				const Model = conn.model("Item", Item);
				await Model.init();
				await Model.create({ sku: "sku-1", qty: 3 });
			} finally {
				await conn.close();
			}
		} finally {
			await first.stop();
		}

		const second = await startEmbeddedDb({ persistent: true, dataDir });
		try {
			const conn = await mongoose.createConnection(`${second.url}/embedded_db_test`).asPromise();
			try {
				// Raw collection access so mongoose does not rebuild the index itself.
				const items = conn.collection("items");
				expect(await items.findOne({ sku: "sku-1" }, { projection: { _id: 0, __v: 0 } })).toEqual({ sku: "sku-1", qty: 3 });
				await expect(items.insertOne({ sku: "sku-1", qty: 1 })).rejects.toMatchObject({ code: 11000 });
			} finally {
				await conn.close();
			}
		} finally {
			await second.stop();
		}
	});
});
