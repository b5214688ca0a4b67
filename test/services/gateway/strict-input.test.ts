// Input is judged by its JSON type and never coerced: `null`, `true` or `123`
// sent where the API takes something else is a 400 naming the field, with
// nothing written. Path and query text is read by explicit rules: one value per
// parameter, plain decimals only.
import { CARDS, checkoutBody, createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp();
	shop = await createShop(app);
});
afterAll(() => app.stop());

function badRequestNaming(field: string) {
	return { error: "BAD_REQUEST", status: 400, message: expect.stringContaining(field) };
}

describe("JSON bodies are not coerced", () => {
	test("When graceSeconds is null, then 400 naming it and the current token keeps working", async () => {
		// Arrange
		const merchant = await createMerchant(app);

		// Act
		const res = await admin(app).post(`/accounts/${merchant.accountId}/tokens`, { graceSeconds: null });

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual(badRequestNaming("graceSeconds"));
		expect((await app.http().post("/api/session?domain=a.com").set(bearer(merchant))).status).toBe(200);
	});

	test.each([
		["a merchant account with active null", "merchant-accounts", { name: "MID", group: "g", cardTypes: ["visa"], active: null }, "active"],
		[
			"a product with amount true",
			"products",
			{ name: "P", amount: true, currency: "EUR", billing: "CHARGE", merchantAccountGroup: "g" },
			"amount",
		],
		[
			"a product with name false",
			"products",
			{ name: false, amount: 1, currency: "EUR", billing: "CHARGE", merchantAccountGroup: "g" },
			"name",
		],
		[
			'a product with amount "1"',
			"products",
			{ name: "P", amount: "1", currency: "EUR", billing: "CHARGE", merchantAccountGroup: "g" },
			"amount",
		],
		["a BIN as a number", "bin-blacklist", { bin: 411111 }, "bin"],
		["a blocked email as an array", "blocked-buyers", { email: ["a@example.com"] }, "email"],
	])("When the admin API gets %s, then 400 naming the field and nothing is created", async (_, collection, body, field) => {
		// Arrange
		const merchant = await createMerchant(app);

		// Act
		const res = await admin(app).post(`/accounts/${merchant.accountId}/${collection}`, body);

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual(badRequestNaming(field));
		expect((await admin(app).get(`/accounts/${merchant.accountId}/${collection}`)).body).toEqual([]);
	});

	test("When webhookUrl is an empty string, then 400 and the URL stays; null removes it, as documented", async () => {
		// Arrange
		const res = await admin(app).post("/accounts", { name: "Hooks", environment: "sandbox", webhookUrl: "https://shop.example/hooks" });
		const accountId = res.body.id as number;

		// Act
		const empty = await admin(app).patch(`/accounts/${accountId}`, { webhookUrl: "" });
		const afterEmpty = (await admin(app).get(`/accounts/${accountId}`)).body.webhookUrl;
		const cleared = await admin(app).patch(`/accounts/${accountId}`, { webhookUrl: null });

		// Assert
		expect(empty.status).toBe(400);
		expect(empty.body).toEqual({
			error: "BAD_REQUEST",
			status: 400,
			message: "webhookUrl must be an http or https URL with a host (2,000 characters at most), or null to remove it",
		});
		expect(afterEmpty).toBe("https://shop.example/hooks");
		expect(cleared.status).toBe(200);
		expect(cleared.body.webhookUrl).toBeNull();
	});

	test.each([
		["productId true", { productId: true }, "productId"],
		["name 123", { name: 123 }, "name"],
		["cardExpiry 1230 as a number", { cardExpiry: 1230 }, "cardExpiry"],
		["email null", { email: null }, "email"],
	])("When a checkout has %s, then 400 INVALID_REQUEST naming the field and no customer is created", async (_, extra, field) => {
		// Arrange
		const body = await checkoutBody(app, shop, { productId: shop.products.oneOff, card: CARDS.mastercard, extra });

		// Act
		const res = await app.http().post("/api/checkout").send(body);

		// Assert
		expect(res.status).toBe(400);
		expect(res.body.code).toBe("INVALID_REQUEST");
		expect(res.body.errors).toContainEqual({ field, message: expect.any(String) });
		expect((await admin(app).get(`/accounts/${shop.accountId}/customers?email=${encodeURIComponent(body.email)}`)).body).toEqual([]);
	});

	test("When the JSON body is null, then 400 saying what the endpoint takes, not that it is invalid JSON", async () => {
		// Act
		const adminNull = await admin(app).post("/accounts").set("Content-Type", "application/json").send("null");
		const sessionNull = await app
			.http()
			.post("/api/session?domain=a.com")
			.set(bearer(shop))
			.set("Content-Type", "application/json")
			.send("null");

		// Assert
		expect(adminNull.body).toEqual({ error: "BAD_REQUEST", status: 400, message: "Request body must be a JSON object" });
		expect(sessionNull.body).toEqual({ error: "BAD_REQUEST", status: 400, message: "This endpoint takes no request body" });
	});
});

describe("Path and query text", () => {
	test.each([
		["amountToRefund twice", "amountToRefund=1&amountToRefund=2", "amountToRefund must be given once"],
		["amountToRefund as a list", "amountToRefund[]=1", "amountToRefund must be given once"],
		["amountToRefund as an object", "amountToRefund[a]=1", "amountToRefund must be a single value"],
		["amountToRefund in exponent form", "amountToRefund=1e1", "amountToRefund must be a positive decimal number"],
		["a negative amountToRefund", "amountToRefund=-1", "amountToRefund must be a positive decimal number"],
	])("When a refund is sent with %s, then 400 naming it and nothing is refunded", async (_, query, message) => {
		// Arrange
		const checkout = await submitCheckout(app, shop, { productId: shop.products.oneOff });
		const [transaction] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${checkout.body.customerId}/transactions`)).body;

		// Act
		const res = await app.http().get(`/api/refund/${transaction.id}?${query}`).set(bearer(shop));

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(message) });
		expect((await app.http().get(`/api/transaction/${transaction.id}`).set(bearer(shop))).body.refundStatus).toBe("REFUNDABLE");
	});

	test("When a refund has more decimals than the currency, then the refund answers it (200, success false) and nothing is refunded", async () => {
		// Arrange
		const checkout = await submitCheckout(app, shop, { productId: shop.products.oneOff });
		const [transaction] = (await admin(app).get(`/accounts/${shop.accountId}/customers/${checkout.body.customerId}/transactions`)).body;

		// Act
		const res = await app.http().get(`/api/refund/${transaction.id}?amountToRefund=1.001`).set(bearer(shop));

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			success: false,
			message: "amountToRefund must be a positive amount with no more decimals than the transaction's currency",
		});
	});

	test.each(["limit=1&limit=2", "limit=1.0", "limit=true"])("When the webhooks list gets %s, then 400 naming limit", async query => {
		// Act
		const res = await admin(app).get(`/accounts/${shop.accountId}/webhooks?${query}`);

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual(badRequestNaming("limit"));
	});
});

describe("Lists under an unknown account", () => {
	test.each(["products", "merchant-accounts", "bin-blacklist", "blocked-buyers", "customers", "webhooks"])(
		"When /admin/accounts/{unknown}/%s is read, then 404 as for the account itself",
		async list => {
			// Act
			const res = await admin(app).get(`/accounts/987654/${list}`);

			// Assert
			expect(res.status).toBe(404);
			expect(res.body).toEqual({ error: "NOT_FOUND", status: 404, message: "No account with this accountId" });
		},
	);
});
