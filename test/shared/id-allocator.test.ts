import mongoose from "mongoose";
import { createIdAllocator } from "../../shared/id-allocator";
import { uniqueDatabaseName } from "../setup/app";

let connection: mongoose.Connection;

beforeAll(async () => {
	connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false }).asPromise();
});
afterAll(() => connection.close());

describe("createIdAllocator", () => {
	test("When 3 nodes take 600 ids at once, then all are distinct and positive", async () => {
		// Arrange: three allocators stand for three nodes sharing one sequence.
		const nodes = [1, 2, 3].map(() => createIdAllocator(connection, "customers", 7));

		// Act
		const ids = await Promise.all(Array.from({ length: 600 }, (_, i) => nodes[i % 3].next()));

		// Assert
		expect(new Set(ids).size).toBe(600);
		expect(Math.min(...ids)).toBeGreaterThanOrEqual(1);
	});

	test("When 200 blocks are reserved in parallel, then the database hands out 200 different blocks", async () => {
		const nodes = Array.from({ length: 200 }, () => createIdAllocator(connection, "transactions", 1));

		const ids = await Promise.all(nodes.map(node => node.next()));

		expect(new Set(ids).size).toBe(200);
	});

	test("When one node takes ids one after another, then they increase without a database trip per id", async () => {
		const node = createIdAllocator(connection, "refunds", 100);

		const ids: number[] = [];
		for (let i = 0; i < 5; i++) ids.push(await node.next());

		expect(ids).toEqual([1, 2, 3, 4, 5]);
	});
});
