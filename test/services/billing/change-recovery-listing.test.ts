// A change's listing for the recovery sweep (services/billing/changes/change-charge.ts) when the sweep is at the
// customer's earlier listing in the same slot of checkout_schedule (its checkout's, judged done): the change's add
// finds the customer already listed there, so the sweep's removal of that listing takes away the change's too. Each
// test puts the change's writes at one point of the sweep's, through the schedule the billing node uses, while the
// change's charge is lost before the processor is asked (as when its node dies); the sweep must still settle it.
// The timer's sweep is off (an hour apart): the tests run the sweep themselves.
import type { BillingDeps } from "../../../services/billing/deps";
import { recoverCheckouts } from "../../../services/billing/subscriptions/checkout-recovery";
import type { Schedule } from "../../../shared/schedule";
import { aroundAction } from "../../factories/around-action";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

const GRACE_MS = 2000;
/** checkout_schedule's slots (createCheckoutSchedule). */
const SLOT_MS = 10_000;

let app: TestApp;
let shop: Shop;
let deps: BillingDeps;
/** A change's charge fails before the processor is asked: its outcome is unknown, and its mark stays for the sweep. */
let loseCharges = true;

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

const loseChangeCharge = aroundAction<{ idempotencyKey: string }>("LoseChangeCharge", "payments.charge", async (ctx, charge) => {
	if (loseCharges && ctx.params.idempotencyKey.startsWith("change:")) throw new Error("lost before the processor was asked");
	return charge(ctx);
});

beforeAll(async () => {
	app = await startApp({
		env: { REQUEST_TIMEOUT_MS: "1000", REFUND_RECOVERY_GRACE_MS: String(GRACE_MS), REFUND_RECOVERY_INTERVAL_MS: "3600000" },
		broker: { middlewares: [loseChangeCharge] },
	});
	shop = await createShop(app);
	deps = (app.broker.getLocalService("billing") as unknown as { deps: BillingDeps }).deps;
});

afterAll(async () => {
	await app?.stop();
});

const api = {
	get: (path: string) => app.http().get(`/api${path}`).set(bearer(shop)),
	post: (path: string, body: object) => app.http().post(`/api${path}`).set(bearer(shop)).send(body),
};

/**
 * A subscriber and its quote for 2 seats, made at the start of a slot: the change sent within the next seconds is
 * listed in its checkout's slot, which the sweep reads once the grace period has passed its start.
 */
async function subscriberAtSlotStart() {
	await sleep(SLOT_MS - (Date.now() % SLOT_MS) + 50);
	const checkout = await submitCheckout(app, shop, { productId: shop.products.charge });
	expect(checkout.body.code).toBe("OK");
	const id = checkout.body.customerId as number;
	const quote = (await api.post(`/customer/${id}/change-quote`, { quantity: 2, mode: "now_prorated" }).expect(200)).body;
	return { id, send: () => api.post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated", quoteId: quote.quoteId }) };
}

/** Runs `fn` with the billing node's checkout schedule replaced by `schedule` (its actions and the sweep use it). */
async function withSchedule<T>(schedule: Schedule<number>, fn: () => Promise<T>): Promise<T> {
	const real = deps.checkouts;
	deps.checkouts = schedule;
	try {
		return await fn();
	} finally {
		deps.checkouts = real;
	}
}

/** Sweeps, as the timer would, until `done`; fails after `ms`. */
async function sweepUntil(done: () => Promise<boolean>, what: string, ms: number): Promise<void> {
	for (const deadline = Date.now() + ms; !(await done()); await sleep(200)) {
		if (Date.now() > deadline) throw new Error(`${what} within ${ms / 1000} s`);
		await recoverCheckouts(deps);
	}
}

const inFlight = async (id: number) => Boolean((await deps.db.customers.findById(id).lean())?.changeInFlight);

/** The sweep settles the lost change (nothing charged, nothing changed), and the customer can change again. */
async function settledAndFree(id: number) {
	await sweepUntil(async () => !(await inFlight(id)), `customer ${id}: its change was not settled`, GRACE_MS + 8000);
	expect((await api.get(`/customer/${id}`).expect(200)).body).toMatchObject({ quantity: 1 });
	loseCharges = false;
	try {
		expect((await api.post(`/customer/${id}/change`, { quantity: 2, mode: "now_prorated" })).status).toBe(200);
	} finally {
		loseCharges = true;
	}
}

test("When a change is listed and marked between the sweep's reading of the customer and its removal of the customer's checkout listing in the same slot, then the sweep still settles the change", async () => {
	const { id, send } = await subscriberAtSlotStart();
	const real = deps.checkouts;
	let sent: number | null = null;
	// The sweep found the checkout done; before its removal lands, the change is listed (already there) and marked.
	const schedule: Schedule<number> = {
		...real,
		remove: async (customerId, at, listedAt) => {
			if (customerId === id && sent === null) sent = (await send()).status;
			return real.remove(customerId, at, listedAt);
		},
	};

	const removed = async () => sent !== null;
	await withSchedule(schedule, () => sweepUntil(removed, "the sweep did not remove the checkout's listing", GRACE_MS + 5000));
	expect(sent).toBeGreaterThanOrEqual(500);
	expect(await inFlight(id)).toBe(true);

	await settledAndFree(id);
}, 40_000);

test("When a change is listed before the sweep removes the customer's checkout listing in the same slot and marked after the sweep is done, then the sweep still settles the change", async () => {
	const { id, send } = await subscriberAtSlotStart();
	const real = deps.checkouts;
	// The checkout's listing is due before the change is sent: the sweep reads it at the change's add.
	const due = async () =>
		(await real.due(new Date(Date.now() - GRACE_MS), new Date(), { moveCursor: false })).some(listing => listing.id === id);
	for (const deadline = Date.now() + GRACE_MS + 5000; !(await due()); await sleep(100))
		if (Date.now() > deadline) throw new Error("the checkout's listing did not come due");
	let swept = false;
	// The change's add lands, then a whole sweep runs (it finds the checkout done and removes the listing), then the mark.
	const schedule: Schedule<number> = {
		...real,
		add: async (customerId, at) => {
			await real.add(customerId, at);
			if (customerId !== id || swept) return;
			swept = true;
			await recoverCheckouts(deps);
		},
	};

	const sent = await withSchedule(schedule, send);
	expect(swept).toBe(true);
	expect(sent.status).toBeGreaterThanOrEqual(500);
	expect(await inFlight(id)).toBe(true);

	await settledAndFree(id);
}, 40_000);
