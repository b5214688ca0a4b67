// GET /api/refund/{id}: every answer of the spec, partial and full refunds,
// and that no sequence of concurrent or repeated requests refunds more than was paid.
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp({ services: ["gateway", "accounts", "sessions", "checkout", "payments", "billing", "refunds"] });
	shop = await createShop(app);
});
afterAll(() => app.stop());

interface Transaction {
	id: number;
	type: string;
	amount: number;
	refundStatus: string;
}

/** A fresh checkout (paid, held or declined); returns its first transaction. */
async function paidTransaction(productId = shop.products.charge, card: string = CARDS.visa): Promise<Transaction & { customerId: number }> {
	const email = uniqueEmail();
	await submitCheckout(app, shop, { productId, card, email });
	const [customer] = (await admin(app).get(`/accounts/${shop.accountId}/customers?email=${encodeURIComponent(email)}`)).body;
	const [tx] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customer.id}/transactions`)).body;
	return { ...tx, customerId: customer.id };
}

const refund = (id: number | string, query = "", headers: Record<string, string> = {}) =>
	app.http().get(`/api/refund/${id}${query}`).set(bearer(shop)).set(headers);

const transactionsOf = async (customerId: number): Promise<Transaction[]> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;

const readTransaction = async (id: number): Promise<Transaction> => (await app.http().get(`/api/transaction/${id}`).set(bearer(shop))).body;

describe("GET /api/refund/{id}", () => {
	test("When amountToRefund is omitted, then the whole amount is refunded: a REFUNDED transaction with the negative amount, the original REFUNDED, the subscription kept", async () => {
		// Arrange
		const tx = await paidTransaction();

		// Act
		const res = await refund(tx.id);

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ success: true, message: "Refund success with amount 9.99" });
		const all = await transactionsOf(tx.customerId);
		expect(all.map(t => [t.type, t.amount])).toEqual([
			["SUBSCRIPTION_START", 9.99],
			["REFUNDED", -9.99],
		]);
		expect(await readTransaction(tx.id)).toMatchObject({ refundStatus: "REFUNDED" });
		expect(await readTransaction(all[1].id)).toMatchObject({
			type: "REFUNDED",
			amount: -9.99,
			success: true,
			status: "APPROVED",
			refundStatus: "NOT_REFUNDABLE",
		});
		const customer = (await app.http().get(`/api/customer/${tx.customerId}`).set(bearer(shop))).body;
		expect(customer).toMatchObject({ status: "ACTIVE", renewalActive: true });
	});

	test("When partial refunds add up to the amount, then each succeeds, the status stays REFUNDABLE until nothing is left, and then the transaction is not refundable", async () => {
		const tx = await paidTransaction();

		const first = await refund(tx.id, "?amountToRefund=4");
		const afterFirst = await readTransaction(tx.id);
		const second = await refund(tx.id, "?amountToRefund=5.99");
		const third = await refund(tx.id, "?amountToRefund=0.01");

		expect(first.body).toEqual({ success: true, message: "Refund success with amount 4" });
		expect(afterFirst.refundStatus).toBe("REFUNDABLE");
		expect(second.body).toEqual({ success: true, message: "Refund success with amount 5.99" });
		expect(third.body).toEqual({ success: false, message: `This transaction is not refundable ${tx.id}` });
		expect((await readTransaction(tx.id)).refundStatus).toBe("REFUNDED");
	});

	test("When the amount is above what is left to refund, then 'Refund amount is higher than amount in transaction'", async () => {
		const tx = await paidTransaction();
		await refund(tx.id, "?amountToRefund=5");

		const tooMuch = await refund(tx.id, "?amountToRefund=5");
		const aboveOriginal = await refund(tx.id, "?amountToRefund=100");

		expect(tooMuch.body).toEqual({ success: false, message: "Refund amount is higher than amount in transaction" });
		expect(aboveOriginal.body).toEqual({ success: false, message: "Refund amount is higher than amount in transaction" });
	});

	test("When the transaction does not exist or is another account's, then 'Transaction not found with ID: <id>'", async () => {
		const tx = await paidTransaction();
		const other = await createMerchant(app);

		const missing = await refund(987654);
		const foreign = await app.http().get(`/api/refund/${tx.id}`).set(bearer(other));

		expect(missing.body).toEqual({ success: false, message: "Transaction not found with ID: 987654" });
		expect(foreign.body).toEqual({ success: false, message: `Transaction not found with ID: ${tx.id}` });
	});

	test.each([
		["a declined charge", () => paidTransaction(shop.products.charge, CARDS.insufficientFunds)],
		["a pre-authorization hold", () => paidTransaction(shop.products.preauthorize)],
	])("When the transaction is %s, then it is not refundable", async (_, make) => {
		const tx = await make();

		const res = await refund(tx.id);

		expect(res.body).toEqual({ success: false, message: `This transaction is not refundable ${tx.id}` });
	});

	test("When the transaction is itself a refund, then it is not refundable", async () => {
		const tx = await paidTransaction();
		await refund(tx.id, "?amountToRefund=1");
		const refundTx = (await transactionsOf(tx.customerId))[1];

		const res = await refund(refundTx.id);

		expect(res.body).toEqual({ success: false, message: `This transaction is not refundable ${refundTx.id}` });
	});

	test.each(["0", "0.00", "-1", "abc", "1e2", " 1", ""])(
		"When amountToRefund is %p, then 400 naming it and nothing refunded",
		async amount => {
			const tx = await paidTransaction();

			const res = await refund(tx.id, `?amountToRefund=${encodeURIComponent(amount)}`);

			expect(res.status).toBe(400);
			expect(res.body).toEqual({
				error: "BAD_REQUEST",
				status: 400,
				message: "amountToRefund must be a positive decimal number such as 4.99",
			});
			expect(await transactionsOf(tx.customerId)).toHaveLength(1);
		},
	);

	test("When amountToRefund has more decimals than the transaction's currency, then success false with a clear message and nothing refunded", async () => {
		const tx = await paidTransaction();

		const res = await refund(tx.id, "?amountToRefund=1.234");

		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			success: false,
			message: "amountToRefund must be a positive amount with no more decimals than the transaction's currency",
		});
		expect(await transactionsOf(tx.customerId)).toHaveLength(1);
	});

	test("When the id is not an integer, then 400 BAD_REQUEST", async () => {
		const res = await refund("abc");

		expect(res.status).toBe(400);
		expect(res.body.error).toBe("BAD_REQUEST");
	});
});

describe("When the processor refuses a refund", () => {
	test("When the processor declines, then success false, nothing is recorded, and the reserved amount is given back", async () => {
		// Arrange: a charge on the sandbox card whose refunds are declined.
		const tx = await paidTransaction(shop.products.charge, CARDS.refundsDeclined);

		// Act
		const partial = await refund(tx.id, "?amountToRefund=5");
		const whole = await refund(tx.id);

		// Assert: the second, a full refund, still sees all 9.99: the first reservation was given back.
		expect(partial.body).toEqual({ success: false, message: expect.stringContaining("payment processor did not accept it") });
		expect(whole.body).toEqual(partial.body);
		expect(await transactionsOf(tx.customerId)).toHaveLength(1);
		expect((await readTransaction(tx.id)).refundStatus).toBe("REFUNDABLE");
		const refunds = (await admin(app).get("/sandbox/operations?kind=refund&status=DECLINED")).body as { amount: number }[];
		expect(refunds.map(r => r.amount)).toEqual(expect.arrayContaining([500, 999]));
	});
});

describe("Refunds under concurrency and repetition", () => {
	test("When 100 partial refunds of 0.10 race on a 9.99 charge, then exactly 99 succeed and 9.90 is refunded in total", async () => {
		// Arrange
		const tx = await paidTransaction();

		// Act
		const answers = await Promise.all(Array.from({ length: 100 }, () => refund(tx.id, "?amountToRefund=0.10")));

		// Assert
		expect(answers.filter(a => a.body.success)).toHaveLength(99);
		const refunds = (await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED");
		expect(Math.round(refunds.reduce((sum, t) => sum + t.amount, 0) * 100)).toBe(-990);
		expect((await refund(tx.id)).body).toEqual({ success: true, message: "Refund success with amount 0.09" });
	});

	test("When 50 full refunds race, then exactly one succeeds", async () => {
		const tx = await paidTransaction();

		const answers = await Promise.all(Array.from({ length: 50 }, () => refund(tx.id)));

		expect(answers.filter(a => a.body.success)).toHaveLength(1);
		expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED")).toHaveLength(1);
	});

	test("When a request is repeated with the same Idempotency-Key, then it gets the first answer and nothing more is refunded", async () => {
		const tx = await paidTransaction();
		const key = { "Idempotency-Key": `key-${tx.id}` };

		const first = await refund(tx.id, "?amountToRefund=2", key);
		const again = await refund(tx.id, "?amountToRefund=2", key);
		const concurrent = await Promise.all(Array.from({ length: 10 }, () => refund(tx.id, "?amountToRefund=2", key)));

		expect(first.body).toEqual({ success: true, message: "Refund success with amount 2" });
		expect(again.body).toEqual(first.body);
		for (const answer of concurrent) expect(answer.body).toEqual(first.body);
		expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED")).toHaveLength(1);
	});

	test("When 10 requests with one new Idempotency-Key arrive at once, then one refund is made and all get its answer", async () => {
		const tx = await paidTransaction();
		const key = { "Idempotency-Key": `burst-${tx.id}` };

		const answers = await Promise.all(Array.from({ length: 10 }, () => refund(tx.id, "?amountToRefund=1", key)));

		for (const answer of answers) expect(answer.body).toEqual({ success: true, message: "Refund success with amount 1" });
		expect((await transactionsOf(tx.customerId)).filter(t => t.type === "REFUNDED")).toHaveLength(1);
	});

	test("When an Idempotency-Key is reused with other parameters, then success false saying so", async () => {
		const tx = await paidTransaction();
		const key = { "Idempotency-Key": `reuse-${tx.id}` };
		await refund(tx.id, "?amountToRefund=1", key);

		const res = await refund(tx.id, "?amountToRefund=3", key);

		expect(res.body).toEqual({ success: false, message: "This Idempotency-Key was already used with different parameters" });
	});
});
