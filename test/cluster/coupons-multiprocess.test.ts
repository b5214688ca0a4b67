// A coupon's redemption limit with two checkout nodes, each a process of its
// own over a real NATS server (docs/coupons.md#limits-and-concurrency): a
// burst of concurrent checkouts with one promotion code, some of them with a
// card that is declined, against maxRedemptions = k. Exactly k subscriptions
// pay with the discount; a declined one gives its redemption back.

import { serviceNodes } from "../factories/billing-nodes";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../factories/checkout";
import { admin, bearer } from "../factories/merchant";
import { startApp, type TestApp } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

const CHECKOUT_NODES = ["checkout-1", "checkout-2"];
const LIMIT = 7;
const BURST = 40;
/** Every fifth checkout's card is declined: its redemption, if it took one, is given back. */
const DECLINED_EVERY = 5;

let nats: NatsServer;
let app: TestApp;
const checkoutNodes = serviceNodes("checkout");

beforeAll(async () => {
	nats = await startNats();
	app = await startApp({ env: { TRANSPORTER: nats.url }, services: ["gateway", "accounts", "sessions", "payments", "billing"] });
	for (const nodeId of CHECKOUT_NODES) checkoutNodes.start(nodeId);
	await checkoutNodes.waitFor(app.broker, CHECKOUT_NODES);
}, 90_000);

afterAll(async () => {
	checkoutNodes.killAll();
	await app?.stop();
	await nats?.stop();
});

/** BURST checkouts at once with the code; every `declinedEvery`-th card is declined (0: none). */
function burst(shop: Shop, code: string, declinedEvery: number) {
	return Promise.all(
		Array.from({ length: BURST }, (_, i) =>
			submitCheckout(app, shop, {
				productId: shop.products.charge,
				email: uniqueEmail(),
				card: declinedEvery && i % declinedEvery === declinedEvery - 1 ? CARDS.insufficientFunds : CARDS.visa,
				extra: { promotionCode: code.toLowerCase() },
			}),
		),
	);
}

async function createCoupon(shop: Shop, code: string) {
	const body = { code, percentOff: 10, duration: "once", maxRedemptions: LIMIT };
	return (await admin(app).post(`/accounts/${shop.accountId}/coupons`, body).expect(201)).body as { id: number };
}

const redeemed = async (shop: Shop, id: number) =>
	((await admin(app).get(`/accounts/${shop.accountId}/coupons`).expect(200)).body as { id: number; redeemed: number }[]).find(
		c => c.id === id,
	)!.redeemed;

describe("A coupon's limit with two checkout nodes", () => {
	test("When a burst of checkouts on two checkout nodes uses a promotion code limited to k, then exactly k pay with the discount, the others are refused as used up, and the coupon counts k", async () => {
		// Arrange
		const shop = await createShop(app);
		const coupon = await createCoupon(shop, "BURST");

		// Act
		const answers = await burst(shop, "BURST", 0);

		// Assert: k paid with 1.00 off 9.99, each recorded with its discount; every other one used up.
		const paid = answers.filter(a => a.body.code === "OK");
		expect(paid).toHaveLength(LIMIT);
		expect(answers.filter(a => a.body.code !== "OK").map(a => a.body.code)).toEqual(Array(BURST - LIMIT).fill("COUPON_USED_UP"));
		expect(await redeemed(shop, coupon.id)).toBe(LIMIT);
		for (const a of paid) {
			expect(a.body.discount).toEqual({ couponId: coupon.id, code: "BURST", amount: 1 });
			const [charge] = (await app.http().get(`/api/customer/${a.body.customerId}/transactions`).set(bearer(shop))).body.data;
			expect(charge).toMatchObject({ type: "SUBSCRIPTION_START", amount: 8.99, discount: { couponId: coupon.id, amount: 1 } });
		}
	}, 120_000);

	test("When some checkouts of the burst are declined, then their redemptions are given back: the coupon counts only those paid, and later checkouts fill it to exactly k", async () => {
		// Arrange
		const shop = await createShop(app);
		const coupon = await createCoupon(shop, "DECLINES");

		// Act: a burst with declined cards, then checkouts one by one until the code is used up.
		const answers = await burst(shop, "DECLINES", DECLINED_EVERY);
		const paidInBurst = answers.filter(a => a.body.code === "OK").length;
		const countedAfterBurst = await redeemed(shop, coupon.id);
		let paidAfter = 0;
		for (;;) {
			const next = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: "DECLINES" } });
			if (next.body.code !== "OK") {
				expect(next.body.code).toBe("COUPON_USED_UP");
				break;
			}
			paidAfter++;
		}

		// Assert: a declined checkout held a redemption only while it paid, so the burst may have refused some as used
		// up; none stays held, and in all exactly k paid with the code.
		expect(answers.map(a => a.body.code).filter(c => !["OK", "COUPON_USED_UP", "PAYMENT_DECLINED"].includes(c))).toEqual([]);
		expect(paidInBurst).toBeLessThanOrEqual(LIMIT);
		expect(countedAfterBurst).toBe(paidInBurst);
		expect(paidInBurst + paidAfter).toBe(LIMIT);
		expect(await redeemed(shop, coupon.id)).toBe(LIMIT);
	}, 120_000);
});
