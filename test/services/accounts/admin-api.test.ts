import { admin, createMerchant, type TestMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let merchant: TestMerchant;

beforeAll(async () => {
	app = await startApp();
	merchant = await createMerchant(app);
});
afterAll(() => app.stop());

const product = (overrides: object = {}) => ({
	name: "Monthly",
	amount: 9.99,
	currency: "EUR",
	billing: "CHARGE",
	renewal: { every: 1, unit: "month" },
	allowMultipleSubscriptions: false,
	merchantAccountGroup: "default",
	active: true,
	...overrides,
});

describe("POST /admin/accounts", () => {
	test("When the input is valid, then 201 with the id, a token and a webhook secret", async () => {
		const res = await admin(app).post("/accounts", { name: "Shop", environment: "production", webhookUrl: "https://shop.example/hooks" });

		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			id: expect.any(Number),
			name: "Shop",
			environment: "production",
			webhookUrl: "https://shop.example/hooks",
			renewalRetryDays: [1, 3, 5, 7],
			apiToken: expect.stringMatching(/^sk_live_/),
			webhookSecret: expect.stringMatching(/^whsec_/),
		});
	});

	test.each([
		["environment is missing", { name: "Shop" }, "environment"],
		["environment is unknown", { name: "Shop", environment: "staging" }, "environment"],
		["name is empty", { name: "", environment: "sandbox" }, "name"],
		["webhookUrl is not http(s)", { name: "Shop", environment: "sandbox", webhookUrl: "ftp://x.example" }, "webhookUrl"],
		["an unknown field is sent", { name: "Shop", environment: "sandbox", owner: "me" }, "owner"],
	])("When %s, then 400 naming the field", async (_, body, field) => {
		const res = await admin(app).post("/accounts", body);

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(field) });
	});
});

describe("PATCH /admin/accounts/:accountId", () => {
	test("When the webhook URL changes, then the account shows it", async () => {
		const res = await admin(app).patch(`/accounts/${merchant.accountId}`, { webhookUrl: "http://localhost:9999/hook" });

		expect(res.status).toBe(200);
		expect(res.body).toMatchObject({ id: merchant.accountId, webhookUrl: "http://localhost:9999/hook" });
	});

	test("When the account id is not an integer, then 400", async () => {
		const res = await admin(app).patch("/accounts/abc", { environment: "sandbox" });

		expect(res.status).toBe(400);
		expect(res.body.message).toContain("accountId");
	});

	test("When nothing is changed, then 400 saying so", async () => {
		const res = await admin(app).patch(`/accounts/${merchant.accountId}`, {});

		expect(res.status).toBe(400);
		expect(res.body.message).toBe("Nothing to change: send at least one field");
	});

	test.each(["products", "merchant-accounts", "bin-blacklist"])("When the %s of an unknown account are listed, then 404", async list => {
		const res = await admin(app).get(`/accounts/987654/${list}`);

		expect(res.status).toBe(404);
	});
});

describe("Merchant accounts (MIDs)", () => {
	test("When a MID is created, then 201 and it is listed under its group", async () => {
		// Act
		const res = await admin(app).post(`/accounts/${merchant.accountId}/merchant-accounts`, {
			name: "MID EU 1",
			group: "eu",
			cardTypes: ["visa", "mastercard"],
			active: true,
		});

		// Assert
		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			id: expect.any(Number),
			accountId: merchant.accountId,
			name: "MID EU 1",
			group: "eu",
			cardTypes: ["visa", "mastercard"],
			active: true,
			processor: { type: "sandbox" },
			weight: 1,
			monthlyCap: null,
		});
		const list = await admin(app).get(`/accounts/${merchant.accountId}/merchant-accounts?group=eu`);
		expect(list.body).toEqual([res.body]);
	});

	test("When a card type is unknown, then 400 naming cardTypes", async () => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/merchant-accounts`, {
			name: "M",
			group: "g",
			cardTypes: ["diners-club"],
		});

		expect(res.status).toBe(400);
		expect(res.body.message).toContain("cardTypes");
	});

	test("When the account does not exist, then 404", async () => {
		const res = await admin(app).post("/accounts/987654/merchant-accounts", { name: "M", group: "g", cardTypes: ["visa"] });

		expect(res.status).toBe(404);
	});
});

describe("Products", () => {
	test("When a product is created, then 201 with the amount as a decimal and the ISO 4217 currency id", async () => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/products`, product());

		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			id: expect.any(Number),
			accountId: merchant.accountId,
			...product(),
			currencyId: 978,
			trialDays: 0,
			// The default: 3-D Secure only when the issuer asks (docs/authentication.md).
			authentication: "WHEN_REQUIRED",
		});
	});

	test.each([
		["SCHEDULE", 14],
		["PREAUTHORIZE", 7],
	])("When a %s product has a trial of %i days, then it is accepted", async (billing, trialDays) => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/products`, product({ billing, trialDays }));

		expect(res.status).toBe(201);
		expect(res.body).toMatchObject({ billing, trialDays });
	});

	test.each([
		["a SCHEDULE product has no trial", { billing: "SCHEDULE" }, "trialDays"],
		["a PREAUTHORIZE trial is longer than an authorization lasts", { billing: "PREAUTHORIZE", trialDays: 8 }, "trialDays"],
		["a CHARGE product has a trial", { trialDays: 3 }, "trialDays"],
		["the amount has more decimals than the currency", { amount: 9.999 }, "amount"],
		["the amount is zero", { amount: 0 }, "amount"],
		["the amount is a string of letters", { amount: "ten" }, "amount"],
		["the currency is unknown", { currency: "EUX" }, "currency"],
		["the renewal unit is unknown", { renewal: { every: 1, unit: "fortnight" } }, "renewal"],
		["billing is unknown", { billing: "LATER" }, "billing"],
	])("When %s, then 400 naming the field", async (_, overrides, field) => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/products`, product(overrides));

		expect(res.status).toBe(400);
		expect(res.body.message).toContain(field);
	});

	test("When a JPY product is created, then its amount has no decimals, and the code is written as ISO 4217 writes it", async () => {
		const ok = await admin(app).post(`/accounts/${merchant.accountId}/products`, product({ currency: "JPY", amount: 1200 }));
		const bad = await admin(app).post(`/accounts/${merchant.accountId}/products`, product({ currency: "JPY", amount: 12.5 }));
		const lowerCase = await admin(app).post(`/accounts/${merchant.accountId}/products`, product({ currency: "jpy", amount: 1200 }));

		expect(ok.body).toMatchObject({ currency: "JPY", currencyId: 392, amount: 1200 });
		expect(bad.status).toBe(400);
		expect(lowerCase.body).toEqual({
			error: "BAD_REQUEST",
			status: 400,
			message: "currency must be an active ISO 4217 code in upper case, such as EUR",
		});
	});

	test.each([
		["an amount with more decimals than the stored currency", { amount: 9.999 }, "amount and currency together"],
		["a currency the stored amount has too many decimals for", { currency: "JPY" }, "amount and currency together"],
		["trialDays that the stored billing kind does not take", { trialDays: 5 }, "billing and trialDays together"],
	])("When a patch has %s, then 409 CONFLICT saying what to send together, and nothing changes", async (_, patch, message) => {
		// Arrange
		const created = (await admin(app).post(`/accounts/${merchant.accountId}/products`, product())).body;

		// Act
		const res = await admin(app).patch(`/accounts/${merchant.accountId}/products/${created.id}`, patch);

		// Assert
		expect(res.status).toBe(409);
		expect(res.body).toEqual({ error: "CONFLICT", status: 409, message: expect.stringContaining(message) });
		const list = await admin(app).get(`/accounts/${merchant.accountId}/products`);
		expect(list.body.find((p: { id: number }) => p.id === created.id)).toEqual(created);
	});

	test("When a product is deactivated with PATCH, then it shows active false and keeps its other fields", async () => {
		// Arrange
		const created = (await admin(app).post(`/accounts/${merchant.accountId}/products`, product())).body;

		// Act
		const res = await admin(app).patch(`/accounts/${merchant.accountId}/products/${created.id}`, { active: false });

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ ...created, active: false });
	});

	test("When a patch would leave the product inconsistent, then 400 and nothing changes", async () => {
		// Arrange
		const created = (await admin(app).post(`/accounts/${merchant.accountId}/products`, product())).body;

		// Act
		const res = await admin(app).patch(`/accounts/${merchant.accountId}/products/${created.id}`, {
			billing: "PREAUTHORIZE",
			trialDays: 30,
		});

		// Assert
		expect(res.status).toBe(400);
		const list = await admin(app).get(`/accounts/${merchant.accountId}/products`);
		expect(list.body.find((p: { id: number }) => p.id === created.id)).toEqual(created);
	});

	test("When the product belongs to another account, then 404", async () => {
		const other = await createMerchant(app);
		const created = (await admin(app).post(`/accounts/${other.accountId}/products`, product())).body;

		const res = await admin(app).patch(`/accounts/${merchant.accountId}/products/${created.id}`, { active: false });

		expect(res.status).toBe(404);
	});
});

describe("BIN blacklist", () => {
	test("When a BIN is added, listed and deleted, then 201, it shows, 200, and it is gone", async () => {
		const added = await admin(app).post(`/accounts/${merchant.accountId}/bin-blacklist`, { bin: "400000" });
		const addedAgain = await admin(app).post(`/accounts/${merchant.accountId}/bin-blacklist`, { bin: "400000" });
		const listed = await admin(app).get(`/accounts/${merchant.accountId}/bin-blacklist`);
		const deleted = await admin(app).delete(`/accounts/${merchant.accountId}/bin-blacklist/400000`);
		const deletedAgain = await admin(app).delete(`/accounts/${merchant.accountId}/bin-blacklist/400000`);

		expect(added.status).toBe(201);
		expect(added.body).toEqual({ accountId: merchant.accountId, bin: "400000" });
		expect(addedAgain.status).toBe(201);
		expect(listed.body).toEqual(["400000"]);
		expect(deleted.status).toBe(200);
		expect(deletedAgain.status).toBe(404);
	});

	test.each(["12345", "1234567", "123456789", "abcdef", "4000 00"])("When the BIN is %s, then 400", async bin => {
		const res = await admin(app).post(`/accounts/${merchant.accountId}/bin-blacklist`, { bin });

		expect(res.status).toBe(400);
		expect(res.body.message).toContain("bin");
	});

	test("When an 8-digit BIN is listed, then the blacklist check matches cards with that prefix only", async () => {
		await admin(app).post(`/accounts/${merchant.accountId}/bin-blacklist`, { bin: "55555555" }).expect(201);

		const hit = await app.broker.call("accounts.isBinBlacklisted", { accountId: merchant.accountId, cardPrefix: "55555555" });
		const miss = await app.broker.call("accounts.isBinBlacklisted", { accountId: merchant.accountId, cardPrefix: "55555544" });

		expect([hit, miss]).toEqual([true, false]);
	});
});
