// The metrics service on real processes (issue 46): metrics nodes (`npm run node` with SERVICES=metrics) over a real
// NATS server, billing and the rest of the service in this process. Billing's outbox relay hands each relayed batch's
// metrics entries to a metrics node (metrics.apply) and waits for its answer before the events leave the outbox.
// This process SIGKILLs a metrics node while it applies a batch of the test's account:
// - after it applied the entries and before its answer reached billing (the answer is thrown away): billing hands
//   them again at its next sweep, to the other node, which must count nothing twice;
// - as soon as the request is sent, wherever the node is in its apply (before, between its month updates, after):
//   whatever it wrote or did not, nothing is missed and nothing counted twice.
// Then GET /api/metrics must equal what the lists of customers and transactions say (test/factories/metrics-ledger.ts).
// And the test clock's moves reach every metrics node: one running during a move hears it, one started after asks.
// And with no metrics node at all, the webhooks' events are stored as usual, and counted once a node is back.
import type { Context, Middleware } from "moleculer";
import type { MetricsAnswer } from "../../shared/contracts/metrics";
import { SettleTimedOutRequests } from "../../shared/settle-timed-out-requests";
import { formatDateTime } from "../../shared/time";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { advanceClock, bearer, DAY_MS } from "../factories/merchant";
import { expectMetricsMatchLists } from "../factories/metrics-ledger";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

let nats: NatsServer;
let app: TestApp;
const nodes = serviceNodes("metrics");
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The metrics node to kill at its next apply of the account's entries, and when. */
const armed: { node: string | null; accountId: number; when: "applied" | "sent"; killed: string | null } = {
	node: null,
	accountId: 0,
	when: "applied",
	killed: null,
};

function kill(nodeId: string): void {
	armed.node = null;
	armed.killed = nodeId;
	nodes.processes.get(nodeId)!.kill("SIGKILL");
}

type ApplyContext = Context<{ entries: { entry: { accountId: number } }[] }>;

/** Billing's side of the kills: its call to the armed metrics node, which dies after applying, or as the call leaves. */
const killMetricsNode: Middleware = {
	name: "KillMetricsNode",
	remoteAction(next, action) {
		if (action.name !== "metrics.apply") return next;
		const handler = next as unknown as (ctx: ApplyContext) => Promise<unknown>;
		return async (ctx: ApplyContext) => {
			const node = ctx.nodeID!;
			if (armed.node !== node || !ctx.params.entries.some(e => e.entry.accountId === armed.accountId)) return handler(ctx);
			if (armed.when === "sent") {
				const answer = handler(ctx);
				kill(node);
				return answer;
			}
			await handler(ctx);
			kill(node);
			throw new Error("the metrics node died before its answer was sent");
		};
	},
};

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, RENEWAL_CRON: "0 0 1 1 *" },
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "notifications", "refunds"],
		broker: { nodeID: "support", requestTimeout: 30_000, middlewares: [SettleTimedOutRequests, killMetricsNode] },
	});
	for (const name of ["metrics-1", "metrics-2"]) nodes.start(name);
	await nodes.waitFor(app.broker, ["metrics-1", "metrics-2"]);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await nats?.stop();
});

/** Cards by share of the customers: most renew, some decline their renewals (recovering on a retry, or lost). */
const CARD_MIX = [CARDS.visa, CARDS.mastercard, CARDS.renewalsInsufficientFunds, CARDS.visa, CARDS.renewalsLostCard];

/** `count` customers through the HTTP checkout, two at a time: monthly subscriptions and trials. */
async function subscribe(shop: Shop, count: number): Promise<void> {
	const products = [shop.products.charge, shop.products.charge, shop.products.schedule];
	let next = 0;
	const stream = async () => {
		for (let i = next++; i < count; i = next++) {
			const res = await submitCheckout(app, shop, { productId: products[i % products.length], card: CARD_MIX[i % CARD_MIX.length] });
			expect(res.body.code).toBe("OK");
		}
	};
	await Promise.all(Array.from({ length: 2 }, stream));
}

/** Until the registry has dropped the killed node (its heartbeat timeout): no request goes to it after. */
async function forgotten(nodeId: string): Promise<void> {
	for (const deadline = Date.now() + 60_000; app.broker.registry.nodes.get(nodeId)?.available; await sleep(200))
		if (Date.now() > deadline) throw new Error(`${nodeId} is still in the registry`);
}

/** The default range's last day a metrics node answers for the account: its now's day. */
async function todayOn(nodeID: string, shop: Shop): Promise<string> {
	const answer = (await app.broker.call("metrics.figures", { accountId: shop.accountId }, { nodeID })) as MetricsAnswer;
	return answer.to;
}

const dayOf = (ms: number) => formatDateTime(new Date(ms)).slice(0, 10);

/** The day `days` from now, read before and after `act` (either, should a day end in between), and act's result. */
async function dayAround<T>(days: number, act: () => Promise<T>): Promise<{ days: string[]; result: T }> {
	const before = dayOf(Date.now() + days * DAY_MS);
	const result = await act();
	return { days: [before, dayOf(Date.now() + days * DAY_MS)], result };
}

test("When a metrics node is SIGKILLed after applying a batch, before billing had its answer, and another as the batch was sent, then every entry is counted once: volume, renewals, new, active and MRR equal the lists", async () => {
	// Arrange
	const shop = await createShop(app);

	// Act: checkouts, whose relays hand their entries to both nodes; metrics-2 dies after applying one of them.
	Object.assign(armed, { node: "metrics-2", accountId: shop.accountId, when: "applied", killed: null });
	await subscribe(shop, 24);
	for (let waited = 0; !armed.killed && waited < 30_000; waited += 50) await sleep(50);
	expect(armed.killed).toBe("metrics-2");
	await forgotten("metrics-2");
	// A fresh node beside metrics-1, killed as a batch of the month's renewals is sent to it.
	nodes.start("metrics-3");
	await nodes.waitFor(app.broker, ["metrics-1", "metrics-3"]);
	Object.assign(armed, { node: "metrics-3", when: "sent", killed: null });
	await advanceClock(app, shop, 32);
	for (let waited = 0; !armed.killed && waited < 30_000; waited += 50) await sleep(50);
	expect(armed.killed).toBe("metrics-3");
	await forgotten("metrics-3");

	// Assert: billing's sweeps handed what waited in the outbox to metrics-1, which counted each entry once.
	const expected = await expectMetricsMatchLists(app, shop, 32);
	expect(expected.renewalsAttempted).toBeGreaterThan(10);
	expect(expected.activeSubscribers).toBeGreaterThan(10);
}, 300_000);

test("When a sandbox account's test clock moves, then a metrics node running during the move hears it, and one started after it reads the moved clock", async () => {
	// Arrange: metrics-1 has read the account once (it knows its clock: none yet).
	const shop = await createShop(app);
	const today = await dayAround(0, () => todayOn("metrics-1", shop));
	expect(today.days).toContain(today.result);

	// Act
	const moved = await dayAround(10, () => advanceClock(app, shop, 10));
	nodes.start("metrics-4");
	await nodes.waitFor(app.broker, ["metrics-1", "metrics-4"]);

	// Assert: both read the account's now, the clock's day.
	expect(moved.days).toContain(await todayOn("metrics-1", shop));
	expect(moved.days).toContain(await todayOn("metrics-4", shop));
}, 120_000);

test("When every metrics node is down, then a checkout's webhook events are stored all the same, and its entries are counted once a metrics node is back", async () => {
	// Arrange: no metrics node left.
	const shop = await createShop(app);
	const alive = [...nodes.processes].filter(([, child]) => child.exitCode === null && child.signalCode === null);
	for (const [nodeId] of alive) kill(nodeId);
	for (const [nodeId] of alive) await forgotten(nodeId);

	// Act
	await subscribe(shop, 3);

	// Assert: the relay stored the events in notifications while no metrics node answered (they wait in the outbox for
	// the metrics, not for the webhooks); once a node is back, the sweep hands their entries over and each counts once.
	const conversions = async () => {
		const events = (await app.http().get("/api/events?limit=100").set(bearer(shop)).expect(200)).body.data as { type: string }[];
		return events.filter(event => event.type === "CONVERSION").length;
	};
	for (const deadline = Date.now() + 30_000; (await conversions()) < 3 && Date.now() < deadline; ) await sleep(200);
	expect(await conversions()).toBe(3);
	expect(app.broker.registry.getServiceList({ onlyAvailable: true }).some((s: { name: string }) => s.name === "metrics")).toBe(false);
	nodes.start("metrics-5");
	await nodes.waitFor(app.broker, ["metrics-5"]);
	const expected = await expectMetricsMatchLists(app, shop, 0);
	expect(expected.newSubscribers).toBe(2);
}, 180_000);
