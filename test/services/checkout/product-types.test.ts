// What each billing kind does at checkout, read back exactly as the spec's
// Customer and Transaction tables show them. The webhooks each kind sends are
// tested in test/services/billing/webhook-flows.test.ts.
import { DateTime } from "luxon";
import { CARDS, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp();
	shop = await createShop(app);
});
afterAll(() => app.stop());

const CUSTOMER_FIELDS = [
	"id",
	"accountId",
	"email",
	"name",
	"lastName",
	"status",
	"productId",
	"subscriptionTimestamp",
	"nextRenewalTimestamp",
	"lastTimeBilled",
	"unsubscriptionTimestamp",
	"renewalActive",
	"attempts",
	"cardBin",
	"cardType",
	"cardExpiredTime",
	// Our additions (docs/subscriptions.md): seats, credit, a change waiting for the period's end, a pause.
	"quantity",
	"credit",
	"pendingChange",
	"pause",
	// The coupon in force (docs/coupons.md).
	"coupon",
	// A cancellation at the period's end (docs/subscriptions.md#cancel-at-the-periods-end).
	"cancelAt",
].sort();
const TRANSACTION_FIELDS = [
	"id",
	"accountId",
	"timestamp",
	"success",
	"type",
	"amount",
	"productId",
	"transactionId",
	"midId",
	"midName",
	"currencyId",
	"refundStatus",
	"status",
	"paymentMethod",
	// Our additions (docs/recovery.md): why a charge was declined.
	"declineReason",
	"declineCategory",
	// The processor's own id of the operation (issue 23).
	"processorReference",
	// How the buyer was authenticated (3-D Secure, docs/authentication.md).
	"authentication",
	// What the customer's credit paid of a renewal (docs/subscriptions.md).
	"creditApplied",
	// A coupon's discount on the charge (docs/coupons.md).
	"discount",
].sort();
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;

const local = (text: string) => DateTime.fromISO(text, { zone: "CET" });

async function checkout(productId: number, card: string = CARDS.visa) {
	const res = await submitCheckout(app, shop, { productId, card });
	const customer = (await app.http().get(`/api/customer/${res.body.customerId}`).set(bearer(shop))).body;
	const listed = (await admin(app).get(`/accounts/${shop.accountId}/customers/${res.body.customerId}/transactions`)).body as {
		id: number;
	}[];
	const transactions = [];
	for (const { id } of listed) transactions.push((await app.http().get(`/api/transaction/${id}`).set(bearer(shop))).body);
	return { answer: res.body, customer, transactions };
}

describe("CHARGE", () => {
	test("When a monthly CHARGE product is bought, then the card is charged now and the next renewal is one calendar month later", async () => {
		// Act
		const { answer, customer, transactions } = await checkout(shop.products.charge);

		// Assert: the customer, field by field as the spec names them.
		expect(answer).toEqual({ code: "OK", message: expect.any(String), customerId: expect.any(Number) });
		expect(Object.keys(customer).sort()).toEqual(CUSTOMER_FIELDS);
		expect(customer).toMatchObject({
			id: answer.customerId,
			accountId: shop.accountId,
			name: "Ada",
			lastName: "Lovelace",
			status: "ACTIVE",
			productId: shop.products.charge,
			unsubscriptionTimestamp: null,
			renewalActive: true,
			attempts: 0,
			cardBin: "424242",
			cardType: "visa",
			cardExpiredTime: "1234",
		});
		expect(customer.subscriptionTimestamp).toMatch(LOCAL);
		expect(customer.lastTimeBilled).toMatch(LOCAL);
		const next = local(customer.nextRenewalTimestamp);
		const start = local(customer.subscriptionTimestamp);
		expect(next.toISODate()).toBe(start.plus({ months: 1 }).toISODate());

		// Assert: the transaction.
		expect(transactions).toHaveLength(1);
		expect(Object.keys(transactions[0]).sort()).toEqual(TRANSACTION_FIELDS);
		expect(transactions[0]).toMatchObject({
			accountId: shop.accountId,
			success: true,
			type: "SUBSCRIPTION_START",
			amount: 9.99,
			productId: shop.products.charge,
			transactionId: expect.any(Number),
			processorReference: expect.stringMatching(/^sbx_[0-9a-f]{24}$/),
			midId: expect.any(Number),
			midName: expect.stringMatching(/^MID [AB]$/),
			currencyId: 978,
			refundStatus: "REFUNDABLE",
			status: "APPROVED",
			paymentMethod: "visa",
			authentication: { version: null, outcome: "NOT_REQUIRED", eci: null },
		});
		expect(transactions[0].timestamp).toMatch(LOCAL);
	});

	test("When a one-off CHARGE product is bought, then nothing renews", async () => {
		const { customer, transactions } = await checkout(shop.products.oneOff);

		expect(customer).toMatchObject({ status: "ACTIVE", nextRenewalTimestamp: null, renewalActive: false });
		expect(transactions[0]).toMatchObject({ amount: 25, type: "SUBSCRIPTION_START" });
	});
});

describe("PREAUTHORIZE", () => {
	test("When a PREAUTHORIZE product is bought, then a hold is placed, nothing is billed yet, and the first charge is due when the trial ends", async () => {
		const { customer, transactions } = await checkout(shop.products.preauthorize);

		expect(customer).toMatchObject({ status: "ACTIVE", lastTimeBilled: null, renewalActive: true });
		expect(local(customer.nextRenewalTimestamp).toISODate()).toBe(local(customer.subscriptionTimestamp).plus({ days: 7 }).toISODate());
		expect(transactions).toEqual([
			expect.objectContaining({
				type: "PREAUTHORIZATION",
				amount: 19.99,
				status: "APPROVED",
				success: true,
				refundStatus: "NOT_REFUNDABLE",
			}),
		]);
	});

	test("When the hold is declined, then PAYMENT_DECLINED", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.preauthorize, card: CARDS.insufficientFunds });

		expect(res.body.code).toBe("PAYMENT_DECLINED");
	});
});

describe("SCHEDULE", () => {
	test("When a SCHEDULE product is bought, then nothing is charged now and the first charge is scheduled after the trial", async () => {
		const { customer, transactions } = await checkout(shop.products.schedule);

		expect(customer).toMatchObject({ status: "ACTIVE", lastTimeBilled: null, renewalActive: true });
		expect(local(customer.nextRenewalTimestamp).toISODate()).toBe(local(customer.subscriptionTimestamp).plus({ days: 14 }).toISODate());
		expect(transactions).toEqual([]);
	});

	test("When a card that the processor would decline subscribes to a SCHEDULE product, then it is OK now: only verification runs at checkout", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.schedule, card: CARDS.insufficientFunds });

		expect(res.body.code).toBe("OK");
	});
});
