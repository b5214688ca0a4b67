// The database server is stopped and started again under checkout and refund
// traffic: health turns DOWN then UP, requests in the gap answer 503, and
// nothing is half-written (no transaction without its customer, no refund
// without its REFUNDED transaction, no acknowledged checkout missing). A refund
// the outage cut off halfway stays RESERVED until the recovery sweep settles
// it (a grace period of 4 s here instead of 2 minutes); the amounts are
// checked once none is left.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Db, MongoClient } from "mongodb";
import type { Connection } from "mongoose";
import { type EmbeddedDb, startEmbeddedDb } from "../../dev/embedded-db";
import { freePort } from "../../dev/net";
import { databaseNameFor } from "../../shared/db.mixin";
import { CARDS, checkoutBody, createShop, type Shop } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startApp, type TestApp, uniqueDatabaseName } from "../setup/app";

const REQUEST_TIMEOUT_MS = 3000;
/** Above the request timeout, as the service requires. */
const REFUND_RECOVERY_GRACE_MS = 4000;

let dataDir: string;
let port: number;
let db: EmbeddedDb;
let app: TestApp;
let shop: Shop;
let url: string;
/** The app's latest log lines about billing or the database connection, for a failure's message. */
const billingLog: string[] = [];
/** What each service's MongoDB driver saw of the server, for the same message. */
const drivers = new Map<string, string[]>();
const DB_SERVICES = ["accounts", "sessions", "billing", "refunds", "notifications", "dashboard"];

function keep(lines: string[], line: string): void {
	lines.push(`${new Date().toISOString()} ${line}`.slice(0, 300));
	if (lines.length > 60) lines.shift();
}

// A database server of its own that persists to disk (H2), so it can be stopped and started on the same port and data.
// Its errors go to the test's output: a connection the server closes is otherwise a silent "connection N closed".
const startDatabase = () => {
	process.env.EMBEDDED_DB_JAVA_OPTS ??= [
		"-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoExceptionHandler=error",
		"-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoDatabaseHandler=error",
	].join(" ");
	return startEmbeddedDb({ persistent: true, dataDir, port });
};

beforeAll(async () => {
	dataDir = mkdtempSync(path.join(os.tmpdir(), "db-restart-"));
	port = await freePort();
	db = await startDatabase();
	url = `mongodb://127.0.0.1:${port}/${uniqueDatabaseName()}`;
	app = await startApp({
		onLog: line => {
			if (/BILLING|MongoNetwork|closed/.test(line)) keep(billingLog, line);
		},
		env: {
			MONGO_URL: url,
			REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
			REFUND_RECOVERY_GRACE_MS: String(REFUND_RECOVERY_GRACE_MS),
			REFUND_RECOVERY_INTERVAL_MS: "500",
		},
	});
	// Each service's driver: what it saw of the server, for a failure's message.
	for (const name of DB_SERVICES) {
		const lines: string[] = [];
		drivers.set(name, lines);
		const client = (app.broker.getLocalService(name) as unknown as { connection: Connection }).connection.getClient();
		client.on("serverDescriptionChanged", e =>
			keep(lines, `server ${e.previousDescription.type} -> ${e.newDescription.type} ${e.newDescription.error?.message ?? ""}`),
		);
		client.on("serverHeartbeatFailed", e => keep(lines, `heartbeat failed: ${e.failure?.message}`));
		client.on("connectionPoolCleared", () => keep(lines, "pool cleared"));
		client.on("connectionPoolReady", () => keep(lines, "pool ready"));
		client.on("connectionClosed", e => keep(lines, `connection ${e.connectionId} closed: ${e.reason}`));
		client.on("connectionCheckOutFailed", e => keep(lines, `check-out failed: ${e.reason}`));
	}
	shop = await createShop(app);
}, 90_000);

afterAll(async () => {
	await app?.stop();
	await db?.stop();
	rmSync(dataDir, { recursive: true, force: true });
});

async function healthStatus(): Promise<{ status: number; database?: string; body: unknown }> {
	const res = await app
		.http()
		.get("/actuator/health")
		.timeout(REQUEST_TIMEOUT_MS * 4);
	return { status: res.status, database: res.body.components?.database?.status, body: res.body };
}

async function waitForHealth(database: "UP" | "DOWN"): Promise<{ status: number; database?: string; body: unknown }> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		const health = await healthStatus();
		if (health.database === database) return health;
		if (Date.now() > deadline) {
			// What the database server's threads are doing: a worker stuck would hang every connection it serves.
			const dump = (await db.threadDump?.()) ?? "";
			const threads = dump.split("\n\n").filter(thread => /mongo-server-worker|MVStore/.test(thread));
			// An idle worker waits in EPoll.wait; the others are the ones to read.
			const busy = threads.filter(thread => !/EPoll\.wait/.test(thread));
			const workers = `${threads.length} worker threads, ${busy.length} not idle:\n${busy.join("\n\n").slice(0, 8000)}`;
			throw new Error(
				`health did not report the database ${database} within 60 s; it answered ${JSON.stringify(health.body)}\n` +
					`the app's last billing and network lines:\n${billingLog.join("\n")}\n` +
					DB_SERVICES.filter(
						name =>
							(health.body as { components?: { database?: { details?: Record<string, string> } } }).components?.database?.details?.[
								name
							] === "DOWN",
					)
						.map(name => {
							const service = app.broker.getLocalService(name) as unknown as { lastPingError?: string | null };
							return `${name}'s last ping: ${service.lastPingError}\n${name}'s driver:\n${(drivers.get(name) ?? []).join("\n")}`;
						})
						.join("\n") +
					`\nthe database server's worker threads:\n${workers}`,
			);
		}
		await new Promise(r => setTimeout(r, 200));
	}
}

test("When the database server stops and starts again, then health goes DOWN (503) and UP, gap requests answer 503, and nothing is half-written", async () => {
	// Arrange
	let gap = false;
	const answers: { gap: boolean; status: number; body: Record<string, unknown> }[] = [];
	const acknowledged: number[] = [];
	const refunded: number[] = [];
	let running = true;
	const send = async (request: ReturnType<ReturnType<TestApp["http"]>["get"]>) => {
		const during = gap;
		const res = await request
			.timeout(REQUEST_TIMEOUT_MS * 4)
			.catch(
				(err: { response?: { status: number; body: Record<string, unknown> } }) =>
					err.response ?? { status: 0, body: { hang: String(err) } },
			);
		answers.push({ gap: during || gap, status: res.status, body: res.body });
		return res;
	};
	const buyer = async (n: number) => {
		for (let i = 0; running; i++) {
			const session = await send(app.http().post("/api/session?domain=shop.example.com").set(bearer(shop)));
			if (session.status !== 200) {
				await new Promise(r => setTimeout(r, 50));
				continue;
			}
			const body = await checkoutBody(app, shop, {
				productId: shop.products.charge,
				card: CARDS.visa,
				sessionId: (session as { text?: string }).text,
			});
			const res = await send(app.http().post("/api/checkout").send(body));
			if (res.status !== 200 || res.body.code !== "OK") continue;
			acknowledged.push(res.body.customerId as number);
			if ((n + i) % 2 === 0) continue;
			const list = await send(admin(app).get(`/accounts/${shop.accountId}/customers/${res.body.customerId}/transactions`));
			const charge = list.status === 200 ? (list.body as unknown as { id: number }[])[0] : undefined;
			if (!charge) continue;
			const refund = await send(app.http().get(`/api/refund/${charge.id}?amountToRefund=1`).set(bearer(shop)));
			if (refund.status === 200 && refund.body.success) refunded.push(charge.id);
		}
	};
	const buyers = [0, 1, 2].map(buyer);

	// Act: traffic, the database down for a while, the database back, traffic.
	await new Promise(r => setTimeout(r, 2000));
	gap = true;
	await db.stop();
	const down = await waitForHealth("DOWN");
	await new Promise(r => setTimeout(r, REQUEST_TIMEOUT_MS + 1000));
	db = await startDatabase();
	const up = await waitForHealth("UP");
	gap = false;
	await new Promise(r => setTimeout(r, 2000));
	running = false;
	await Promise.all(buyers);

	// Assert: health, and only documented answers (no hang, no 500).
	expect(down.status).toBe(503);
	expect(up.status).toBe(200);
	expect(answers.filter(a => a.status === 0)).toEqual([]);
	expect(answers.filter(a => ![200, 503].includes(a.status))).toEqual([]);
	expect(answers.filter(a => a.status === 503 && a.body.error !== "SERVICE_UNAVAILABLE")).toEqual([]);
	expect(answers.some(a => a.gap && a.status === 503)).toBe(true);
	expect(answers.some(a => !a.gap && a.status === 200 && acknowledged.length > 0)).toBe(true);

	// Nothing half-written, read straight from the database.
	const client = await MongoClient.connect(url);
	try {
		const billing: Db = client.db(databaseNameFor("billing", url));
		// Refunds the outage interrupted are settled by the recovery sweep once their grace period is over.
		const deadline = Date.now() + 60_000;
		while ((await billing.collection("refunds").countDocuments({ status: "RESERVED" })) > 0) {
			if (Date.now() > deadline) throw new Error("refunds still RESERVED 60 s after the outage");
			await new Promise(r => setTimeout(r, 250));
		}
		const customers = new Map((await billing.collection("customers").find({}).toArray()).map(c => [c._id as unknown as number, c]));
		const transactions = await billing.collection("transactions").find({}).toArray();
		expect(transactions.filter(t => !customers.has(t.customerId))).toEqual([]);
		const byId = new Map(transactions.map(t => [t._id as unknown as number, t]));
		const refunds = transactions.filter(t => t.type === "REFUNDED");
		expect(refunds.filter(r => !byId.has(r.originalTransactionId))).toEqual([]);
		for (const id of refunded) expect(refunds.some(r => r.originalTransactionId === id)).toBe(true);
		// Each charge's refundable remainder matches the refunds recorded against it.
		for (const charge of transactions.filter(t => t.type === "SUBSCRIPTION_START" && t.status === "APPROVED")) {
			const refundedMinor = refunds.filter(r => r.originalTransactionId === charge._id).reduce((sum, r) => sum - r.amount, 0);
			expect({ id: charge._id, remaining: charge.refundableRemaining, pending: charge.pendingRefunds }).toEqual({
				id: charge._id,
				remaining: charge.amount - refundedMinor,
				pending: [],
			});
		}
		for (const id of acknowledged) {
			expect(customers.get(id)?.status).toBe("ACTIVE");
			expect(transactions.some(t => t.customerId === id && t.type === "SUBSCRIPTION_START" && t.status === "APPROVED")).toBe(true);
		}
		if (process.env.DEBUG_FAULTS) {
			console.log({
				acknowledged: acknowledged.length,
				refunded: refunded.length,
				gap503: answers.filter(a => a.gap && a.status === 503).length,
			});
		}
	} finally {
		await client.close();
	}
}, 150_000);
