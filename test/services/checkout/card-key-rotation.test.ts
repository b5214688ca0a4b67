// Rotating the card-encryption key: forms opened before the rotation hold the
// previous public key; their ciphertexts decrypt until the grace period ends.
import { newCardSecrets } from "../../../dev/local-secrets";
import { CARDS, checkoutBody, createShop, encrypt } from "../../factories/checkout";
import { startApp, type TestApp } from "../../setup/app";

const oldKey = newCardSecrets().cardPrivateKey;
const newKey = newCardSecrets().cardPrivateKey;

async function appWith(env: Record<string, string>): Promise<TestApp> {
	return startApp({ env: { CARD_PRIVATE_KEY: newKey, ...env } });
}

describe("Card key rotation", () => {
	let before: TestApp;
	let after: TestApp | undefined;
	beforeAll(async () => {
		before = await startApp({ env: { CARD_PRIVATE_KEY: oldKey } });
	});
	afterAll(async () => {
		await before.stop();
	});
	afterEach(async () => {
		await after?.stop();
		after = undefined;
	});

	test("When the key is rotated, then the served key changes and a form encrypted to the previous key still pays during the grace period", async () => {
		// Arrange: the buyer's form fetched the old key before the rotation.
		const oldKid = (await before.http().get("/api/checkout/key")).body.kid;
		const cardForOldKey = await encrypt(before, CARDS.visa);
		const cvcForOldKey = await encrypt(before, "123");
		after = await appWith({ CARD_PREVIOUS_PRIVATE_KEY: oldKey, CARD_PREVIOUS_KEY_UNTIL: new Date(Date.now() + 3_600_000).toISOString() });
		const shop = await createShop(after);
		const body = await checkoutBody(after, shop, { productId: shop.products.charge });

		// Act
		const served = await after.http().get("/api/checkout/key");
		const res = await after
			.http()
			.post("/api/checkout")
			.send({ ...body, encryptedCardNumber: cardForOldKey, encryptedCvc: cvcForOldKey });

		// Assert
		expect(served.body.kid).not.toBe(oldKid);
		expect(res.body.code).toBe("OK");
	});

	test("When the grace period has ended, then the previous key's ciphertexts are refused", async () => {
		const cardForOldKey = await encrypt(before, CARDS.visa);
		after = await appWith({ CARD_PREVIOUS_PRIVATE_KEY: oldKey, CARD_PREVIOUS_KEY_UNTIL: new Date(Date.now() - 1000).toISOString() });
		const shop = await createShop(after);
		const body = await checkoutBody(after, shop, { productId: shop.products.charge });

		const res = await after
			.http()
			.post("/api/checkout")
			.send({ ...body, encryptedCardNumber: cardForOldKey });

		expect(res.status).toBe(400);
		expect(res.body.errors).toEqual([expect.objectContaining({ field: "encryptedCardNumber" })]);
	});
});
