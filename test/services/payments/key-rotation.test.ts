// Rotating the keys that seal card numbers (VAULT_KEY) and processor keys
// (CREDENTIALS_KEY), as docs/security.md tells an operator to: the new key
// current, the old one in *_PREVIOUS_KEYS, the service restarted on the same
// data. Everything sealed before is re-wrapped under the new key and keeps
// working; no card number is decrypted to do it.
import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { keyId } from "../../../services/payments/vault/sealing";
import { databaseNameFor } from "../../../shared/db.mixin";
import { CARDS, createShop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock } from "../../factories/merchant";
import { startApp, type TestApp, uniqueDatabaseName } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(90_000);

const database = uniqueDatabaseName();
const oldVaultKey = process.env.VAULT_KEY!;
const oldCredentialsKey = process.env.CREDENTIALS_KEY!;
const newVaultKey = randomBytes(32).toString("base64");
const newCredentialsKey = randomBytes(32).toString("base64");
let app: TestApp | undefined;
let client: MongoClient;

beforeAll(async () => {
	client = await MongoClient.connect(process.env.MONGO_URL!);
});
afterAll(async () => {
	await app?.stop();
	await client.close();
});

test("When VAULT_KEY and CREDENTIALS_KEY are rotated with the old keys kept as previous, then every card, processor key and webhook secret is re-wrapped under the new ones, and the old customer renews", async () => {
	// Arrange: a customer and a MID with a Stripe key and webhook secret, sealed under the old keys.
	app = await startApp({ database });
	const shop = await createShop(app);
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.mastercard })).body;
	const stripeMid = (
		await admin(app)
			.post(`/accounts/${shop.accountId}/merchant-accounts`, {
				name: "Stripe",
				group: "stripe",
				cardTypes: ["visa"],
				processor: { type: "stripe", secretKey: `sk_test_${Date.now().toString(36)}rotate`, webhookSecret: "whsec_rotatedWithTheKey" },
			})
			.expect(201)
	).body;
	await app.stop();
	const payments = client.db(databaseNameFor("payments", process.env.MONGO_URL!));

	// Act: the same data, the new keys current, the old ones previous.
	app = await startApp({
		database,
		env: {
			VAULT_KEY: newVaultKey,
			VAULT_PREVIOUS_KEYS: oldVaultKey,
			CREDENTIALS_KEY: newCredentialsKey,
			CREDENTIALS_PREVIOUS_KEYS: oldCredentialsKey,
		},
	});
	const newVaultKid = keyId(Buffer.from(newVaultKey, "base64"));
	const newCredentialsKid = keyId(Buffer.from(newCredentialsKey, "base64"));
	// The re-wraps: no card, processor key or webhook secret left under an old key.
	await eventually(
		async () => expect(await payments.collection("vault_cards").countDocuments({ "pan.kid": { $ne: newVaultKid } })).toBe(0),
		20_000,
	);
	await eventually(async () => {
		const credentials = payments.collection("gateway_credentials");
		expect(await credentials.countDocuments({ "secret.kid": { $ne: newCredentialsKid } })).toBe(0);
		expect(await credentials.countDocuments({ webhookSecret: { $ne: null }, "webhookSecret.kid": { $ne: newCredentialsKid } })).toBe(0);
	}, 20_000);

	// Assert: the old card still charges, under the new key only.
	await advanceClock(app, shop, 32);
	const transactions = (await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body as {
		type: string;
		status: string;
	}[];
	expect(transactions.map(t => [t.type, t.status])).toEqual([
		["SUBSCRIPTION_START", "APPROVED"],
		["RENEWAL", "APPROVED"],
	]);
	expect(await payments.collection("vault_cards").countDocuments({ "pan.kid": newVaultKid })).toBeGreaterThan(0);
	expect(await payments.collection("gateway_credentials").findOne({ _id: stripeMid.id })).toMatchObject({
		secret: { kid: newCredentialsKid },
		webhookSecret: { kid: newCredentialsKid },
	});
});
