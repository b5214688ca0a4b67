// The metrics' counters on real processes (issue 38): billing nodes (`npm run node` with SERVICES=billing) over a
// real NATS server, the rest of the service in this process. The payments, notifications and metrics services here SIGKILL a
// billing node at a chosen step, as change-recovery.test.ts does, so the kill falls in the window every time:
// - while a node renews its batch: after the sandbox processor approved some of its renewals' charges (the node never
//   learns of the last one) and before any was recorded;
// - while a node's relay hands its events over: after notifications stored them and the metrics service (in this
//   process) applied their entries, before the events left the outbox.
// Then the survivor and its sweeps finish, and GET /api/metrics must equal what the lists of customers and
// transactions say (test/factories/metrics-ledger.ts): no payment counted twice or missed.
import type { Context, Middleware } from "moleculer";
import { SettleTimedOutRequests } from "../../shared/settle-timed-out-requests";
import { billingNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { DAY_MS } from "../factories/merchant";
import { expectMetricsMatchLists as expectLedger, metricsTotal, readLedger } from "../factories/metrics-ledger";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CUSTOMERS = 100;
const LEASE_MS = 3000;

let nats: NatsServer;
let app: TestApp;
const nodes = billingNodes();
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** What the services here do to a billing node next: kill it after its nth approved renewal charge, or at its relay. */
const armed: {
	node: string | null;
	accountId: number;
	afterCharges: number;
	atRelay: boolean;
	/** The armed node handed a renewal's events to notifications: its next metrics.apply is that relay's. */
	relaying: boolean;
	killed: string | null;
	charges: number;
} = {
	node: null,
	accountId: 0,
	afterCharges: 0,
	atRelay: false,
	relaying: false,
	killed: null,
	charges: 0,
};

function kill(nodeId: string): void {
	armed.node = null;
	armed.killed = nodeId;
	nodes.processes.get(nodeId)!.kill("SIGKILL");
}

interface RelayedEvent {
	accountId: number;
	type: string;
	data: { transaction?: { authentication: object | null } };
}

/** A renewal cycle's charge of the armed account: a TRANSACTION without a buyer's authentication (a checkout's has one). */
const renewalOfArmedAccount = (e: RelayedEvent) =>
	e.accountId === armed.accountId && e.type === "TRANSACTION" && e.data.transaction?.authentication === null;

/** The payments, notifications and metrics services' side of the kills: the caller dies, the answer goes nowhere. */
const killCaller: Middleware = {
	name: "KillMetricsCaller",
	localAction(next, action) {
		const handler = next as unknown as (ctx: Context) => Promise<unknown>;
		if (action.name === "payments.charge")
			return async (ctx: Context<{ idempotencyKey: string }>) => {
				const outcome = (await handler(ctx)) as { status: string };
				const mine = armed.node === ctx.nodeID && armed.afterCharges > 0 && ctx.params.idempotencyKey.startsWith("renewal:");
				if (mine && outcome.status === "APPROVED" && ++armed.charges >= armed.afterCharges) kill(ctx.nodeID!);
				return outcome;
			};
		if (action.name === "notifications.enqueueAll")
			return async (ctx: Context<{ events: RelayedEvent[] }>) => {
				const mine = armed.node === ctx.nodeID && armed.atRelay && ctx.params.events.some(renewalOfArmedAccount);
				if (mine) armed.relaying = true;
				return handler(ctx);
			};
		if (action.name === "metrics.apply")
			return async (ctx: Context<{ entries: { entry: { accountId: number } }[] }>) => {
				const answer = await handler(ctx);
				const mine = armed.node === ctx.nodeID && armed.relaying && ctx.params.entries.some(e => e.entry.accountId === armed.accountId);
				if (!mine) return answer;
				kill(ctx.nodeID!);
				throw new Error("the billing node died before its events left the outbox");
			};
		return next;
	},
};

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, RENEWAL_LEASE_MS: String(LEASE_MS), RENEWAL_CRON: "0 0 1 1 *" },
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "notifications", "refunds", "metrics"],
		broker: { nodeID: "support", requestTimeout: 60_000, middlewares: [SettleTimedOutRequests, killCaller] },
	});
	for (const name of ["billing-1", "billing-2"]) nodes.start(name);
	await nodes.waitFor(app.broker, ["billing-1", "billing-2"]);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await nats?.stop();
});

/** Cards by share of the customers: most renew, some decline their renewals (soft, recovering on a retry, hard). */
const CARD_MIX = [
	CARDS.visa,
	CARDS.visa,
	CARDS.mastercard,
	CARDS.visa,
	CARDS.renewalsInsufficientFunds,
	CARDS.visa,
	CARDS.renewalsDeclinedTwice,
	CARDS.visa,
	CARDS.renewalsLostCard,
	CARDS.visa,
];

/** `count` customers through the HTTP checkout, four at a time: monthly subscriptions, and trials (a hold, a schedule). */
async function subscribe(shop: Shop, count: number): Promise<void> {
	const products = [shop.products.charge, shop.products.charge, shop.products.preauthorize, shop.products.schedule];
	let next = 0;
	const stream = async () => {
		for (let i = next++; i < count; i = next++) {
			const res = await submitCheckout(app, shop, { productId: products[i % products.length], card: CARD_MIX[i % CARD_MIX.length] });
			expect(res.body.code).toBe("OK");
		}
	};
	await Promise.all(Array.from({ length: 4 }, stream));
}

/** The account's test clock moved to `days` from now on each of `nodeIds` at once, as the admin route does; a node that dies answers an error. */
const advanceOn = (shop: Shop, nodeIds: string[], advanceTo: string) =>
	Promise.all(
		nodeIds.map(nodeID =>
			app.broker.call("billing.advanceClock", { accountId: shop.accountId, advanceTo }, { nodeID, timeout: 120_000 }).catch(err => err),
		),
	);

/** Until the registry has dropped the killed node (its heartbeat timeout): no request goes to it after. */
async function forgotten(nodeId: string): Promise<void> {
	for (const deadline = Date.now() + 60_000; app.broker.registry.nodes.get(nodeId)?.available; await sleep(200))
		if (Date.now() > deadline) throw new Error(`${nodeId} is still in the registry`);
}

const total = (shop: Shop, from: number, clockDays: number) => metricsTotal(app, shop, from, clockDays);
const expectMetricsMatchLists = (shop: Shop, clockDays: number) => expectLedger(app, shop, clockDays);

test("When renewals run on two billing nodes and one is SIGKILLed mid-batch, after the processor approved some of its charges, then the metrics count each payment once: volume, renewals, new, active and MRR equal the lists", async () => {
	// Arrange
	const shop = await createShop(app);
	await subscribe(shop, CUSTOMERS);
	const advanceTo = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

	// Act: the month's renewals and the trials' first charges on both nodes; billing-2 dies after its 5th approval.
	Object.assign(armed, { node: "billing-2", accountId: shop.accountId, afterCharges: 5, charges: 0, atRelay: false, killed: null });
	// One clock run at a time per account: billing-2's first; billing-1's waits for it, and takes over once its lease ends.
	const target = advanceTo(32);
	await Promise.all([advanceOn(shop, ["billing-2"], target), sleep(200).then(() => advanceOn(shop, ["billing-1"], target))]);
	expect(armed.killed).toBe("billing-2");
	await forgotten("billing-2");
	// The survivor takes over what the killed node held once its leases ran out, then runs the first retries.
	await advanceOn(shop, ["billing-1"], advanceTo(32));
	await advanceOn(shop, ["billing-1"], advanceTo(36));

	// Assert: every figure equals the lists'; and the renewals' volume alone (their days are the clock's) is the sum
	// of the renewal cycle's approved charges.
	const expected = await expectMetricsMatchLists(shop, 36);
	const ledger = await readLedger(app, shop);
	const cycleCharges = ledger.transactions.filter(
		tx => tx.status === "APPROVED" && (tx.type === "RENEWAL" || (tx.type === "SUBSCRIPTION_START" && tx.authentication === null)),
	);
	const renewalsOnly = await total(shop, Date.now() + 2 * DAY_MS, 36);
	expect(renewalsOnly?.grossVolume).toBe(cycleCharges.reduce((sum, tx) => sum + Math.round(tx.amount * 100), 0));
	// The run did what it is meant to: many renewals, each customer's period tried once, some lost and recovered.
	expect(expected.renewalsAttempted).toBeGreaterThan(CUSTOMERS * 0.9);
	expect(expected.renewalsLost).toBeGreaterThan(0);
	expect(expected.activeSubscribers).toBeGreaterThan(CUSTOMERS / 2);
}, 300_000);

test("When a billing node's relay is SIGKILLed after the metrics service applied its events' entries and before they left the outbox, then another node's sweep relays them and counts nothing twice", async () => {
	// Arrange: a fresh node to kill (billing-2 is gone), and an account whose customers renew on it alone.
	nodes.start("billing-3");
	await nodes.waitFor(app.broker, ["billing-1", "billing-3"]);
	const shop = await createShop(app);
	await subscribe(shop, 40);
	const advanceTo = new Date(Date.now() + 32 * DAY_MS).toISOString();

	// Act: billing-3 renews everyone; its relay dies once the metrics service applied the batch's entries.
	Object.assign(armed, {
		node: "billing-3",
		accountId: shop.accountId,
		afterCharges: 0,
		charges: 0,
		atRelay: true,
		relaying: false,
		killed: null,
	});
	await advanceOn(shop, ["billing-3"], advanceTo);
	for (let waited = 0; !armed.killed && waited < 30_000; waited += 50) await sleep(50);
	expect(armed.killed).toBe("billing-3");
	await forgotten("billing-3");
	// The entries were applied before the kill: the renewals already count, while their events wait in the outbox.
	const atKill = await total(shop, Date.now() + 2 * DAY_MS, 32);
	expect(atKill?.renewalsAttempted).toBeGreaterThan(0);

	// The survivor renews those the killed node had not reached.
	await advanceOn(shop, ["billing-1"], advanceTo);

	// Assert: billing-1's sweep relayed the killed node's events and applied their entries again, which counted nothing twice.
	const expected = await expectMetricsMatchLists(shop, 32);
	expect(expected.renewalsAttempted).toBe(40);
}, 300_000);
