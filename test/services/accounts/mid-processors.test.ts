// A MID names its processor (issue 23): the sandbox, or Stripe with a secret key
// and a webhook signing secret that are write-only. The environment rules
// answer 409 naming the rule; the key and the secret are sealed by the gateway
// service before they cross the transporter, stored sealed by payments, and
// never answered, stored in clear or logged.
import { admin, createMerchant, type TestMerchant } from "../../factories/merchant";
import { everythingStored } from "../../factories/stored-text";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let sandbox: TestMerchant;
let production: TestMerchant;
const logs: string[] = [];

/** A Stripe-shaped key no test server has seen, unique per call, so a leak is found by its text. */
const stripeKey = (mode: "test" | "live", prefix: "sk" | "rk" = "sk") =>
	`${prefix}_${mode}_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}Xq9`;

beforeAll(async () => {
	app = await startApp({ onLog: line => logs.push(line), logLevel: "debug" });
	sandbox = await createMerchant(app);
	production = await createMerchant(app, { environment: "production" });
});
afterAll(() => app.stop());

const addMid = (merchant: TestMerchant, processor?: unknown) =>
	admin(app).post(`/accounts/${merchant.accountId}/merchant-accounts`, {
		name: "MID",
		group: "default",
		cardTypes: ["visa"],
		...(processor === undefined ? {} : { processor }),
	});

describe("Which processor a MID may use", () => {
	test.each([
		["a sandbox account", "no processor", () => sandbox, undefined, { type: "sandbox" }],
		["a production account", "no processor", () => production, undefined, null],
		["a sandbox account", "the sandbox", () => sandbox, { type: "sandbox" }, { type: "sandbox" }],
		["a sandbox account", "none (null)", () => sandbox, null, null],
	])("When %s adds a MID with %s, then 201 and it shows its processor", async (_, __, merchant, processor, shown) => {
		const res = await addMid(merchant(), processor);

		expect(res.status).toBe(201);
		expect(res.body.processor).toEqual(shown);
	});

	test.each([
		["sk", "test"],
		["rk", "test"],
	] as const)(
		"When a sandbox account adds a Stripe MID with a %s_%s_ key, then 201 showing only the mode and the last 4 characters",
		async (prefix, mode) => {
			const key = stripeKey(mode, prefix);

			const res = await addMid(sandbox, { type: "stripe", secretKey: key });

			expect(res.status).toBe(201);
			expect(res.body.processor).toEqual({ type: "stripe", keyMode: "test", secretKeyLast4: key.slice(-4), webhookSecretLast4: null });
			expect(JSON.stringify(res.body)).not.toContain(key.slice(0, -4));
		},
	);

	test("When a production account adds a Stripe MID with a live key, then 201 and the list shows it without the key", async () => {
		const key = stripeKey("live");

		const res = await addMid(production, { type: "stripe", secretKey: key });
		const list = await admin(app).get(`/accounts/${production.accountId}/merchant-accounts`);

		expect(res.status).toBe(201);
		expect(res.body.processor).toEqual({ type: "stripe", keyMode: "live", secretKeyLast4: key.slice(-4), webhookSecretLast4: null });
		expect(list.body).toContainEqual(res.body);
		expect(list.text).not.toContain(key);
	});

	test.each([
		[
			"a production account names the sandbox",
			() => production,
			{ type: "sandbox" },
			"A production account's merchant accounts need a real gateway: processor type sandbox is for sandbox accounts only",
		],
		[
			"a production account gives a Stripe test key",
			() => production,
			{ type: "stripe", secretKey: stripeKey("test") },
			"A production account's merchant account needs live keys: Stripe's sk_live_… or rk_live_…, or Adyen's live platform (its liveUrlPrefix)",
		],
		[
			"a sandbox account gives a Stripe live key",
			() => sandbox,
			{ type: "stripe", secretKey: stripeKey("live") },
			"A sandbox account's merchant account takes test keys only (Stripe's sk_test_… or rk_test_…, Adyen's test platform without a liveUrlPrefix): live keys move real money",
		],
	])("When %s, then 409 naming the rule and no MID is added", async (_, merchant, processor, message) => {
		const before = (await admin(app).get(`/accounts/${merchant().accountId}/merchant-accounts`)).body.length;

		const res = await addMid(merchant(), processor);

		expect(res.status).toBe(409);
		expect(res.body).toEqual({ error: "CONFLICT", status: 409, message });
		expect((await admin(app).get(`/accounts/${merchant().accountId}/merchant-accounts`)).body).toHaveLength(before);
	});

	test.each([
		["no key", { type: "stripe" }],
		["a publishable key", { type: "stripe", secretKey: "pk_test_1234567890abcdef" }],
		["a key of another JSON type", { type: "stripe", secretKey: 1234567890 }],
		["a key with a space", { type: "stripe", secretKey: "sk_test_1234 567890abcdef" }],
	])("When a Stripe MID comes with %s, then 400 saying what a key looks like", async (_, processor) => {
		const res = await addMid(sandbox, processor);

		expect(res.status).toBe(400);
		expect(res.body.message).toBe(
			"processor.secretKey must be a Stripe secret or restricted key: sk_test_…, sk_live_…, rk_test_… or rk_live_…",
		);
	});

	test("When a Stripe MID comes with a webhook signing secret, then 201 showing only its last 4 characters", async () => {
		const secret = `whsec_${Date.now().toString(36)}Wh4x`;

		const res = await addMid(sandbox, { type: "stripe", secretKey: stripeKey("test"), webhookSecret: secret });

		expect(res.status).toBe(201);
		expect(res.body.processor).toMatchObject({ type: "stripe", webhookSecretLast4: "Wh4x" });
		expect(res.text).not.toContain(secret.slice(0, -4));
	});

	test.each([
		["a publishable key", "pk_test_1234567890abcdef"],
		["a key of another JSON type", 1234567890],
		["a secret with a space", "whsec_1234 567890abcdef"],
		["null", null],
	])("When a Stripe MID's webhook secret is %s, then 400 saying what a secret looks like", async (_, webhookSecret) => {
		const res = await addMid(sandbox, { type: "stripe", secretKey: stripeKey("test"), webhookSecret });

		expect(res.status).toBe(400);
		expect(res.body.message).toBe(
			"processor.webhookSecret must be the signing secret of the MID's endpoint in Stripe's dashboard: whsec_ and 8 to 247 letters or digits",
		);
	});

	test.each([
		["an unknown processor", { type: "paypal" }],
		["a sandbox with a key", { type: "sandbox", secretKey: "sk_test_1234567890abcdef" }],
		["a string", "sandbox"],
	])("When the processor is %s, then 400 naming processor", async (_, processor) => {
		const res = await addMid(sandbox, processor);

		expect(res.status).toBe(400);
		expect(res.body.message).toContain("processor");
	});
});

describe("PATCH /admin/accounts/{accountId}/merchant-accounts/{id}", () => {
	test("When a MID's Stripe key is replaced, then the answer shows the new key's last 4 characters and the old key is stored nowhere", async () => {
		// Arrange
		const oldKey = stripeKey("test");
		const newKey = stripeKey("test");
		const mid = (await addMid(sandbox, { type: "stripe", secretKey: oldKey }).expect(201)).body;

		// Act
		const res = await admin(app).patch(`/accounts/${sandbox.accountId}/merchant-accounts/${mid.id}`, {
			processor: { type: "stripe", secretKey: newKey },
		});

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			...mid,
			processor: { type: "stripe", keyMode: "test", secretKeyLast4: newKey.slice(-4), webhookSecretLast4: null },
		});
		const stored = await everythingStored();
		expect(stored).not.toContain(oldKey);
		expect(stored).not.toContain(newKey);
	});

	test("When a MID is renamed and deactivated, then only those change", async () => {
		const mid = (await addMid(sandbox).expect(201)).body;

		const res = await admin(app).patch(`/accounts/${sandbox.accountId}/merchant-accounts/${mid.id}`, { name: "Renamed", active: false });

		expect(res.status).toBe(200);
		expect(res.body).toEqual({ ...mid, name: "Renamed", active: false });
	});

	test("When a production MID is given the sandbox, then 409 and it keeps its processor", async () => {
		const key = stripeKey("live");
		const mid = (await addMid(production, { type: "stripe", secretKey: key }).expect(201)).body;

		const res = await admin(app).patch(`/accounts/${production.accountId}/merchant-accounts/${mid.id}`, { processor: { type: "sandbox" } });

		expect(res.status).toBe(409);
		const list = (await admin(app).get(`/accounts/${production.accountId}/merchant-accounts`)).body as { id: number }[];
		expect(list.find(m => m.id === mid.id)).toEqual(mid);
	});

	test.each([
		["another account's MID", () => production, async () => (await addMid(sandbox).expect(201)).body.id],
		["a MID that does not exist", () => sandbox, async () => 987654321],
	])("When %s is changed, then 404 and nothing changes", async (_, merchant, midId) => {
		const res = await admin(app).patch(`/accounts/${merchant().accountId}/merchant-accounts/${await midId()}`, { name: "Taken" });

		expect(res.status).toBe(404);
		expect(res.body.message).toBe("No merchant account with this id in the account");
	});

	test("When nothing is sent, then 400", async () => {
		const mid = (await addMid(sandbox).expect(201)).body;

		const res = await admin(app).patch(`/accounts/${sandbox.accountId}/merchant-accounts/${mid.id}`, {});

		expect(res.status).toBe(400);
	});
});

test("When Stripe keys and webhook secrets were given, then no database holds one in clear and no log line shows one", async () => {
	// Arrange: a key and a secret through each door.
	const created = stripeKey("test");
	const replaced = stripeKey("test");
	const createdSecret = `whsec_${Date.now().toString(36)}Created`;
	const replacedSecret = `whsec_${Date.now().toString(36)}Replaced`;
	const mid = (await addMid(sandbox, { type: "stripe", secretKey: created, webhookSecret: createdSecret }).expect(201)).body;
	await admin(app)
		.patch(`/accounts/${sandbox.accountId}/merchant-accounts/${mid.id}`, {
			processor: { type: "stripe", secretKey: replaced, webhookSecret: replacedSecret },
		})
		.expect(200);

	// Assert
	const stored = await everythingStored();
	for (const key of [created, replaced]) {
		expect(stored).not.toContain(key);
		expect(logs.filter(line => line.includes(key.slice(8)))).toEqual([]);
	}
	for (const secret of [createdSecret, replacedSecret]) {
		expect(stored).not.toContain(secret.slice(6));
		expect(logs.filter(line => line.includes(secret.slice(6)))).toEqual([]);
	}
	// Sealed where it is kept: the payments service's gateway_credentials, under a key id.
	expect(stored).toMatch(/"secret":\{"kid":"[0-9a-f]{12}"/);
});
