// A database of a version before the payments service: the sandbox vault and
// ledger in billing's database. When the app starts, billing hands them to
// payments: the old cards charge, the old charges refund, the old keys answer
// their first outcomes, and new transaction ids never meet the old ones.
import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { seal } from "../../../services/payments/sealing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { databaseNameFor } from "../../../shared/db.mixin";
import { createShop } from "../../factories/checkout";
import { startApp, type TestApp, uniqueDatabaseName } from "../../setup/app";

const BASE = process.env.MONGO_URL!;
const database = uniqueDatabaseName();
const url = `${BASE}/${database}`;
const cardToken = `card_${randomBytes(16).toString("hex")}`;
const LEGACY_ID = 7;
let app: TestApp;
let client: MongoClient;

beforeAll(async () => {
	// Arrange: billing's database as an earlier version left it (its card sealed straight under VAULT_KEY).
	client = await MongoClient.connect(BASE);
	const billing = client.db(databaseNameFor("billing", url));
	const createdAt = new Date(Date.now() - 40 * 86_400_000);
	await billing.collection("sandbox_vault").insertOne({
		_id: cardToken as never,
		...seal(Buffer.from(process.env.VAULT_KEY!, "base64"), "4242424242424242"),
		bin: "424242",
		last4: "4242",
		expiry: "1234",
		createdAt,
	});
	await billing.collection("sandbox_operations").insertOne({
		_id: "co_legacy0001:charge" as never,
		kind: "charge",
		initiator: "customer",
		cardToken,
		amount: 999,
		currency: "EUR",
		midId: 1,
		outcome: { status: "APPROVED", processorTransactionId: LEGACY_ID, reason: null, hardDecline: false },
		createdAt,
	});
	await billing.collection("sandbox_transactions").insertOne({ _id: LEGACY_ID as never, operation: "co_legacy0001:charge" });

	app = await startApp({ database });
	await createShop(app); // a sandbox account whose MIDs are 1 and 2, as the old charge's was
	const deadline = Date.now() + 20_000;
	while ((await billing.collection("sandbox_vault").countDocuments()) > 0 && Date.now() < deadline)
		await new Promise(resolve => setTimeout(resolve, 100));
}, 60_000);
afterAll(async () => {
	await app?.stop();
	await client?.close();
});

const call = (action: string, params: object) => app.broker.call<PaymentOutcome | null, object>(action, params);

test("When the app starts on an earlier version's data, then billing's sandbox collections are handed over and emptied, and the card is sealed as an envelope", async () => {
	const billing = client.db(databaseNameFor("billing", url));
	const payments = client.db(databaseNameFor("payments", url));

	for (const name of ["sandbox_vault", "sandbox_operations", "sandbox_transactions"])
		expect(await billing.collection(name).countDocuments()).toBe(0);
	const card = await payments.collection("vault_cards").findOne({ _id: cardToken as never });
	expect(card).toMatchObject({ bin: "424242", last4: "4242", pan: { kid: expect.stringMatching(/^[0-9a-f]{12}$/) } });
	expect(JSON.stringify(card)).not.toContain("4242424242424242");
});

test("When an old key is looked up, then its first outcome answers, under its old transaction id", async () => {
	expect(await call("payments.lookup", { idempotencyKey: "co_legacy0001:charge" })).toMatchObject({
		status: "APPROVED",
		processorTransactionId: LEGACY_ID,
	});
});

test("When the old card is charged again and the old charge refunded, then both are approved, and the new ids are above every old one", async () => {
	// Act
	const renewal = await call("payments.charge", {
		idempotencyKey: "renewal:legacy:1",
		midId: 1,
		cardToken,
		amount: 999,
		currency: "EUR",
		initiator: "merchant",
	});
	const refund = await call("payments.refund", { idempotencyKey: "rf_legacy", processorTransactionId: LEGACY_ID, amount: 500 });

	// Assert
	expect(renewal).toMatchObject({ status: "APPROVED", processorReference: expect.stringMatching(/^sbx_/) });
	expect(refund).toMatchObject({ status: "APPROVED" });
	expect(renewal!.processorTransactionId).toBeGreaterThanOrEqual(1_000_000_000);
});
