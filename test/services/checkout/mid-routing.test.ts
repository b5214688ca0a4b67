// Which MID takes a checkout and a renewal (docs/disputes.md#routing): weights
// share the checkouts, a monthly cap is never passed by one node, and a
// renewal moves off a MID that is inactive or capped.

import { DateTime } from "luxon";
import { createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, advanceClock, bearer, createPlan } from "../../factories/merchant";
import { clockTo } from "../../factories/test-clock";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing"] });
});
afterAll(() => app.stop());

const setMid = (shop: Shop, midId: number, body: object) =>
	admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${midId}`, body).expect(200);

/** Checkouts of the shop's CHARGE product, `concurrency` at a time; answers each one's MID (null when refused). */
async function checkouts(shop: Shop, count: number, concurrency = 8): Promise<(number | null)[]> {
	const mids: (number | null)[] = [];
	let next = 0;
	const worker = async () => {
		while (next < count) {
			next++;
			const res = await submitCheckout(app, shop, { productId: shop.products.charge, email: uniqueEmail() });
			if (res.body.code !== "OK") {
				mids.push(null);
				continue;
			}
			const [tx] = (await app.http().get(`/api/customer/${res.body.customerId}/transactions`).set(bearer(shop))).body.data;
			mids.push(tx.midId);
		}
	};
	await Promise.all(Array.from({ length: concurrency }, worker));
	return mids;
}

const countOf = (mids: (number | null)[], mid: number | null) => mids.filter(m => m === mid).length;

describe("MID routing", () => {
	test("When two MIDs weigh 3 and 1, then 1,000 checkouts are shared 750 and 250, within 2 %", async () => {
		// Arrange
		const shop = await createShop(app);
		await setMid(shop, shop.mids[0], { weight: 3 });

		// Act
		const mids = await checkouts(shop, 1000, 16);

		// Assert
		expect(countOf(mids, null)).toBe(0);
		expect(Math.abs(countOf(mids, shop.mids[0]) - 750)).toBeLessThanOrEqual(20);
		expect(Math.abs(countOf(mids, shop.mids[1]) - 250)).toBeLessThanOrEqual(20);
	}, 180_000);

	test("When a MID weighs 0, then it takes no checkout; the admin API shows weights and caps", async () => {
		const shop = await createShop(app);
		const updated = await setMid(shop, shop.mids[1], { weight: 0, monthlyCap: { amount: 1000, currency: "EUR" } });

		const mids = await checkouts(shop, 10);

		expect(updated.body).toMatchObject({ weight: 0, monthlyCap: { amount: 1000, currency: "EUR" } });
		expect(countOf(mids, shop.mids[0])).toBe(10);
		const bad = [
			{ weight: -1 },
			{ weight: 1.5 },
			{ weight: "2" },
			{ monthlyCap: { amount: 0, currency: "EUR" } },
			{ monthlyCap: { amount: 10 } },
		];
		for (const body of bad)
			expect((await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.mids[1]}`, body)).status).toBe(400);
	});

	test("When a MID reaches its monthly cap, then it receives nothing more and the other MID takes the rest; with both capped, NO_MERCHANT_ACCOUNT", async () => {
		// Arrange: room for three sales of 9.99 on the first MID.
		const shop = await createShop(app);
		await setMid(shop, shop.mids[0], { monthlyCap: { amount: 30, currency: "EUR" } });

		// Act
		const mids = await checkouts(shop, 20);

		// Assert
		expect(countOf(mids, shop.mids[0])).toBe(3);
		expect(countOf(mids, shop.mids[1])).toBe(17);
		const health = (await admin(app).get(`/accounts/${shop.accountId}/merchant-account-health`).expect(200)).body;
		expect(health.find((h: { midId: number }) => h.midId === shop.mids[0]).month.salesAmount).toEqual({ EUR: 29.97 });

		// Act: the second one capped where it is.
		await setMid(shop, shop.mids[1], { monthlyCap: { amount: 170, currency: "EUR" } });
		const refused = await submitCheckout(app, shop, { productId: shop.products.charge, email: uniqueEmail() });

		// Assert
		expect(refused.body.code).toBe("NO_MERCHANT_ACCOUNT");
	});

	/** Two customers on the shop's first MID (the other weighs 0 meanwhile), of its monthly product or `productId`. */
	async function customersOnFirstMid(shop: Shop, productId = shop.products.charge): Promise<number[]> {
		await setMid(shop, shop.mids[1], { weight: 0 });
		const ids = [];
		for (let i = 0; i < 2; i++) ids.push((await submitCheckout(app, shop, { productId })).body.customerId as number);
		await setMid(shop, shop.mids[1], { weight: 1 });
		return ids;
	}

	/**
	 * A cap counts the sales of the month its charge is made in (the account's now). So that a renewal meets the first
	 * charges in its month: the account's clock on the 2nd of next month, and a weekly plan, renewed on the 9th.
	 */
	async function weeklyOnFirstMid(shop: Shop): Promise<{ customers: number[]; renewed: () => Promise<unknown> }> {
		const second = DateTime.now().setZone("CET").plus({ months: 1 }).set({ day: 2, hour: 12 }).startOf("hour");
		await clockTo(app, shop, second.toJSDate());
		const weekly = await createPlan(app, shop, { amount: 9.99, renewal: { every: 1, unit: "week" } });
		const customers = await customersOnFirstMid(shop, weekly);
		return { customers, renewed: () => clockTo(app, shop, second.plus({ days: 8 }).toJSDate()) };
	}

	const renewalsOf = async (shop: Shop, customerId: number) =>
		(await app.http().get(`/api/customer/${customerId}/transactions`).set(bearer(shop))).body.data.filter(
			(t: { type: string }) => t.type === "RENEWAL",
		);

	test("When a customer's MID is deactivated, then its renewal is charged on another MID of the group, which it keeps", async () => {
		// Arrange
		const shop = await createShop(app);
		const customers = await customersOnFirstMid(shop);
		await setMid(shop, shop.mids[0], { active: false });

		// Act: the first renewal; then the first MID is back, and the second renewal comes.
		await advanceClock(app, shop, 32);
		await setMid(shop, shop.mids[0], { active: true });
		await advanceClock(app, shop, 63);

		// Assert
		for (const customerId of customers) {
			const renewals = await renewalsOf(shop, customerId);
			expect(renewals.map((t: { status: string; midId: number }) => [t.status, t.midId])).toEqual([
				["APPROVED", shop.mids[1]],
				["APPROVED", shop.mids[1]],
			]);
		}
	});

	test("When a customer's MID has no room left under its cap, then its renewal is charged on another MID", async () => {
		// Arrange: the first MID sold 19.98 this month; a renewal of 9.99 would pass 20.
		const shop = await createShop(app);
		const { customers, renewed } = await weeklyOnFirstMid(shop);
		await setMid(shop, shop.mids[0], { monthlyCap: { amount: 20, currency: "EUR" } });

		// Act
		await renewed();

		// Assert
		for (const customerId of customers)
			expect((await renewalsOf(shop, customerId)).map((t: { midId: number }) => t.midId)).toEqual([shop.mids[1]]);
	});

	test("When a customer with 5 seats renews, then its MID's cap counts what the renewal charges (5 × 9.99), not the product's price", async () => {
		// Arrange: one customer left on the first MID, with 5 seats: its renewal is 49.95; the MID may take 40 a month
		// (with this month's first charges, 19.98, counted or not, 9.99 would fit and 49.95 would not).
		const shop = await createShop(app);
		const {
			customers: [customerId, other],
			renewed,
		} = await weeklyOnFirstMid(shop);
		await app.http().post(`/api/unsubscribe/${other}`).set(bearer(shop)).expect(200);
		await app
			.http()
			.post(`/api/customer/${customerId}/change`)
			.set(bearer(shop))
			.send({ quantity: 5, mode: "now_without_proration" })
			.expect(200);
		await setMid(shop, shop.mids[0], { monthlyCap: { amount: 40, currency: "EUR" } });

		// Act
		await renewed();

		// Assert
		expect((await renewalsOf(shop, customerId)).map((t: { midId: number; amount: number }) => [t.midId, t.amount])).toEqual([
			[shop.mids[1], 49.95],
		]);
	});

	test("When every MID of the group is capped, then a renewal is declined merchant_account_unavailable without any processor call, and tried again", async () => {
		// Arrange
		const shop = await createShop(app);
		const {
			customers: [customerId],
			renewed,
		} = await weeklyOnFirstMid(shop);
		await setMid(shop, shop.mids[0], { monthlyCap: { amount: 20, currency: "EUR" } });
		await setMid(shop, shop.mids[1], { monthlyCap: { amount: 1, currency: "EUR" } });

		// Act
		await renewed();

		// Assert
		const [renewal] = await renewalsOf(shop, customerId);
		expect(renewal).toMatchObject({
			status: "DECLINED",
			declineReason: "merchant_account_unavailable",
			declineCategory: "MERCHANT_ACCOUNT",
			transactionId: null,
		});
		expect((await app.http().get(`/api/customer/${customerId}`).set(bearer(shop))).body).toMatchObject({
			status: "ACTIVE",
			renewalActive: true,
		});
	});
});
