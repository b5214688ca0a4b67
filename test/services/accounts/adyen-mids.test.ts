// A MID on Adyen (issue 49): its merchant account, API key and HMAC key, test or
// live by its live URL prefix. The environment rules answer 409 naming the rule,
// as for Stripe; the API key and the HMAC key are sealed by the gateway service
// before they cross the transporter, stored sealed by payments, and never
// answered, stored in clear or logged.
import { admin, createMerchant, type TestMerchant } from "../../factories/merchant";
import { everythingStored } from "../../factories/stored-text";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let sandbox: TestMerchant;
let production: TestMerchant;
const logs: string[] = [];

/** An Adyen-shaped API key no server has seen, unique per call, so a leak is found by its text. */
const apiKey = () => `AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1+${Math.random().toString(36).slice(2)}${Date.now().toString(36)}==-Zk9`;
/** An HMAC key as Adyen's Customer Area makes one: 64 hexadecimal digits, unique per call. */
const hmacKey = () =>
	`${Date.now().toString(16).padStart(16, "0")}${Math.random().toString(16).slice(2, 14).padEnd(12, "0")}`
		.padEnd(64, "A7")
		.slice(0, 60)
		.concat("B0C1");

beforeAll(async () => {
	app = await startApp({ onLog: line => logs.push(line), logLevel: "debug" });
	sandbox = await createMerchant(app);
	production = await createMerchant(app, { environment: "production" });
});
afterAll(() => app.stop());

const addMid = (merchant: TestMerchant, processor: unknown) =>
	admin(app).post(`/accounts/${merchant.accountId}/merchant-accounts`, { name: "MID", group: "default", cardTypes: ["visa"], processor });

describe("An Adyen MID", () => {
	test("When a sandbox account adds an Adyen MID on the test platform with an HMAC key, then 201 showing its merchant account and the keys' last 4 characters only", async () => {
		const key = apiKey();
		const hmac = hmacKey();

		const res = await addMid(sandbox, { type: "adyen", apiKey: key, merchantAccount: "Shop_Com-EU.1", hmacKey: hmac });

		expect(res.status).toBe(201);
		expect(res.body.processor).toEqual({
			type: "adyen",
			keyMode: "test",
			merchantAccount: "Shop_Com-EU.1",
			liveUrlPrefix: null,
			apiKeyLast4: key.slice(-4),
			hmacKeyLast4: hmac.slice(-4),
		});
		expect(res.text).not.toContain(key.slice(0, -4));
		expect(res.text).not.toContain(hmac.slice(0, -4));
	});

	test("When a production account adds an Adyen MID with its live URL prefix, then 201 on the live platform, without an HMAC key until given one", async () => {
		const res = await addMid(production, {
			type: "adyen",
			apiKey: apiKey(),
			merchantAccount: "ShopCom",
			liveUrlPrefix: "1797a841fbb37ca7-AdyenDemo",
		});

		expect(res.status).toBe(201);
		expect(res.body.processor).toMatchObject({
			type: "adyen",
			keyMode: "live",
			liveUrlPrefix: "1797a841fbb37ca7-AdyenDemo",
			hmacKeyLast4: null,
		});
	});

	test.each([
		[
			"a production account names Adyen's test platform",
			() => production,
			{},
			"A production account's merchant account needs live keys: Stripe's sk_live_… or rk_live_…, or Adyen's live platform (its liveUrlPrefix)",
		],
		[
			"a sandbox account names Adyen's live platform",
			() => sandbox,
			{ liveUrlPrefix: "1797a841fbb37ca7-AdyenDemo" },
			"A sandbox account's merchant account takes test keys only (Stripe's sk_test_… or rk_test_…, Adyen's test platform without a liveUrlPrefix): live keys move real money",
		],
	])("When %s, then 409 naming the rule and no MID is added", async (_, merchant, extra, message) => {
		const before = (await admin(app).get(`/accounts/${merchant().accountId}/merchant-accounts`)).body.length;

		const res = await addMid(merchant(), { type: "adyen", apiKey: apiKey(), merchantAccount: "ShopCom", ...extra });

		expect(res.status).toBe(409);
		expect(res.body).toEqual({ error: "CONFLICT", status: 409, message });
		expect((await admin(app).get(`/accounts/${merchant().accountId}/merchant-accounts`)).body).toHaveLength(before);
	});

	test.each([
		[
			"no API key",
			{ merchantAccount: "ShopCom" },
			"processor.apiKey must be the API key of an Adyen API credential: 16 to 512 printable characters, no spaces",
		],
		[
			"an API key of another JSON type",
			{ merchantAccount: "ShopCom", apiKey: 123456789012345 },
			"processor.apiKey must be the API key of an Adyen API credential: 16 to 512 printable characters, no spaces",
		],
		[
			"an API key with a space",
			{ merchantAccount: "ShopCom", apiKey: "AQEyhmfxK4PJbhZK w0m" },
			"processor.apiKey must be the API key of an Adyen API credential: 16 to 512 printable characters, no spaces",
		],
		[
			"an API key too short",
			{ merchantAccount: "ShopCom", apiKey: "AQE12345" },
			"processor.apiKey must be the API key of an Adyen API credential: 16 to 512 printable characters, no spaces",
		],
		[
			"an HMAC key that is not 64 hexadecimal digits",
			{ merchantAccount: "ShopCom", apiKey: apiKey(), hmacKey: "not-hex" },
			"processor.hmacKey must be the HMAC key of the MID's notification webhook in Adyen's Customer Area: 64 hexadecimal digits",
		],
	])("When an Adyen MID comes with %s, then 400 saying what it must be", async (_, fields, message) => {
		const res = await addMid(sandbox, { type: "adyen", ...fields });

		expect(res.status).toBe(400);
		expect(res.body.message).toBe(message);
	});

	test.each([
		["no merchant account", { apiKey: apiKey() }],
		["a merchant account with a space", { apiKey: apiKey(), merchantAccount: "Shop Com" }],
		["a live URL prefix that is not one", { apiKey: apiKey(), merchantAccount: "ShopCom", liveUrlPrefix: "https://evil.example" }],
		["a field Adyen MIDs do not take", { apiKey: apiKey(), merchantAccount: "ShopCom", secretKey: "sk_test_1234567890" }],
	])("When an Adyen MID comes with %s, then 400 and no MID is added", async (_, fields) => {
		const before = (await admin(app).get(`/accounts/${sandbox.accountId}/merchant-accounts`)).body.length;

		const res = await addMid(sandbox, { type: "adyen", ...fields });

		expect(res.status).toBe(400);
		expect((await admin(app).get(`/accounts/${sandbox.accountId}/merchant-accounts`)).body).toHaveLength(before);
	});
});

test("When Adyen API keys and HMAC keys were given and replaced, then no database holds one in clear and no log line shows one", async () => {
	// Arrange: a key pair through each door.
	const created = { apiKey: apiKey(), hmacKey: hmacKey() };
	const replaced = { apiKey: apiKey(), hmacKey: hmacKey() };
	const mid = (await addMid(sandbox, { type: "adyen", merchantAccount: "ShopCom", ...created }).expect(201)).body;

	// Act
	const res = await admin(app)
		.patch(`/accounts/${sandbox.accountId}/merchant-accounts/${mid.id}`, {
			processor: { type: "adyen", merchantAccount: "ShopCom", ...replaced },
		})
		.expect(200);

	// Assert
	expect(res.body.processor).toMatchObject({ apiKeyLast4: replaced.apiKey.slice(-4), hmacKeyLast4: replaced.hmacKey.slice(-4) });
	const stored = await everythingStored();
	for (const { apiKey: key, hmacKey: hmac } of [created, replaced]) {
		expect(stored).not.toContain(key.slice(0, -4));
		expect(stored).not.toContain(hmac.slice(0, -4));
		expect(logs.filter(line => line.includes(key.slice(20, -4)) || line.includes(hmac.slice(8, -4)))).toEqual([]);
	}
});
