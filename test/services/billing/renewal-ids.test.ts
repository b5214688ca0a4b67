// A renewal batch whose transaction ids another transaction already holds: what
// a database that lost its last writes in a crash leaves (the id sequence back
// before a block it had handed out, so the block is handed out again). Each
// renewal must still be recorded, with an id of its own, before its customer
// moves on: a customer is never billed a period that no transaction shows, and
// the lists show each transaction once.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, submitCheckout } from "../../factories/checkout";
import { everyPage } from "../../factories/list-pages";
import { advanceClock, bearer } from "../../factories/merchant";
import { startApp, type TestApp, uniqueDatabaseName } from "../../setup/app";

const database = uniqueDatabaseName();
let app: TestApp;

afterAll(() => app?.stop());

test("When a renewal batch is given ids its account's first charges hold (the id sequence set back, as a crash losing its last writes leaves it), then every renewal is still recorded under an id of its own and each customer's periods match its charges", async () => {
	// Arrange: three subscribers, then the app restarted on a sequence set back to its start.
	app = await startApp({ database });
	const shop = await createShop(app);
	const customers: number[] = [];
	for (let i = 0; i < 3; i++) {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.visa });
		customers.push(res.body.customerId as number);
	}
	await app.stop();
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	try {
		const billing = client.db(databaseNameFor("billing", process.env.MONGO_URL!));
		await billing.collection<{ _id: string; next: number }>("sequences").updateOne({ _id: "transactions" }, { $set: { next: 1 } });
		app = await startApp({ database });

		// Act: a month later, the renewals.
		const run = await advanceClock(app, shop, 31);

		// Assert
		expect(run.body).toMatchObject({ charged: 3, declined: 0 });
		for (const id of customers) {
			const transactions = (await app.http().get(`/api/customer/${id}/transactions`).set(bearer(shop)).expect(200)).body.data;
			expect(transactions.map((t: { type: string; status: string }) => `${t.type} ${t.status}`).sort()).toEqual([
				"RENEWAL APPROVED",
				"SUBSCRIPTION_START APPROVED",
			]);
		}
		const ids = (await billing.collection<{ _id: number }>("transactions").find({}).toArray()).map(t => t._id);
		expect(new Set(ids).size).toBe(6);
		// The merchant's list shows each once: the ids the batch listed before it took new ones name other transactions.
		const listed = await everyPage<{ id: number }>(app, shop, "/api/transactions");
		expect(listed.map(t => t.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
	} finally {
		await client.close();
	}
});
