// POST /api/unsubscribe/{customerId}, as the spec's state table and the issue describe it.
import { type Collection, MongoClient } from "mongodb";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { setWallClock } from "../../factories/wall-clock";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	// The checkout recovery's sweep stays away: a test below moves the clock past its grace period on purpose.
	app = await startApp({
		services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds"],
		env: { REFUND_RECOVERY_INTERVAL_MS: "3600000" },
	});
	shop = await createShop(app);
});
afterAll(() => app.stop());

const unsubscribe = (customerId: number | string, who = shop) => app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(who));
const customer = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop))).body;
/** Billing's customers collection, written straight as another billing node's renewal engine writes it. */
async function withBillingCustomers<T>(work: (customers: Collection<{ _id: number }>) => Promise<T>): Promise<T> {
	const url = process.env.MONGO_URL!;
	const client = await MongoClient.connect(url);
	try {
		return await work(client.db(databaseNameFor("billing", url)).collection<{ _id: number }>("customers"));
	} finally {
		await client.close();
	}
}
const transactionsOf = async (customerId: number) =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;

describe("POST /api/unsubscribe/{customerId}", () => {
	test("When an active customer is unsubscribed, then UNSUBSCRIBED, renewals off, the date set, and past transactions untouched", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;

		// Act
		const res = await unsubscribe(customerId);

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ success: true, message: `Customer ${customerId} unsubscribed` });
		expect(await customer(customerId)).toMatchObject({
			status: "UNSUBSCRIBED",
			renewalActive: false,
			nextRenewalTimestamp: null,
			unsubscriptionTimestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
		});
		expect(await transactionsOf(customerId)).toEqual([expect.objectContaining({ type: "SUBSCRIPTION_START", refundStatus: "REFUNDABLE" })]);
	});

	test("When the customer is already unsubscribed, then success again and nothing changes", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		await unsubscribe(customerId);
		const before = await customer(customerId);

		const again = await unsubscribe(customerId);

		expect(again.body).toEqual({ success: true, message: `Customer ${customerId} unsubscribed` });
		expect(await customer(customerId)).toEqual(before);
	});

	test("When the customer does not exist or is another account's, then success false 'Customer not found with ID: <id>'", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const other = await createMerchant(app);

		const missing = await unsubscribe(987654);
		const foreign = await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(other));

		expect(missing.body).toEqual({ success: false, message: "Customer not found with ID: 987654" });
		expect(foreign.body).toEqual({ success: false, message: `Customer not found with ID: ${customerId}` });
		expect((await customer(customerId)).status).toBe("ACTIVE");
	});

	test("When a customer in a PREAUTHORIZE trial unsubscribes, then the hold is released: the hold shows VOIDED and the processor voided it", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.preauthorize })).body;
		const [hold] = await transactionsOf(customerId);

		// Act
		await unsubscribe(customerId);

		// Assert
		const [after] = await transactionsOf(customerId);
		expect(after).toMatchObject({ id: hold.id, type: "PREAUTHORIZATION", refundStatus: "VOIDED" });
		const voids = (await admin(app).get("/sandbox/operations?kind=void")).body as { outcome: { status: string } }[];
		expect(voids.length).toBeGreaterThanOrEqual(1);
	});

	test("When the buyer subscribes again after unsubscribing, then the duplicate check lets them", async () => {
		const email = uniqueEmail();
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, email })).body;
		await unsubscribe(customerId);

		const again = await submitCheckout(app, shop, { productId: shop.products.charge, email });

		expect(again.body.code).toBe("OK");
	});

	test("When the id is not an integer or a body is sent, then 400", async () => {
		const badId = await unsubscribe("x1");
		const withBody = await app.http().post("/api/unsubscribe/1").set(bearer(shop)).send({ reason: "x" });

		expect(badId.status).toBe(400);
		expect(withBody.status).toBe(400);
	});

	test("When a declined customer is unsubscribed, then it is UNSUBSCRIBED too", async () => {
		const email = uniqueEmail();
		await submitCheckout(app, shop, { productId: shop.products.charge, email, card: CARDS.insufficientFunds });
		const [declined] = (await admin(app).get(`/accounts/${shop.accountId}/customers?email=${encodeURIComponent(email)}`)).body;

		const res = await unsubscribe(declined.id);

		expect(res.body.success).toBe(true);
		expect((await customer(declined.id)).status).toBe("UNSUBSCRIBED");
	});

	test("When a renewal is in flight on another billing node, then the unsubscribe answers only after it ends, and no renewal can start after the answer", async () => {
		// Arrange: another billing node holds this customer's renewal lease, as its renewal engine writes it when it claims one.
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const otherNode = { owner: "billing-node-b", until: new Date(Date.now() + 10_000) };
		await withBillingCustomers(customers => customers.updateOne({ _id: customerId }, { $set: { renewalLease: otherNode } }));

		// Act
		let answered = false;
		const pending = unsubscribe(customerId).then(res => {
			answered = true;
			return res;
		});
		await new Promise(resolve => setTimeout(resolve, 300));
		const answeredWhileRenewing = answered;
		// That node's renewal ends: it releases its lease, as the engine does.
		await withBillingCustomers(customers =>
			customers.updateOne({ _id: customerId, "renewalLease.owner": otherNode.owner }, { $set: { renewalLease: null } }),
		);
		const res = await pending;
		const clock = await admin(app).post(`/accounts/${shop.accountId}/clock`, {
			advanceTo: new Date(Date.now() + 40 * 86_400_000).toISOString(),
		});

		// Assert
		expect(answeredWhileRenewing).toBe(false);
		expect(res.body).toEqual({ success: true, message: `Customer ${customerId} unsubscribed` });
		expect(clock.status).toBe(200);
		expect((await transactionsOf(customerId)).map((t: { type: string }) => t.type)).toEqual(["SUBSCRIPTION_START"]);
		expect(await customer(customerId)).toMatchObject({ status: "UNSUBSCRIBED", renewalActive: false });
	});

	test("When a checkout died after opening the subscription, then its PENDING customer can be unsubscribed once 10 minutes have passed, not before", async () => {
		// Arrange: a checkout node ran step 4 (the checkout service's own call) and died.
		const { customerId } = await app.broker.call<{ customerId: number }, object>("billing.openSubscription", {
			accountId: shop.accountId,
			attemptId: "co_died_after_opening",
			environment: "sandbox",
			product: { id: shop.products.charge, allowMultipleSubscriptions: false },
			buyer: { email: uniqueEmail(), name: "Ada", lastName: "" },
			card: { cardToken: "card_lost", fingerprint: "f".repeat(64), bin: "424242", last4: "4242", brand: "visa", expiry: "1234" },
			mid: { id: shop.mids[0], name: "MID A" },
			sessionId: "6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f",
			additionalData: null,
		});
		const early = await unsubscribe(customerId);
		setWallClock(Date.now() + 11 * 60 * 1000);

		// Act
		const late = await unsubscribe(customerId);

		// Assert
		jest.useRealTimers();
		expect(early.body).toEqual({ success: false, message: expect.stringContaining("checkout in progress") });
		expect(late.body).toEqual({ success: true, message: `Customer ${customerId} unsubscribed` });
		expect((await customer(customerId)).status).toBe("UNSUBSCRIBED");
	});
});
