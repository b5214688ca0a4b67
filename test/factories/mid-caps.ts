// What the MID cap tests share (test/cluster/mid-caps.test.ts,
// test/cluster/mid-cap-crash.test.ts): a shop whose first MID is capped,
// checkouts that must be paid with the MID each went to, and a MID's cap
// counter for the month as billing keeps it (mid_caps).
import type { MongoClient } from "mongodb";
import { databaseNameFor } from "../../shared/db.mixin";
import type { TestApp } from "../setup/app";
import { createShop, type Shop, submitCheckout, uniqueEmail } from "./checkout";
import { admin, bearer } from "./merchant";

/** A shop whose first MID weighs 9 of 10 (most checkouts want it) and has room for `room` sales of 9.99. */
export async function cappedShop(app: TestApp, room: number): Promise<Shop> {
	const shop = await createShop(app);
	await admin(app)
		.patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.mids[0]}`, {
			weight: 9,
			monthlyCap: { amount: room * 9.99, currency: "EUR" },
		})
		.expect(200);
	return shop;
}

/** Checkouts `concurrency` at a time, each expected to be paid; answers the MID of each. */
export async function paidCheckouts(app: TestApp, shop: Shop, count: number, concurrency: number): Promise<number[]> {
	const mids: number[] = [];
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < count) {
				next++;
				const res = await submitCheckout(app, shop, { productId: shop.products.charge, email: uniqueEmail() });
				if (res.body.code !== "OK") throw new Error(`checkout: ${res.text}`);
				const [tx] = (await app.http().get(`/api/customer/${res.body.customerId}/transactions`).set(bearer(shop))).body.data;
				mids.push(tx.midId);
			}
		}),
	);
	return mids;
}

export interface CapCounter {
	taken: Record<string, number>;
	reservations: Record<string, unknown>;
}

/** The MID's cap counter (a test's MIDs have one month's). */
export function capCounter(client: MongoClient, midId: number): Promise<CapCounter | null> {
	const counters = client.db(databaseNameFor("billing", process.env.MONGO_URL!)).collection<{ _id: string }>("mid_caps");
	return counters.findOne({ _id: { $regex: `^${midId}:` } }) as Promise<CapCounter | null>;
}
