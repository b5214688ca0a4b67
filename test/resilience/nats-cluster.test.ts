// Three NATS servers in one cluster, as `npm run cluster -- --nats 3` runs
// them, on a machine kept busy by a process that burns a core. Each server in
// turn is killed (SIGKILL) during checkouts, refunds and renewals, then
// started again. The nodes meet only over NATS, each with the full server
// list: the gateway and the money side first try server 1, the checkout side
// server 2, a second billing node server 3, so that every kill cuts some of
// them off. Just before each kill the server is frozen (SIGSTOP) until a
// checkout is waiting on it, so the kill always takes requests with it.
// With the broker's own request timeout (10 s), every checkout answers
// within CHECKOUT_ANSWER_MS: a request lost with a server fails as soon as
// both ends are connected again (shared/lost-requests.ts), not at its
// timeout. Afterwards every acknowledged request is in the database, every
// customer was charged once per period billed in the processor's own ledger,
// every event's webhook arrived under one id, and every node is connected
// again and sees all the others. The longest gap in answers and the slowest
// checkout are printed (docs/operations.md quotes them).

import { type ChildProcess, spawn } from "node:child_process";
import type { BrokerOptions, ServiceBroker } from "moleculer";
import { type Db, MongoClient } from "mongodb";
import { type NatsCluster, startNatsCluster } from "../../dev/processes";
import { NATS_CONNECTION } from "../../moleculer.config";
import { createBroker } from "../../runtime/broker";
import { databaseNameFor } from "../../shared/db.mixin";
import { CARDS, checkoutBody, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer, DAY_MS } from "../factories/merchant";
import { type Envelope, startWebhookReceiver, type WebhookReceiver } from "../factories/webhook-receiver";
import { startApp, type TestApp, testEnvironment, uniqueDatabaseName } from "../setup/app";
import { answerWithin, buyer, expectOnlyDocumentedAnswers, nothingAcknowledged, type Request } from "./support/buyers";

const SERVERS = 3;
/** The broker's default: what a request lost with a server would wait without shared/lost-requests.ts. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The longest answer docs/operations.md promises (an admin read: account check, three tries, their delays), plus 2 s for a busy machine. */
const HANG_AFTER_MS = 4 * REQUEST_TIMEOUT_MS + 300 + 2000;
/** What every checkout answers within, lost requests included (docs/operations.md#a-nats-cluster): well under the request timeout. */
const CHECKOUT_ANSWER_MS = 5000;
/** How long a server stays down after its kill. */
const DOWN_MS = 4000;
/** Customers of a shop of their own whom the test clock renews month after month during the kills. */
const RENEWING = 5;
const NODE_IDS = ["gateway", "checkout-side", "money-side", "billing-2"];

let cluster: NatsCluster;
let app: TestApp;
let others: ServiceBroker[];
let receiver: WebhookReceiver;
let shop: Shop;
let mongoUrl: string;
let burner: ChildProcess;

/** The full server list, server `first` first; without randomizing, so the test knows whom a kill cuts off. */
function transporterFrom(first: number): BrokerOptions["transporter"] {
	const urls = [...cluster.urls.slice(first), ...cluster.urls.slice(0, first)];
	return { type: "NATS", options: { url: urls.join(","), noRandomize: true, ...NATS_CONNECTION } };
}

const pause = (ms: number) => new Promise(r => setTimeout(r, ms));

beforeAll(async () => {
	// A busy machine: one core burnt for the whole test.
	burner = spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
	cluster = await startNatsCluster(SERVERS);
	const database = uniqueDatabaseName();
	const env = {
		TRANSPORTER: cluster.url,
		REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
		WEBHOOK_RETRY_BASE_MS: "200",
		REFUND_RECOVERY_GRACE_MS: String(REQUEST_TIMEOUT_MS + 1000),
		REFUND_RECOVERY_INTERVAL_MS: "500",
		RENEWAL_LEASE_MS: "5000",
	};
	testEnvironment({ database, env });
	mongoUrl = process.env.MONGO_URL!;
	others = [
		createBroker(["accounts", "sessions", "checkout"], { nodeID: "checkout-side", transporter: transporterFrom(1) }),
		createBroker(["payments", "billing", "refunds", "notifications"], { nodeID: "money-side", transporter: transporterFrom(0) }),
		createBroker(["billing"], { nodeID: "billing-2", transporter: transporterFrom(2) }),
	];
	await Promise.all(others.map(b => b.start()));
	app = await startApp({ database, env, services: ["gateway"], broker: { nodeID: "gateway", transporter: transporterFrom(0) } });
	// Every node knows every service before the traffic starts (the checkout side calls payments directly).
	const services = ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds", "notifications"];
	await Promise.all([app.broker, ...others].map(b => b.waitForServices(services, 30_000)));
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
}, 90_000);

afterAll(async () => {
	await app?.stop();
	await Promise.all((others ?? []).map(b => b.stop()));
	await receiver?.stop();
	await cluster?.stop();
	burner?.kill("SIGKILL");
});

/** The NATS server a node is connected to now. */
function serverOf(broker: ServiceBroker): string {
	return (broker as unknown as { transit: { tx: { client: { getServer(): string } } } }).transit.tx.client.getServer();
}

/** A node is back when every other node answers its ping over NATS. */
async function reachesAll(broker: ServiceBroker): Promise<boolean> {
	const pongs = (await broker.ping(undefined, 1000).catch(() => ({}))) as Record<string, unknown>;
	return NODE_IDS.filter(id => id !== broker.nodeID).every(id => pongs[id]);
}

/** The gateway's checkouts waiting for their answer. */
function checkoutsWaiting(): number {
	const pending = (app.broker as unknown as { transit: { pendingRequests: Map<string, { action: { name: string } }> } }).transit
		.pendingRequests;
	return [...pending.values()].filter(r => r.action.name === "checkout.submit").length;
}

/** A checkout's body on a new session, made while every server runs. */
async function readyCheckout(): Promise<object> {
	for (;;) {
		const session = await app.http().post("/api/session?domain=shop.example.com").set(bearer(shop));
		if (session.status === 200)
			return checkoutBody(app, shop, { productId: shop.products.charge, card: CARDS.visa, sessionId: session.text });
		await pause(200);
	}
}

test(`When each of ${SERVERS} clustered NATS servers is killed in turn during checkouts, refunds and renewals on a busy machine and started again, then every checkout answers within ${CHECKOUT_ANSWER_MS} ms, every node reconnects, every acknowledged request is stored, no one is charged twice and every webhook arrives under one id`, async () => {
	// Arrange
	const answers: { at: number; status: number; body: Record<string, unknown>; ms: number; checkout: boolean }[] = [];
	const acknowledged = nothingAcknowledged();
	let renewalRuns = 0;
	let running = true;
	const send = async (request: Request) => {
		const sent = Date.now();
		const checkout = (request as unknown as { url: string }).url.endsWith("/api/checkout");
		const res = await answerWithin(request, HANG_AFTER_MS);
		answers.push({ at: Date.now(), status: res.status, body: res.body, ms: Date.now() - sent, checkout });
		return res;
	};
	const renewing = await createShop(app);
	await admin(app).patch(`/accounts/${renewing.accountId}`, { webhookUrl: receiver.url }).expect(200);
	for (let i = 0; i < RENEWING; i++) {
		const res = await submitCheckout(app, renewing, { productId: renewing.products.charge, card: CARDS.visa });
		expect(res.body.code).toBe("OK");
	}
	let month = 0;
	const renewer = async () => {
		while (running) {
			month++;
			const advanceTo = new Date(Date.now() + month * 31 * DAY_MS).toISOString();
			const res = await send(admin(app).post(`/accounts/${renewing.accountId}/clock`, { advanceTo }));
			if (res.status === 200) renewalRuns++;
			await pause(1000);
		}
	};
	const started = Date.now();
	const traffic = [...[0, 1, 2].map(n => buyer(app, shop, n, { send, running: () => running, acknowledged })), renewer()];

	// Act: each server killed in turn under traffic with a checkout waiting on it, down a while, then started again.
	const reconnectMs: number[] = [];
	const nodes = [app.broker, ...others];
	const moved: string[] = [];
	const trapped: number[] = [];
	const trappedAnswers: Promise<unknown>[] = [];
	const allReachable = async (what: string) => {
		const since = Date.now();
		for (;;) {
			const reached = await Promise.all(nodes.map(reachesAll));
			if (reached.every(Boolean)) return Date.now() - since;
			if (Date.now() - since > 30_000) throw new Error(`nodes not all reachable 30 s after ${what}: ${reached}`);
			await pause(100);
		}
	};
	for (let server = 0; server < SERVERS; server++) {
		await pause(2000);
		const body = await readyCheckout();
		const cutOff = nodes.filter(b => cluster.urls[server].endsWith(serverOf(b)));
		// The gateway's checkout goes to the checkout side through this server: frozen, it holds the request until the kill.
		expect(cutOff.filter(b => ["gateway", "checkout-side"].includes(b.nodeID)).length).toBeGreaterThan(0);
		cluster.freeze(server);
		trappedAnswers.push(send(app.http().post("/api/checkout").send(body)));
		const since = Date.now();
		while (checkoutsWaiting() === 0 && Date.now() - since < 10_000) await pause(20);
		trapped.push(checkoutsWaiting());
		await cluster.kill(server);
		// The nodes it served find the others by themselves while it is down.
		reconnectMs.push(await allReachable(`server ${server + 1} was killed`));
		moved.push(...cutOff.map(b => `${b.nodeID}: server ${server + 1} -> ${serverOf(b)}`));
		await pause(DOWN_MS);
		await cluster.start(server);
		await allReachable(`server ${server + 1} restarted`);
	}
	// Traffic goes on until a checkout is paid after the last restart (a circuit breaker opened by the gaps holds 503 for 10 s).
	const lastRestart = Date.now();
	while (Date.now() - lastRestart < 30_000 && !answers.some(a => a.at > lastRestart && a.body.code === "OK")) await pause(200);
	await pause(2000);
	running = false;
	await Promise.all([...traffic, ...trappedAnswers]);
	const finalAdvance = new Date(Date.now() + (month + 1) * 31 * DAY_MS);
	// Runs the kills cut off left periods unbilled: runs go on until one finds nothing due and nothing held.
	let lastRun = await admin(app).post(`/accounts/${renewing.accountId}/clock`, { advanceTo: finalAdvance.toISOString() });
	for (let i = 0; i < 60 && (lastRun.status !== 200 || lastRun.body.skipped > 0 || lastRun.body.charged > 0); i++) {
		if (lastRun.status !== 200 || lastRun.body.skipped > 0) await pause(1000);
		lastRun = await admin(app).post(`/accounts/${renewing.accountId}/clock`, { advanceTo: finalAdvance.toISOString() });
	}
	// The longest time without a 200 answer, from the traffic's start to its end.
	const served = answers.filter(a => a.status === 200).map(a => a.at);
	const gaps = [started, ...served].slice(1).map((at, i) => at - [started, ...served][i]);
	console.log(
		`NATS cluster of ${SERVERS}, each killed once: longest gap in answers ${Math.max(...gaps)} ms; every node reached every other again ` +
			`${reconnectMs.join(", ")} ms after each kill (${moved.join("; ")}); ${acknowledged.checkouts.length} checkouts, ${acknowledged.refunds.length} refunds, ` +
			`${acknowledged.unsubscribes.length} unsubscribes, ${renewalRuns} renewal runs acknowledged; ` +
			`${answers.filter(a => a.status === 503).length} of ${answers.length} answers 503; ` +
			`slowest of ${answers.filter(a => a.checkout).length} checkouts ${Math.max(...answers.filter(a => a.checkout).map(a => a.ms))} ms ` +
			`(the ones waiting on a killed server: ${(await Promise.all(trappedAnswers.map(async (a, i) => `${((await a) as { status: number }).status} with ${trapped[i]} waiting`))).join(", ")})`,
	);

	// Assert: only documented answers, no hang, and the cluster serves after the last restart.
	expect(moved.length).toBeGreaterThanOrEqual(SERVERS);
	expectOnlyDocumentedAnswers(answers);
	expect(answers.some(a => a.at > lastRestart && a.body.code === "OK")).toBe(true);
	// Every kill took checkouts with it, and every checkout answered well within the request timeout, those included.
	expect(trapped.filter(waiting => waiting === 0)).toEqual([]);
	expect(answers.filter(a => a.checkout && a.ms > CHECKOUT_ANSWER_MS).map(a => `${a.status} after ${a.ms} ms`)).toEqual([]);
	expect(lastRun.status).toBe(200);
	expect(lastRun.body).toMatchObject({ declined: 0, suspended: 0, skipped: 0 });

	// Every acknowledged change is in the database, and every customer was charged once per period billed.
	const client = await MongoClient.connect(mongoUrl);
	try {
		const billing: Db = client.db(databaseNameFor("billing", mongoUrl));
		const deadline = Date.now() + 60_000;
		while (
			(await billing.collection("customers").countDocuments({ status: "PENDING" })) +
				(await billing.collection("refunds").countDocuments({ status: "RESERVED" })) >
			0
		) {
			if (Date.now() > deadline) throw new Error("checkouts still PENDING or refunds still RESERVED 60 s after the traffic");
			await pause(250);
		}
		const customers = new Map((await billing.collection("customers").find({}).toArray()).map(c => [c._id as unknown as number, c]));
		const transactions = await billing.collection("transactions").find({}).toArray();
		for (const id of acknowledged.checkouts) {
			const status = customers.get(id)?.status;
			if (acknowledged.unsubscribes.includes(id)) expect({ id, status }).toEqual({ id, status: "UNSUBSCRIBED" });
			else if (!acknowledged.unanswered.has(id)) expect({ id, status }).toEqual({ id, status: "ACTIVE" });
		}
		for (const id of acknowledged.refunds) expect(transactions.some(t => t.customerId === id && t.type === "REFUNDED")).toBe(true);
		const charges = transactions.filter(t => ["SUBSCRIPTION_START", "RENEWAL"].includes(t.type) && t.status === "APPROVED");
		const mismatched = [...customers.values()]
			.map(c => ({ id: c._id, periodsBilled: c.periodsBilled, charged: charges.filter(t => t.customerId === c._id).length }))
			.filter(c => c.periodsBilled !== c.charged);
		expect(mismatched).toEqual([]);
		// The processor's own ledger agrees: per customer, one approved charge per period billed (its checkout's, its renewals').
		const approvedKeys = (
			await client
				.db(databaseNameFor("payments", mongoUrl))
				.collection<{ _id: string }>("payment_operations")
				.find({ kind: "charge", "outcome.status": "APPROVED" }, { projection: { _id: 1 } })
				.toArray()
		).map(op => op._id);
		const ledger = (c: { _id: unknown; attemptId?: string }) =>
			approvedKeys.filter(key => key === `${c.attemptId}:charge` || key.startsWith(`renewal:${c._id}:`)).length;
		const chargedOtherwise = [...customers.values()]
			.map(c => ({ id: c._id, periodsBilled: c.periodsBilled, ledger: ledger(c) }))
			.filter(c => c.periodsBilled !== c.ledger);
		expect(chargedOtherwise).toEqual([]);
		expect(approvedKeys.length).toBe(charges.length);
		const renewed = [...customers.values()].filter(c => c.accountId === renewing.accountId);
		expect(renewed.filter(c => c.status !== "ACTIVE" || !(c.nextRenewalTimestamp > finalAdvance))).toEqual([]);

		// Every transaction's and every acknowledged change's webhook arrives, each event under one id however often it was sent.
		const events = () => receiver.requests.map(r => JSON.parse(r.rawBody) as Envelope & { data: { transaction?: { status?: string } } });
		const has = (type: string, customerId: number, transactionId?: number) =>
			events().some(
				e => e.type === type && e.customerId === customerId && (transactionId === undefined || e.transaction_id === transactionId),
			);
		const missing = () => [
			...transactions
				.filter(t => t.type !== "REFUNDED" && !has("TRANSACTION", t.customerId, t._id as unknown as number))
				.map(t => `TRANSACTION ${t._id}`),
			...acknowledged.checkouts.filter(id => !has("CONVERSION", id)).map(id => `CONVERSION ${id}`),
			...acknowledged.refunds.filter(id => !has("REFUND", id)).map(id => `REFUND ${id}`),
			...acknowledged.unsubscribes.filter(id => !has("CANCELLATION", id)).map(id => `CANCELLATION ${id}`),
		];
		const webhooksBy = Date.now() + 30_000;
		while (missing().length > 0 && Date.now() < webhooksBy) await pause(200);
		expect(missing()).toEqual([]);
		const idsPerEvent = new Map<string, Set<string>>();
		for (const e of events()) {
			const key = [e.type, e.customerId, e.transaction_id, e.data.transaction?.status].join(" ");
			idsPerEvent.set(key, (idsPerEvent.get(key) ?? new Set()).add(e.id));
		}
		expect([...idsPerEvent].filter(([, ids]) => ids.size > 1).map(([key, ids]) => `${key}: ${[...ids].join(", ")}`)).toEqual([]);
		expect(acknowledged.checkouts.length).toBeGreaterThan(0);
		expect(charges.filter(t => t.type === "RENEWAL").length).toBeGreaterThanOrEqual(RENEWING);
	} finally {
		await client.close();
	}
	// No request from the gaps is left pending on any node (the recovery sweeps' own calls end within a request's time).
	const tracked = (broker: ServiceBroker) => (broker as unknown as { _trackedContexts: unknown[] })._trackedContexts.length;
	const quietBy = Date.now() + REQUEST_TIMEOUT_MS;
	while ([app.broker, ...others].some(b => tracked(b) > 0) && Date.now() < quietBy) await pause(100);
	expect([app.broker, ...others].map(tracked)).toEqual([0, 0, 0, 0]);
}, 300_000);
