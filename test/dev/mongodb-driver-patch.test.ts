// patches/mongodb+6.20.0.patch (applied by `npm install` through patch-package): a command written to a
// socket that Node has already destroyed, because the server closed it, must fail at once. Unpatched, the
// driver waited for a 'drain' that a destroyed socket never emits: the command hung for ever, and when the
// command was a server monitor's check, the service never saw its database again after a restart (issue 21,
// docs/reliability.md). The window is a few event-loop phases wide; this test opens it on purpose by
// destroying a pooled connection's socket and writing before its 'close' event. It reaches the driver's
// internals because no public call can aim at that window.
import { MongoClient, MongoNetworkError } from "mongodb";

interface PooledConnection {
	socket: { destroy(): void; destroyed: boolean };
	command(ns: unknown, cmd: object, options: object): Promise<unknown>;
}
interface Internals {
	topology: {
		s: {
			servers: Map<
				string,
				{
					pool: {
						checkOut(options: object): Promise<PooledConnection>;
						checkIn(connection: PooledConnection): void;
						options: { minPoolSizeCheckFrequencyMS: number };
					};
				}
			>;
		};
	};
}

const { ns } = require("mongodb/lib/utils") as { ns(namespace: string): unknown };
const { TimeoutContext } = require("mongodb/lib/timeout") as { TimeoutContext: { create(options: object): { clear(): void } } };

let client: MongoClient;

beforeAll(async () => {
	client = await MongoClient.connect(process.env.MONGO_URL!, { serverSelectionTimeoutMS: 5000 });
	await client.db("driver_patch").command({ ping: 1 });
});

afterAll(async () => {
	await client.close(true);
});

test("When a command is written to a connection whose socket was just destroyed, then it fails with a network error instead of hanging", async () => {
	// Arrange: a pooled connection, its socket destroyed as Node does when the server closes it ('close' comes later).
	const [server] = (client as unknown as Internals).topology.s.servers.values();
	const timeoutContext = TimeoutContext.create({ serverSelectionTimeoutMS: 5000, waitQueueTimeoutMS: 5000 });
	const connection = await server.pool.checkOut({ timeoutContext });
	timeoutContext.clear();
	connection.socket.destroy();
	expect(connection.socket.destroyed).toBe(true);

	// Act
	let pending: NodeJS.Timeout | undefined;
	const outcome = await Promise.race([
		connection.command(ns("admin.$cmd"), { ping: 1 }, {}).then(
			() => "answered",
			(err: Error) => err,
		),
		new Promise(resolve => {
			pending = setTimeout(() => resolve("still pending after 5 s: the driver waits for a 'drain' that never comes"), 5000);
		}),
	]);

	clearTimeout(pending);
	server.pool.checkIn(connection);

	// Assert
	expect(outcome).toBeInstanceOf(MongoNetworkError);
	expect((outcome as Error).message).toMatch(/closed/);
});

test("When a pool is idle, then it checks its size once a second, not ten times (the patch's idle-CPU part)", () => {
	// Each pool's check is a timer; at ten a second it was most of a process's CPU at rest (bench: the idle scenario).
	const [server] = (client as unknown as Internals).topology.s.servers.values();
	expect(server.pool.options.minPoolSizeCheckFrequencyMS).toBe(1000);
});
