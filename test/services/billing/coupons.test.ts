// Coupons (docs/coupons.md) over HTTP: an operator's coupons, a buyer's promotion code and a session's coupon at
// checkout, a customer's coupon through its renewals (the sandbox test clock), and every refusal's documented code.
// A test that moves the clock has its own shop (the clock is the account's now and only moves forward), and moves it to
// its customer's own renewals.
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { clockToRenewalOf } from "../../factories/test-clock";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "notifications", "metrics"] });
	shop = await createShop(app);
});
afterAll(async () => {
	await app.stop();
});

let codes = 0;
const newCode = (prefix = "SAVE") => `${prefix}${Date.now().toString(36)}${codes++}`.toUpperCase();
const createCoupon = async (body: object, who: Shop = shop) =>
	(
		await admin(app)
			.post(`/accounts/${who.accountId}/coupons`, { code: newCode(), ...body })
			.expect(201)
	).body;
const customer = async (id: number, who: Shop = shop) => (await app.http().get(`/api/customer/${id}`).set(bearer(who)).expect(200)).body;
const transactionsOf = async (id: number, who: Shop = shop) =>
	(await app.http().get(`/api/customer/${id}/transactions`).set(bearer(who)).expect(200)).body.data as {
		type: string;
		amount: number;
		status: string;
		discount: { couponId: number; code: string | null; amount: number } | null;
	}[];
const couponById = async (id: number, who: Shop = shop) =>
	((await admin(app).get(`/accounts/${who.accountId}/coupons`).expect(200)).body as { id: number; redeemed: number }[]).find(
		c => c.id === id,
	)!;

describe("An operator's coupons", () => {
	test("When an operator creates, lists and deactivates a coupon, then each answer shows it, and a code is unique per account whatever its case", async () => {
		// Act
		const created = await createCoupon({ percentOff: 20, duration: "repeating", durationInPeriods: 3, maxRedemptions: 5 });
		const again = await admin(app).post(`/accounts/${shop.accountId}/coupons`, {
			code: created.code.toLowerCase(),
			percentOff: 5,
			duration: "once",
		});
		const deactivated = await admin(app).post(`/accounts/${shop.accountId}/coupons/${created.id}/deactivate`).expect(200);

		// Assert
		expect(created).toMatchObject({
			percentOff: 20,
			amountOff: null,
			duration: "repeating",
			durationInPeriods: 3,
			maxRedemptions: 5,
			redeemed: 0,
			active: true,
		});
		expect(again.status).toBe(409);
		expect(deactivated.body.active).toBe(false);
		expect((await couponById(created.id)).redeemed).toBe(0);
	});

	test("When a coupon is sent with both kinds of discount, none, a repeating one without periods, a past redeemBy or another account's product, then 400, 409 or 404 and nothing is stored", async () => {
		const post = (body: object) => admin(app).post(`/accounts/${shop.accountId}/coupons`, { code: newCode(), ...body });
		const before = (await admin(app).get(`/accounts/${shop.accountId}/coupons`).expect(200)).body;
		expect((await post({ percentOff: 10, amountOff: 1, currency: "EUR", duration: "once" })).status).toBe(400);
		expect((await post({ duration: "once" })).status).toBe(400);
		expect((await post({ percentOff: 10, duration: "repeating" })).status).toBe(400);
		expect((await post({ amountOff: 1.005, currency: "EUR", duration: "once" })).status).toBe(400);
		expect((await post({ percentOff: 101, duration: "once" })).status).toBe(400);
		expect((await post({ percentOff: "10", duration: "once" })).status).toBe(400);
		expect((await post({ percentOff: 10, duration: "once", redeemBy: "2020-01-01T00:00:00Z" })).status).toBe(409);
		expect((await post({ percentOff: 10, duration: "once", productIds: [999_999_999] })).status).toBe(404);
		expect((await admin(app).get(`/accounts/${shop.accountId}/coupons`).expect(200)).body).toEqual(before);
	});
});

describe("A promotion code at checkout", () => {
	test("When a buyer pays with a 20 % code for 2 periods, then the first payment and one renewal are discounted, the third charge is at list price, and the customer counts the periods", async () => {
		// Arrange
		const own = await createShop(app);
		const coupon = await createCoupon({ percentOff: 20, duration: "repeating", durationInPeriods: 2 }, own);

		// Act
		const paid = await submitCheckout(app, own, { productId: own.products.charge, extra: { promotionCode: coupon.code.toLowerCase() } });

		// Assert: 9.99 less 2.00 (20 % of 999 is 199.8, rounded half up to 200)
		expect(paid.body).toMatchObject({ code: "OK", discount: { couponId: coupon.id, code: coupon.code, amount: 2 } });
		const id = paid.body.customerId as number;
		expect((await customer(id, own)).coupon).toMatchObject({ couponId: coupon.id, periodsLeft: 1, percentOff: 20 });
		expect((await couponById(coupon.id, own)).redeemed).toBe(1);

		// Act: two renewals
		await clockToRenewalOf(app, own, id);
		await clockToRenewalOf(app, own, id);

		// Assert
		const charges = (await transactionsOf(id, own)).filter(t => t.status === "APPROVED").reverse();
		expect(charges.map(t => [t.type, t.amount, t.discount?.amount ?? null])).toEqual([
			["SUBSCRIPTION_START", 7.99, 2],
			["RENEWAL", 7.99, 2],
			["RENEWAL", 9.99, null],
		]);
		expect((await customer(id, own)).coupon.periodsLeft).toBe(0);
	});

	test("When a buyer's payment is declined, then its redemption is given back and the code works again", async () => {
		// Arrange
		const coupon = await createCoupon({ amountOff: 1.5, currency: "EUR", duration: "once", maxRedemptions: 1 });

		// Act
		const declined = await submitCheckout(app, shop, {
			productId: shop.products.charge,
			card: CARDS.insufficientFunds,
			extra: { promotionCode: coupon.code },
		});
		const paid = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: coupon.code } });
		const third = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: coupon.code } });

		// Assert
		expect(declined.body.code).toBe("PAYMENT_DECLINED");
		expect(paid.body).toMatchObject({ code: "OK", discount: { amount: 1.5 } });
		expect(third.body.code).toBe("COUPON_USED_UP");
		expect((await couponById(coupon.id)).redeemed).toBe(1);
	});

	test("When a code is unknown, another account's, deactivated, expired, for another product or another currency, then each has its code and nothing is charged", async () => {
		// Arrange
		const other = await createShop(app);
		const elsewhere = await createCoupon({ percentOff: 10, duration: "once" }, other);
		const inactive = await createCoupon({ percentOff: 10, duration: "once" });
		await admin(app).post(`/accounts/${shop.accountId}/coupons/${inactive.id}/deactivate`).expect(200);
		const expiring = await createCoupon({ percentOff: 10, duration: "once", redeemBy: new Date(Date.now() + 1500).toISOString() });
		const forSchedule = await createCoupon({ percentOff: 10, duration: "once", productIds: [shop.products.schedule] });
		const inUsd = await createCoupon({ amountOff: 1, currency: "USD", duration: "once" });
		await new Promise(resolve => setTimeout(resolve, 1600));
		const tryCode = async (code: string) =>
			(await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: code } })).body.code;

		// Act and assert
		expect(await tryCode("NO-SUCH-CODE")).toBe("COUPON_NOT_FOUND");
		expect(await tryCode(elsewhere.code)).toBe("COUPON_NOT_FOUND");
		expect(await tryCode(inactive.code)).toBe("COUPON_INACTIVE");
		expect(await tryCode(expiring.code)).toBe("COUPON_EXPIRED");
		expect(await tryCode(forSchedule.code)).toBe("COUPON_NOT_FOR_PRODUCT");
		expect(await tryCode(inUsd.code)).toBe("COUPON_WRONG_CURRENCY");
	});

	test("When the merchant attaches a forever coupon to the session, then the checkout and every renewal are discounted; a 100 % coupon charges nothing and records a 0 charge", async () => {
		// Arrange
		const forever = await createCoupon({ amountOff: 3, currency: "EUR", duration: "forever" });
		const free = await createCoupon({ percentOff: 100, duration: "once" });
		const session = (query: string) => app.http().post(`/api/session?domain=shop.example.com&${query}`).set(bearer(shop)).expect(200);

		// Act
		const paid = await submitCheckout(app, shop, {
			productId: shop.products.charge,
			sessionId: (await session(`couponId=${forever.id}`)).text,
		});
		const freeFirst = await submitCheckout(app, shop, {
			productId: shop.products.charge,
			sessionId: (await session(`promotionCode=${free.code}`)).text,
		});
		const both = await app
			.http()
			.post(`/api/session?domain=shop.example.com&couponId=${forever.id}&promotionCode=${free.code}`)
			.set(bearer(shop));

		// Assert
		expect(paid.body).toMatchObject({ code: "OK", discount: { couponId: forever.id, amount: 3 } });
		expect((await customer(paid.body.customerId)).coupon).toMatchObject({
			duration: "forever",
			periodsLeft: null,
			amountOff: 3,
			currency: "EUR",
		});
		expect(freeFirst.body).toMatchObject({ code: "OK", discount: { amount: 9.99 } });
		expect((await transactionsOf(freeFirst.body.customerId))[0]).toMatchObject({
			type: "SUBSCRIPTION_START",
			amount: 0,
			status: "APPROVED",
		});
		expect(both.status).toBe(400);
	});
});

describe("A change of a discounted subscription", () => {
	test("When a customer that paid half price adds a second seat right away, then the change charges about half a seat, not a seat and a half, and the next renewal two seats at half price", async () => {
		// Arrange: 50 % for ever, paid 4.99 (9.99 less 5.00).
		const own = await createShop(app);
		const coupon = await createCoupon({ percentOff: 50, duration: "forever" }, own);
		const paid = await submitCheckout(app, own, { productId: own.products.charge, extra: { promotionCode: coupon.code } });
		const id = paid.body.customerId as number;

		// Act
		const changed = await app.http().post(`/api/customer/${id}/change`).set(bearer(own)).send({ quantity: 2, mode: "now_prorated" });
		await clockToRenewalOf(app, own, id);

		// Assert: two seats for (almost) the whole period are worth 19.98 less half: 9.99; 4.99 was paid, so about 5.00 is due.
		expect(changed.status).toBe(200);
		expect(changed.body.transaction.amount).toBeGreaterThan(4.9);
		expect(changed.body.transaction.amount).toBeLessThanOrEqual(5);
		const renewal = (await transactionsOf(id, own)).find(t => t.type === "RENEWAL")!;
		expect(renewal).toMatchObject({ amount: 9.99, discount: { couponId: coupon.id, amount: 9.99 } });
	});
});

describe("A coupon on an existing customer", () => {
	test("When the merchant attaches a coupon, then the next renewal is discounted; once removed, the one after is not", async () => {
		// Arrange
		const own = await createShop(app);
		const { body } = await submitCheckout(app, own, { productId: own.products.charge });
		const id = body.customerId as number;
		const coupon = await createCoupon({ percentOff: 50, duration: "forever" }, own);
		const attach = (payload: object) => app.http().post(`/api/customer/${id}/coupon`).set(bearer(own)).send(payload);

		// Act
		const attached = await attach({ promotionCode: coupon.code });
		const repeated = await attach({ couponId: coupon.id });
		await clockToRenewalOf(app, own, id);
		const removed = await app.http().delete(`/api/customer/${id}/coupon`).set(bearer(own));
		await clockToRenewalOf(app, own, id);

		// Assert: 50 % of 9.99 is 499.5, rounded half up to 5.00 off
		expect(attached.status).toBe(200);
		expect(attached.body.coupon).toMatchObject({ couponId: coupon.id, periodsLeft: null });
		expect(repeated.body).toEqual(attached.body);
		expect((await couponById(coupon.id, own)).redeemed).toBe(1);
		expect(removed.body.coupon).toBeNull();
		const charges = (await transactionsOf(id, own)).filter(t => t.status === "APPROVED").reverse();
		expect(charges.map(t => [t.amount, t.discount?.amount ?? null])).toEqual([
			[9.99, null],
			[4.99, 5],
			[9.99, null],
		]);
	});

	test("When the request names no coupon, both, an unknown customer or an unknown coupon, then 400, 400, 404 and 404", async () => {
		const { body } = await submitCheckout(app, shop, { productId: shop.products.charge });
		const attach = (id: number | string, payload: object) => app.http().post(`/api/customer/${id}/coupon`).set(bearer(shop)).send(payload);
		expect((await attach(body.customerId, {})).status).toBe(400);
		expect((await attach(body.customerId, { couponId: 1, promotionCode: "ABC" })).status).toBe(400);
		expect((await attach(999_999_999, { promotionCode: "ABC" })).status).toBe(404);
		expect((await attach(body.customerId, { promotionCode: "NOPE-NOPE" })).status).toBe(404);
	});
});
