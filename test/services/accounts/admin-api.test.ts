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
			disputeProtection: { unsubscribe: true, blockCard: true, blockEmail: false, refundEarlyFraudWarnings: true },
			emails: { enabled: false, from: null, fromName: null, replyTo: null, language: "en", brandColor: null },
			// Its invoice settings at their defaults (docs/invoices.md#settings); the seller's details are null until set.
			invoicing: expect.objectContaining({
				invoicePrefix: "INV",
				creditNotePrefix: "CN",
				language: "en",
				taxRateBps: 0,
				pricesIncludeTax: true,
			}),
			// The customer portal off until turned on (docs/portal.md#settings).
			portal: expect.objectContaining({ enabled: false, cancel: "period_end", retentionCouponId: null, language: "en" }),
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
			// The account's tax rate (docs/invoices.md#tax).
			taxRateBps: null,
			// No usage billed (docs/usage.md#prices).
			usagePrices: [],
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

describe("Dispute protection", () => {
	const DEFAULTS = { unsubscribe: true, blockCard: true, blockEmail: false, refundEarlyFraudWarnings: true };

	test("When an account is created with some settings, then it shows all four, the others at their defaults", async () => {
		// Act
		const created = await admin(app).post("/accounts", { name: "Shop", environment: "sandbox", disputeProtection: { blockEmail: true } });

		// Assert
		expect(created.status).toBe(201);
		expect(created.body.disputeProtection).toEqual({ ...DEFAULTS, blockEmail: true });
		const read = await admin(app).get(`/accounts/${created.body.id}`).expect(200);
		expect(read.body.disputeProtection).toEqual({ ...DEFAULTS, blockEmail: true });
	});

	test("When a patch changes one setting after another, then each keeps the others as they were", async () => {
		// Arrange
		const { accountId } = await createMerchant(app);

		// Act
		const first = await admin(app).patch(`/accounts/${accountId}`, { disputeProtection: { unsubscribe: false } });
		const second = await admin(app).patch(`/accounts/${accountId}`, { disputeProtection: { blockEmail: true, blockCard: false } });

		// Assert
		expect(first.status).toBe(200);
		expect(first.body.disputeProtection).toEqual({ ...DEFAULTS, unsubscribe: false });
		expect(second.body.disputeProtection).toEqual({
			unsubscribe: false,
			blockCard: false,
			blockEmail: true,
			refundEarlyFraudWarnings: true,
		});
		const listed = (await admin(app).get("/accounts").expect(200)).body.find((a: { id: number }) => a.id === accountId);
		expect(listed.disputeProtection).toEqual(second.body.disputeProtection);
	});

	test.each([
		["a setting is a string", { blockCard: "false" }, "disputeProtection.blockCard"],
		["a setting is a number", { unsubscribe: 0 }, "disputeProtection.unsubscribe"],
		["a setting is null", { blockEmail: null }, "disputeProtection.blockEmail"],
		["a setting is unknown", { blockIp: true }, "disputeProtection.blockIp"],
		["it is not an object", true, "disputeProtection"],
		["it is empty", {}, "disputeProtection"],
	])("When %s, then 400 naming it and nothing changes", async (_, disputeProtection, field) => {
		// Arrange
		const { accountId } = await createMerchant(app);

		// Act
		const res = await admin(app).patch(`/accounts/${accountId}`, { disputeProtection });

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(field) });
		expect((await admin(app).get(`/accounts/${accountId}`)).body.disputeProtection).toEqual(DEFAULTS);
	});

	test("When an account is created with a setting of the wrong type, then 400 and no account", async () => {
		const before = (await admin(app).get("/accounts")).body.length;

		const res = await admin(app).post("/accounts", { name: "Shop", environment: "sandbox", disputeProtection: { blockCard: "yes" } });

		expect(res.status).toBe(400);
		expect(res.body.message).toContain("disputeProtection.blockCard");
		expect((await admin(app).get("/accounts")).body.length).toBe(before);
	});

	test("When billing reads the account, then accounts.get gives the settings", async () => {
		const { accountId } = await createMerchant(app);
		await admin(app)
			.patch(`/accounts/${accountId}`, { disputeProtection: { blockEmail: true } })
			.expect(200);

		const account = await app.broker.call("accounts.get", { accountId });

		expect(account).toMatchObject({ id: accountId, disputeProtection: { ...DEFAULTS, blockEmail: true } });
	});
});

describe("Blocked buyers", () => {
	const FINGERPRINT = "ab".repeat(32);

	test("When an email is blocked, listed and unblocked, then 201 with the entry, it shows, 200, and it is gone", async () => {
		// Arrange
		const { accountId } = await createMerchant(app);

		// Act
		const added = await admin(app).post(`/accounts/${accountId}/blocked-buyers`, { email: "Fraud@Example.COM" });
		const listed = await admin(app).get(`/accounts/${accountId}/blocked-buyers`);
		const deleted = await admin(app).delete(`/accounts/${accountId}/blocked-buyers/email/${encodeURIComponent("FRAUD@example.com")}`);
		const deletedAgain = await admin(app).delete(`/accounts/${accountId}/blocked-buyers/email/${encodeURIComponent("fraud@example.com")}`);
		const listedAfter = await admin(app).get(`/accounts/${accountId}/blocked-buyers`);

		// Assert
		const entry = {
			accountId,
			kind: "EMAIL",
			value: "fraud@example.com",
			cardBin: null,
			cardLast4: null,
			reason: "MANUAL",
			disputeId: null,
			transactionId: null,
			createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
		};
		expect(added.status).toBe(201);
		expect(added.headers.location).toBe(`/admin/accounts/${accountId}/blocked-buyers`);
		expect(added.body).toEqual(entry);
		expect(listed.body).toEqual([entry]);
		expect(deleted.status).toBe(200);
		expect(deleted.body).toEqual(entry);
		expect(deletedAgain.status).toBe(404);
		expect(deletedAgain.body).toEqual({ error: "NOT_FOUND", status: 404, message: "This card or email is not blocked by the account" });
		expect(listedAfter.body).toEqual([]);
	});

	test("When billing blocks a card and an email twice, then both are listed once, newest first, and the first block's reason stays", async () => {
		// Arrange
		const { accountId } = await createMerchant(app);
		const block = { accountId, card: { fingerprint: FINGERPRINT, bin: "424242", last4: "4242" }, email: "Buyer@example.com" };

		// Act
		const first = await app.broker.call("accounts.blockBuyer", { ...block, reason: "DISPUTE", disputeId: 7, transactionId: 70 });
		const again = await app.broker.call("accounts.blockBuyer", { ...block, reason: "EARLY_FRAUD_WARNING", transactionId: 71 });
		await admin(app).post(`/accounts/${accountId}/blocked-buyers`, { email: "later@example.com" }).expect(201);
		const listed = (await admin(app).get(`/accounts/${accountId}/blocked-buyers`).expect(200)).body;

		// Assert
		expect([first, again]).toEqual([{ blocked: 2 }, { blocked: 2 }]);
		expect(listed[0]).toMatchObject({ kind: "EMAIL", value: "later@example.com", reason: "MANUAL" });
		expect(listed.slice(1)).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					kind: "CARD",
					value: FINGERPRINT,
					cardBin: "424242",
					cardLast4: "4242",
					reason: "DISPUTE",
					disputeId: 7,
				}),
				expect.objectContaining({ kind: "EMAIL", value: "buyer@example.com", cardBin: null, reason: "DISPUTE", transactionId: 70 }),
			]),
		);
		expect(listed).toHaveLength(3);
	});

	test("When a blocked card is looked up by its fingerprint or its buyer's email, then it is blocked; another buyer is not; unblocked, it is not", async () => {
		// Arrange
		const { accountId } = await createMerchant(app);
		const other = await createMerchant(app);
		await app.broker.call("accounts.blockBuyer", {
			accountId,
			card: { fingerprint: FINGERPRINT, bin: "424242", last4: "4242" },
			reason: "DISPUTE",
		});
		await app.broker.call("accounts.blockBuyer", { accountId, email: "buyer@example.com", reason: "DISPUTE" });
		const blocked = (query: object) => app.broker.call("accounts.isBuyerBlocked", { accountId, ...query });

		// Act
		const answers = [
			await blocked({ fingerprint: FINGERPRINT }),
			await blocked({ fingerprint: "cd".repeat(32), email: " BUYER@example.com" }),
			await blocked({ fingerprint: "cd".repeat(32), email: "someone@example.com" }),
			await app.broker.call("accounts.isBuyerBlocked", {
				accountId: other.accountId,
				fingerprint: FINGERPRINT,
				email: "buyer@example.com",
			}),
		];
		await admin(app).delete(`/accounts/${accountId}/blocked-buyers/card/${FINGERPRINT}`).expect(200);
		const afterDelete = await blocked({ fingerprint: FINGERPRINT });

		// Assert
		expect(answers).toEqual([true, true, false, false]);
		expect(afterDelete).toBe(false);
	});

	test.each([
		["a card number as the email", { email: "4242424242424242" }, "email"],
		["a card number inside the email", { email: "4242424242424242@example.com" }, "email must not hold a card number"],
		["a card number in a field of its own", { card: "4242424242424242" }, "card is not allowed"],
		["a card number with its expiry", { cardNumber: "4242424242424242", expiry: "1230" }, "cardNumber is not allowed"],
		["a card's fingerprint", { card: { fingerprint: FINGERPRINT, bin: "424242", last4: "4242" } }, "card is not allowed"],
		["no email", {}, "email is required"],
		["an email that is not one", { email: "not-an-email" }, "email"],
		["an email as a number", { email: 42 }, "email must be string"],
		["a reason", { email: "a@example.com", reason: "DISPUTE" }, "reason is not allowed"],
	])("When an operator posts %s, then 400 and nothing is blocked", async (_, body, message) => {
		// Arrange
		const { accountId } = await createMerchant(app);

		// Act
		const res = await admin(app).post(`/accounts/${accountId}/blocked-buyers`, body);

		// Assert
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining(message) });
		expect((await admin(app).get(`/accounts/${accountId}/blocked-buyers`)).body).toEqual([]);
	});

	test.each([
		["the kind is unknown", 400, "ip/127.0.0.1"],
		["the kind is in upper case", 400, "EMAIL/a@example.com"],
		["the card is not blocked", 404, `card/${"ef".repeat(32)}`],
		["the email is not blocked", 404, "email/nobody@example.com"],
	])("When a block is lifted and %s, then %i", async (_, status, path) => {
		const { accountId } = await createMerchant(app);

		const res = await admin(app).delete(`/accounts/${accountId}/blocked-buyers/${path}`);

		expect(res.status).toBe(status);
	});

	test("When billing blocks nothing, or a card of the wrong shape, then it is refused and nothing is blocked", async () => {
		const { accountId } = await createMerchant(app);

		const nothing = app.broker.call("accounts.blockBuyer", { accountId, reason: "DISPUTE" });
		const badCard = app.broker.call("accounts.blockBuyer", {
			accountId,
			card: { fingerprint: "4242424242424242", bin: "424242", last4: "4242" },
			reason: "DISPUTE",
		});

		await expect(nothing).rejects.toThrow();
		await expect(badCard).rejects.toThrow();
		expect((await admin(app).get(`/accounts/${accountId}/blocked-buyers`)).body).toEqual([]);
	});

	test.each(["GET", "POST", "DELETE"])("When the account does not exist, then %s answers 404", async method => {
		const a = admin(app);
		const res =
			method === "GET"
				? await a.get("/accounts/987654/blocked-buyers")
				: method === "POST"
					? await a.post("/accounts/987654/blocked-buyers", { email: "a@example.com" })
					: await a.delete("/accounts/987654/blocked-buyers/email/a@example.com");

		expect(res.status).toBe(404);
	});
});

describe("An account's email settings (docs/emails.md#settings)", () => {
	test("When emails are turned on and then one setting changes, then each patch keeps the others as they were", async () => {
		const { accountId } = await createMerchant(app);

		await admin(app)
			.patch(`/accounts/${accountId}`, { emails: { enabled: true, from: "billing@shop.example" } })
			.expect(200);
		const second = await admin(app).patch(`/accounts/${accountId}`, { emails: { language: "de", brandColor: "#0a7d5a" } });

		expect(second.status).toBe(200);
		expect(second.body.emails).toEqual({
			enabled: true,
			from: "billing@shop.example",
			fromName: null,
			replyTo: null,
			language: "de",
			brandColor: "#0a7d5a",
		});
		expect((await admin(app).get(`/accounts/${accountId}`).expect(200)).body.emails).toEqual(second.body.emails);
	});

	test.each([
		{ emails: { from: "not an address" } },
		{ emails: { enabled: "true" } },
		{ emails: { brandColor: "green" } },
		{ emails: { language: "xx" } },
		{ emails: { fromName: "Shop\r\nBcc: x@y.z" } },
		{ emails: { unknown: 1 } },
		{ emails: {} },
	])("When the email settings are $emails, then 400 and nothing changes", async body => {
		const { accountId } = await createMerchant(app);

		const res = await admin(app).patch(`/accounts/${accountId}`, body);

		expect(res.status).toBe(400);
		expect((await admin(app).get(`/accounts/${accountId}`).expect(200)).body.emails.enabled).toBe(false);
	});
});
