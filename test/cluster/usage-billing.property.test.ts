// Usage billed against a simple model (issue 48), property-based (fast-check), on two usage nodes as real processes
// over NATS. Each run: a metered product with random prices on every aggregation, a customer, and a random stream of
// events (repeated ids, timestamps out of order) sent in batches two at a time, so the two nodes count them at once;
// the test clock to the renewal; events that come late for the billed period, and the next period's; the clock to the
// next renewal. Both renewals must charge exactly what the model computes from the deduplicated events: the base fee,
// each meter's period priced, and what the late events add to the period before (never less than 0).
// The prices are priced with shared/usage-pricing.ts, whose own property test checks it against an exact model: this
// one checks what is counted, once, in which period.
import fc from "fast-check";
import type { Aggregation } from "../../shared/contracts/usage";
import { priceUsage, type UsagePrice } from "../../shared/usage-pricing";
import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout } from "../factories/checkout";
import { admin, bearer, createPlan } from "../factories/merchant";
import { clockToRenewalOf, instantOf } from "../factories/test-clock";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

let nats: NatsServer;
let app: TestApp;
const nodes = serviceNodes("usage");

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({
		env: { TRANSPORTER: nats.url, RENEWAL_CRON: "0 0 1 1 *" },
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "invoicing", "notifications"],
		broker: { nodeID: "support", requestTimeout: 30_000 },
	});
	for (const name of ["usage-1", "usage-2"]) nodes.start(name);
	await nodes.waitFor(app.broker, ["usage-1", "usage-2"]);
}, 90_000);

afterAll(async () => {
	nodes.killAll();
	await app?.stop();
	await nats?.stop();
});

const METERS: { code: string; aggregation: Aggregation; property?: string }[] = [
	{ code: "calls", aggregation: "count" },
	{ code: "tokens", aggregation: "sum", property: "v" },
	{ code: "peak", aggregation: "max", property: "v" },
	{ code: "users", aggregation: "unique_count", property: "user" },
	{ code: "level", aggregation: "latest", property: "v" },
];

/** An event as generated: its meter, when in the period (ms after the period's start, or before its end for a late one), its value. */
interface GenEvent {
	key: number;
	meter: number;
	offsetMs: number;
	/** Millionths with at most 3 decimals, so it is exact as a JSON number. */
	value: number;
	user: number;
}

const genEvent = fc.record({
	key: fc.nat(60),
	meter: fc.nat(METERS.length - 1),
	offsetMs: fc.integer({ min: 0, max: 120_000 }),
	value: fc.integer({ min: 0, max: 5_000_000 }).map(v => v * 1000),
	user: fc.nat(6),
});

const decimal = fc
	.tuple(fc.nat(500), fc.nat(999))
	.map(([whole, fraction]) => (fraction ? `${whole}.${String(fraction).padStart(3, "0").replace(/0+$/, "")}` : `${whole}`));

const tiers = fc
	.uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 0, maxLength: 3 })
	.chain(bounds =>
		fc.tuple(
			...[...bounds.sort((a, b) => a - b), null].map(upTo =>
				fc.record({ upTo: fc.constant(upTo), unitAmount: decimal, flatAmount: fc.nat(300) }),
			),
		),
	);

const genPrice = (meter: string): fc.Arbitrary<UsagePrice> =>
	fc.oneof(
		fc.record({ meter: fc.constant(meter), model: fc.constant("per_unit" as const), unitAmount: decimal }),
		fc.record({
			meter: fc.constant(meter),
			model: fc.constant("package" as const),
			unitAmount: decimal,
			packageSize: fc.integer({ min: 1, max: 7 }),
		}),
		fc.record({ meter: fc.constant(meter), model: fc.constant("graduated" as const), tiers }),
		fc.record({ meter: fc.constant(meter), model: fc.constant("volume" as const), tiers, minimumAmount: fc.nat(800) }),
	);

const genPrices = fc.tuple(...METERS.map(m => genPrice(m.code)));

/** Two to four batches, their events by index into the stream. */
const genRun = fc.record({
	prices: genPrices,
	first: fc.array(genEvent, { minLength: 1, maxLength: 60 }),
	late: fc.array(genEvent, { maxLength: 15 }),
	second: fc.array(genEvent, { maxLength: 30 }),
	cuts: fc.array(fc.nat(100), { minLength: 1, maxLength: 3 }),
});

interface Sent {
	id: string;
	meter: string;
	at: number;
	value: number;
	user: string;
}

/** A meter's quantity over the events, as the meter aggregates: the simple model. */
function modelQuantity(aggregation: Aggregation, events: Sent[]): number {
	switch (aggregation) {
		case "count":
			return events.length * 1_000_000;
		case "sum":
			return events.reduce((sum, e) => sum + e.value, 0);
		case "max":
			return events.reduce((max, e) => Math.max(max, e.value), 0);
		case "unique_count":
			return new Set(events.map(e => e.user)).size * 1_000_000;
		case "latest": {
			const last = [...events].sort((a, b) => a.at - b.at || a.value - b.value).at(-1);
			return last?.value ?? 0;
		}
	}
}

const linesOf = (prices: UsagePrice[], events: Sent[]) =>
	METERS.map(
		(meter, i) =>
			priceUsage(
				prices[i],
				modelQuantity(
					meter.aggregation,
					events.filter(e => e.meter === meter.code),
				),
			).amount,
	);

/** Each id once: a repeated id is the same event sent again (a retry), counted once. */
function eventsOf(generated: GenEvent[], base: number, prefix: string, late = false): Sent[] {
	const byKey = new Map<number, Sent>();
	for (const e of generated) {
		if (byKey.has(e.key)) continue;
		const meter = METERS[e.meter];
		byKey.set(e.key, {
			id: `${prefix}-${e.key}`,
			meter: meter.code,
			at: late ? base - 1000 - e.offsetMs : base + e.offsetMs,
			value: e.value,
			user: `u${e.user}`,
		});
	}
	// The stream as sent: each generated event, repeats included, with its key's content.
	return generated.map(e => byKey.get(e.key)!);
}

function bodyOf(customerId: number, e: Sent) {
	const meter = METERS.find(m => m.code === e.meter)!;
	const properties = meter.aggregation === "unique_count" ? { user: e.user } : meter.property ? { v: e.value / 1_000_000 } : undefined;
	return { id: e.id, customerId, meter: e.meter, timestamp: new Date(e.at).toISOString(), ...(properties ? { properties } : {}) };
}

/** The stream cut into batches, sent two at a time (the balancer gives each of a pair to another node). */
async function sendConcurrently(shop: Shop, customerId: number, stream: Sent[], cuts: number[]): Promise<void> {
	const points = [...new Set(cuts.map(c => Math.floor((c / 100) * stream.length)))].sort((a, b) => a - b);
	const batches = [0, ...points, stream.length].slice(0, -1).map((from, i, all) => stream.slice(from, all[i + 1] ?? stream.length));
	const nonEmpty = batches.filter(b => b.length > 0);
	for (let i = 0; i < nonEmpty.length; i += 2) {
		const pair = nonEmpty.slice(i, i + 2);
		const answers = await Promise.all(
			pair.map(batch =>
				app
					.http()
					.post("/api/usage")
					.set(bearer(shop))
					.send({ events: batch.map(e => bodyOf(customerId, e)) }),
			),
		);
		for (const answer of answers) {
			expect(answer.status).toBe(200);
			expect(answer.body.refused).toBe(0);
		}
	}
}

const renewalAmounts = async (shop: Shop, customerId: number): Promise<number[]> =>
	(await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop)).expect(200)).body.data
		.filter((tx: { type: string }) => tx.type === "RENEWAL")
		.reverse()
		.map((tx: { amount: number; status: string }) => {
			expect(tx.status).toBe("APPROVED");
			return Math.round(tx.amount * 100);
		});

test("When random streams of usage events, repeated and out of order, some late, are counted by two usage nodes at once, then both renewals charge exactly what a simple model of the deduplicated events prices", async () => {
	await fc.assert(
		fc.asyncProperty(genRun, async run => {
			// Arrange
			const shop = await createShop(app);
			for (const meter of METERS)
				await admin(app)
					.post(`/accounts/${shop.accountId}/meters`, {
						code: meter.code,
						name: meter.code,
						aggregation: meter.aggregation,
						property: meter.property,
					})
					.expect(201);
			const prices = run.prices as UsagePrice[];
			const productId = await createPlan(app, shop, { name: "Metered", amount: 10, usagePrices: prices });
			const { body } = await submitCheckout(app, shop, { productId, card: CARDS.visa });
			const customerId = body.customerId as number;
			const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
			const start = instantOf(customer.subscriptionTimestamp).getTime();

			// Act
			const first = eventsOf(run.first, start + 1, "a");
			await sendConcurrently(shop, customerId, first, run.cuts);
			const renewedAt = (await clockToRenewalOf(app, shop, customerId)).getTime();
			const late = eventsOf(run.late, renewedAt, "late", true);
			const second = eventsOf(run.second, renewedAt, "b");
			await sendConcurrently(shop, customerId, [...late, ...second], run.cuts);
			await clockToRenewalOf(app, shop, customerId);

			// Assert
			const unique = (events: Sent[]) => [...new Map(events.map(e => [e.id, e])).values()];
			const billed = linesOf(prices, unique(first));
			const final = linesOf(prices, unique([...first, ...late]));
			const adjustments = final.map((amount, i) => Math.max(0, amount - billed[i]));
			const sum = (amounts: number[]) => amounts.reduce((a, b) => a + b, 0);
			expect(await renewalAmounts(shop, customerId)).toEqual([
				1000 + sum(billed),
				1000 + sum(linesOf(prices, unique(second))) + sum(adjustments),
			]);
		}),
		{ numRuns: 12, seed: Number(process.env.FC_SEED ?? Date.now() % 1_000_000) },
	);
}, 600_000);
