// Every outcome of the spec's checkout processing order, through HTTP.
import { cardFingerprint } from "../../../services/checkout/card-data";
import {
	CARDS,
	cardUpdateSession,
	checkoutBody,
	createShop,
	encrypt,
	newSession,
	type Shop,
	submitCardUpdate,
	submitCheckout,
	uniqueEmail,
} from "../../factories/checkout";
import { admin, bearer, createMerchant } from "../../factories/merchant";
import { setWallClock } from "../../factories/wall-clock";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	app = await startApp();
	shop = await createShop(app);
});
afterAll(() => app.stop());
afterEach(() => jest.useRealTimers());

const customer = (id: number) => app.http().get(`/api/customer/${id}`).set(bearer(shop));
// What an operator sees through the admin API.
const customersOf = async (accountId: number, email: string) =>
	(
		await admin(app)
			.get(`/accounts/${accountId}/customers?email=${encodeURIComponent(email)}`)
			.expect(200)
	).body as { id: number; status: string }[];
const transactionsOf = async (accountId: number, customerId: number) =>
	(await admin(app).get(`/accounts/${accountId}/customers/${customerId}/transactions`).expect(200)).body;
const processorOperations = async (query: string) =>
	(await admin(app).get(`/sandbox/operations?${query}`).expect(200)).body as { outcome: { status: string } | null }[];

describe("POST /api/checkout: 1. session and product", () => {
	test("When the session does not exist, then SESSION_NOT_FOUND", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId: "6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f" });

		expect(res.status).toBe(200);
		expect(res.body).toEqual({ code: "SESSION_NOT_FOUND", message: expect.any(String) });
	});

	test("When the session is 5 minutes old, then SESSION_EXPIRED", async () => {
		// Arrange
		const sessionId = await newSession(app, shop);
		const body = await checkoutBody(app, shop, { productId: shop.products.charge, sessionId });
		setWallClock(Date.now() + 5 * 60 * 1000 + 1);

		// Act
		const res = await app.http().post("/api/checkout").send(body);

		// Assert
		expect(res.body.code).toBe("SESSION_EXPIRED");
	});

	test("When the session already paid, then SESSION_USED", async () => {
		const sessionId = await newSession(app, shop);
		const first = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId });

		const second = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId });

		expect(first.body.code).toBe("OK");
		expect(second.body.code).toBe("SESSION_USED");
	});

	test.each([
		["another host", "evil.example.com"],
		["the same host with a scheme", "https://shop.example.com"],
	])("When landingDomain is %s, then DOMAIN_MISMATCH", async (_, landingDomain) => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, landingDomain });

		expect(res.body.code).toBe("DOMAIN_MISMATCH");
	});

	test("When landingDomain differs only in letter case, then it matches", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, landingDomain: "Shop.Example.COM" });

		expect(res.body.code).toBe("OK");
	});

	test("When the product does not exist or is another account's, then PRODUCT_NOT_FOUND", async () => {
		const other = await createShop(app);

		const missing = await submitCheckout(app, shop, { productId: 999_999 });
		const foreign = await submitCheckout(app, shop, { productId: other.products.charge });

		expect([missing.body.code, foreign.body.code]).toEqual(["PRODUCT_NOT_FOUND", "PRODUCT_NOT_FOUND"]);
	});

	test("When the product is inactive, then PRODUCT_INACTIVE", async () => {
		const productId = (
			await admin(app).post(`/accounts/${shop.accountId}/products`, {
				name: "Off",
				amount: 1,
				currency: "EUR",
				billing: "CHARGE",
				merchantAccountGroup: "default",
				active: false,
			})
		).body.id;

		const res = await submitCheckout(app, shop, { productId });

		expect(res.body.code).toBe("PRODUCT_INACTIVE");
	});
});

describe("POST /api/checkout: 2. merchant account", () => {
	test("When no active MID of the product's group accepts the brand, then NO_MERCHANT_ACCOUNT", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.discover });

		expect(res.body.code).toBe("NO_MERCHANT_ACCOUNT");
	});

	test("When several MIDs accept the brand, then checkouts are spread across them", async () => {
		// Act
		const answers = [];
		for (let i = 0; i < 6; i++) answers.push(await submitCheckout(app, shop, { productId: shop.products.oneOff, card: CARDS.mastercard }));

		// Assert
		const mids = new Set<number>();
		for (const answer of answers) {
			expect(answer.body.code).toBe("OK");
			const transactions = await transactionsOf(shop.accountId, answer.body.customerId);
			mids.add(transactions[0].midId);
		}
		expect([...mids].sort()).toEqual([...shop.mids].sort());
	});

	test("When only one MID accepts the brand, then it gets the checkout", async () => {
		const res = await submitCheckout(app, shop, { productId: shop.products.oneOff, card: CARDS.amex });

		const transactions = await transactionsOf(shop.accountId, res.body.customerId);
		expect(transactions[0]).toMatchObject({ midId: shop.mids[1], midName: "MID B" });
	});
});

describe("POST /api/checkout: a change to the account applies to the very next checkout (checkout nodes cache its context)", () => {
	test("When a BIN is blocked and unblocked, a product deactivated and a MID switched off after paid checkouts, then each next checkout sees it", async () => {
		// Arrange: paid checkouts, so that the shop's context and the card's blacklist answer are cached.
		const changing = await createShop(app);
		const paid = () => submitCheckout(app, changing, { productId: changing.products.charge, card: CARDS.mastercard });
		expect((await paid()).body.code).toBe("OK");

		// Act and assert, one change at a time.
		await admin(app).post(`/accounts/${changing.accountId}/bin-blacklist`, { bin: "555555" }).expect(201);
		expect((await paid()).body.code).toBe("BIN_BLACKLIST");
		await admin(app).delete(`/accounts/${changing.accountId}/bin-blacklist/555555`).expect(200);
		expect((await paid()).body.code).toBe("OK");
		for (const midId of changing.mids)
			await admin(app).patch(`/accounts/${changing.accountId}/merchant-accounts/${midId}`, { active: false }).expect(200);
		expect((await paid()).body.code).toBe("NO_MERCHANT_ACCOUNT");
		for (const midId of changing.mids)
			await admin(app).patch(`/accounts/${changing.accountId}/merchant-accounts/${midId}`, { active: true }).expect(200);
		expect((await paid()).body.code).toBe("OK");
		await admin(app).patch(`/accounts/${changing.accountId}/products/${changing.products.charge}`, { active: false }).expect(200);
		expect((await paid()).body.code).toBe("PRODUCT_INACTIVE");
	});
});

describe("POST /api/checkout: 3. card checks", () => {
	test("When the card's BIN is blacklisted, then BIN_BLACKLIST and the processor is never called", async () => {
		// Arrange
		const blocked = await createShop(app);
		await admin(app).post(`/accounts/${blocked.accountId}/bin-blacklist`, { bin: "55555555" }).expect(201);

		// Act
		const res = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.mastercard });

		// Assert
		expect(res.body.code).toBe("BIN_BLACKLIST");
		for (const midId of blocked.mids) expect(await processorOperations(`midId=${midId}`)).toEqual([]);
	});

	test.each([
		["the processor's verification fails", { card: CARDS.failsVerification }],
		["the card has expired", { expiry: "0120" }],
		["the number fails the Luhn check", { card: "4242424242424241" }],
		["the CVC is too short for the brand", { card: CARDS.amex, cvc: "123" }],
	])("When %s, then CREDITCARD_VALIDATION and nothing is charged", async (_, options) => {
		const email = uniqueEmail();

		const res = await submitCheckout(app, shop, { productId: shop.products.charge, email, ...options });

		expect(res.body).toEqual({ code: "CREDITCARD_VALIDATION", message: expect.any(String) });
		expect(await customersOf(shop.accountId, email)).toEqual([]);
	});
});

describe("POST /api/checkout: 3. blocked buyers (docs/disputes.md#protection)", () => {
	/** What the shop's MIDs were asked to do with cards of this BIN. */
	const operationsOn = async (blocked: Shop, cardBin: string) =>
		(await Promise.all(blocked.mids.map(midId => processorOperations(`midId=${midId}&cardBin=${cardBin}`)))).flat();
	/** A card as billing blocks it after a dispute: by the checkout's keyed fingerprint. */
	const blockCard = (accountId: number, card: string) =>
		app.broker.call("accounts.blockBuyer", {
			accountId,
			card: {
				fingerprint: cardFingerprint(Buffer.from(process.env.CARD_FINGERPRINT_KEY!, "base64"), card),
				bin: card.slice(0, 6),
				last4: card.slice(-4),
			},
			reason: "DISPUTE",
		});

	test("When an operator blocks an email, then its very next checkout gets BIN_BLACKLIST and nothing is verified; another email pays; once unblocked, it pays", async () => {
		// Arrange: a paid checkout, so that the shop's context (which blocks no one yet) is cached on the checkout node.
		const blocked = await createShop(app);
		const email = uniqueEmail();
		expect((await submitCheckout(app, blocked, { productId: blocked.products.charge })).body.code).toBe("OK");
		await admin(app).post(`/accounts/${blocked.accountId}/blocked-buyers`, { email: email.toUpperCase() }).expect(201);

		// Act
		const refused = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.mastercard, email });
		const verifiedWhileBlocked = await operationsOn(blocked, "555555");
		const another = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.mastercard });
		await admin(app)
			.delete(`/accounts/${blocked.accountId}/blocked-buyers/email/${encodeURIComponent(email)}`)
			.expect(200);
		const unblocked = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.mastercard, email });

		// Assert
		expect(refused.body).toEqual({ code: "BIN_BLACKLIST", message: "This card cannot be used here" });
		expect(verifiedWhileBlocked).toEqual([]);
		expect(await customersOf(blocked.accountId, email)).toEqual([expect.objectContaining({ status: "ACTIVE" })]);
		expect([another.body.code, unblocked.body.code]).toEqual(["OK", "OK"]);
		expect(await operationsOn(blocked, "555555")).not.toEqual([]);
	});

	test("When billing blocks a card, then it gets BIN_BLACKLIST whatever the email, unverified, and another card of the same email pays", async () => {
		// Arrange
		const blocked = await createShop(app);
		const email = uniqueEmail();
		await blockCard(blocked.accountId, CARDS.mastercard);

		// Act
		const refused = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.mastercard, email });
		const otherCard = await submitCheckout(app, blocked, { productId: blocked.products.charge, card: CARDS.visa, email });

		// Assert
		expect(refused.body.code).toBe("BIN_BLACKLIST");
		expect(await operationsOn(blocked, "555555")).toEqual([]);
		expect(otherCard.body.code).toBe("OK");
	});

	test("When a card update's new card, or its customer's email, is blocked, then BIN_BLACKLIST and the customer keeps the old card", async () => {
		// Arrange
		const blocked = await createShop(app);
		const email = uniqueEmail();
		const paid = await submitCheckout(app, blocked, { productId: blocked.products.charge, email });
		const customerId = paid.body.customerId as number;
		await blockCard(blocked.accountId, CARDS.mastercard);
		const sessionId = (await cardUpdateSession(app, blocked, customerId).expect(200)).text;

		// Act
		const blockedCard = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });
		await admin(app).post(`/accounts/${blocked.accountId}/blocked-buyers`, { email }).expect(201);
		const blockedEmail = await submitCardUpdate(app, sessionId, { card: CARDS.amex });

		// Assert
		expect([blockedCard.body.code, blockedEmail.body.code]).toEqual(["BIN_BLACKLIST", "BIN_BLACKLIST"]);
		const read = await app.http().get(`/api/customer/${customerId}`).set(bearer(blocked));
		expect(read.body).toMatchObject({ cardBin: "424242" });
	});
});

describe("POST /api/checkout: 4. duplicate subscriptions", () => {
	test("When the same email and card subscribe to the same product again, then ALREADY_SUBSCRIBED", async () => {
		const email = uniqueEmail();
		const first = await submitCheckout(app, shop, { productId: shop.products.charge, email });

		const again = await submitCheckout(app, shop, { productId: shop.products.charge, email: email.toUpperCase() });

		expect(first.body.code).toBe("OK");
		expect(again.body.code).toBe("ALREADY_SUBSCRIBED");
	});

	test("When the same email uses another card, or the same card another product, then both are OK", async () => {
		const email = uniqueEmail();
		expect((await submitCheckout(app, shop, { productId: shop.products.charge, email })).body.code).toBe("OK");

		const otherCard = await submitCheckout(app, shop, { productId: shop.products.charge, email, card: CARDS.mastercard });
		const otherProduct = await submitCheckout(app, shop, { productId: shop.products.schedule, email });

		expect([otherCard.body.code, otherProduct.body.code]).toEqual(["OK", "OK"]);
	});

	test("When the product allows multiple subscriptions, then the same email and card subscribe twice", async () => {
		const productId = (
			await admin(app).post(`/accounts/${shop.accountId}/products`, {
				name: "Multi",
				amount: 3,
				currency: "EUR",
				billing: "CHARGE",
				merchantAccountGroup: "default",
				allowMultipleSubscriptions: true,
			})
		).body.id;
		const email = uniqueEmail();

		const first = await submitCheckout(app, shop, { productId, email });
		const second = await submitCheckout(app, shop, { productId, email });

		expect([first.body.code, second.body.code]).toEqual(["OK", "OK"]);
	});

	test("When two identical checkouts arrive at once on one session, then one is OK and the other ALREADY_SUBSCRIBED", async () => {
		// Arrange
		const body = await checkoutBody(app, shop, { productId: shop.products.charge });

		// Act
		const answers = await Promise.all([app.http().post("/api/checkout").send(body), app.http().post("/api/checkout").send(body)]);

		// Assert
		expect(answers.map(a => a.body.code).sort()).toEqual(["ALREADY_SUBSCRIBED", "OK"]);
		const customers = await customersOf(shop.accountId, body.email);
		expect(customers).toHaveLength(1);
	});

	test("When five identical checkouts arrive at once on five sessions, then exactly one subscription exists", async () => {
		const email = uniqueEmail();
		const bodies = await Promise.all(Array.from({ length: 5 }, () => checkoutBody(app, shop, { productId: shop.products.charge, email })));

		const answers = await Promise.all(bodies.map(body => app.http().post("/api/checkout").send(body)));

		const codes = answers.map(a => a.body.code);
		expect(codes.filter(c => c === "OK")).toHaveLength(1);
		expect(codes.filter(c => c === "ALREADY_SUBSCRIBED")).toHaveLength(4);
	});

	test("When two different buyers race on one session, then only one pays and the other gets SESSION_USED", async () => {
		const sessionId = await newSession(app, shop);
		const bodies = await Promise.all([
			checkoutBody(app, shop, { productId: shop.products.charge, sessionId }),
			checkoutBody(app, shop, { productId: shop.products.charge, sessionId, card: CARDS.mastercard }),
		]);

		const answers = await Promise.all(bodies.map(body => app.http().post("/api/checkout").send(body)));

		expect(answers.map(a => a.body.code).sort()).toEqual(["OK", "SESSION_USED"]);
	});
});

describe("POST /api/checkout: 5. payment", () => {
	test("When the charge is declined, then PAYMENT_DECLINED with a DECLINED transaction and no active customer, and the session can be used again", async () => {
		// Arrange
		const sessionId = await newSession(app, shop);
		const email = uniqueEmail();

		// Act
		const declined = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds, sessionId, email });
		const retry = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId, email });

		// Assert
		expect(declined.body.code).toBe("PAYMENT_DECLINED");
		const customers = await customersOf(shop.accountId, email);
		expect(customers.map(c => c.status).sort()).toEqual(["ACTIVE", "DECLINED"]);
		const failed = customers.find(c => c.status === "DECLINED")!;
		const [transaction] = await transactionsOf(shop.accountId, failed.id);
		const read = await app.http().get(`/api/transaction/${transaction.id}`).set(bearer(shop));
		expect(read.body).toMatchObject({ success: false, status: "DECLINED", type: "SUBSCRIPTION_START", refundStatus: "NOT_REFUNDABLE" });
		expect(retry.body.code).toBe("OK");
	});

	test("When the processor keeps failing, then PROCESSING_ERROR, an ERROR transaction, and nothing charged", async () => {
		const email = uniqueEmail();

		const res = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.processorError, email });

		expect(res.body.code).toBe("PROCESSING_ERROR");
		const [failed] = await customersOf(shop.accountId, email);
		expect(failed.status).toBe("DECLINED");
		const transactions = await transactionsOf(shop.accountId, failed.id);
		expect(transactions).toEqual([expect.objectContaining({ status: "ERROR", success: false })]);
		expect(await processorOperations("cardBin=400000&kind=charge&status=APPROVED")).toEqual([]);
	});

	test("When a production account has no processor configured, then PROCESSING_ERROR saying so", async () => {
		// Arrange
		const live = await createMerchant(app, { environment: "production" });
		await admin(app)
			.post(`/accounts/${live.accountId}/merchant-accounts`, { name: "Live MID", group: "default", cardTypes: ["visa"] })
			.expect(201);
		const productId = (
			await admin(app).post(`/accounts/${live.accountId}/products`, {
				name: "Live",
				amount: 5,
				currency: "EUR",
				billing: "CHARGE",
				merchantAccountGroup: "default",
			})
		).body.id;

		// Act
		const res = await submitCheckout(app, live, { productId });

		// Assert
		expect(res.body).toEqual({ code: "PROCESSING_ERROR", message: "No payment processor is configured for this production account" });
	});
});

describe("POST /api/checkout: malformed requests", () => {
	test.each([
		["a required field is missing", { email: undefined }, "email"],
		["the email is not an email", { email: "not-an-email" }, "email"],
		["productId is a string of letters", { productId: "abc" }, "productId"],
		["the expiry is not MMYY", { cardExpiry: "13/30" }, "cardExpiry"],
		["an unknown field is sent", { cardNumber: "4242424242424242" }, "cardNumber"],
		["sessionId is a NoSQL operator", { sessionId: { $ne: "x" } }, "sessionId"],
	])("When %s, then 400 INVALID_REQUEST naming the field", async (_, overrides, field) => {
		const body = { ...(await checkoutBody(app, shop, { productId: shop.products.charge })), ...overrides };

		const res = await app.http().post("/api/checkout").send(body);

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ code: "INVALID_REQUEST", errors: expect.arrayContaining([expect.objectContaining({ field })]) });
	});

	test.each([
		["a card number as a string", { note: "paid with 4242 4242 4242 4242" }, "additionalData.note must not hold a card number"],
		["a card number as a JSON number", { ref: 4242424242424242 }, "additionalData.ref must be a number below 10^12 in magnitude"],
		["a millisecond timestamp as a number", { at: 1764000000000 }, "additionalData.at must be a number below 10^12 in magnitude"],
	])("When additionalData holds %s, then 400 INVALID_REQUEST saying why and nothing is stored", async (_, additionalData, message) => {
		const body = await checkoutBody(app, shop, { productId: shop.products.charge, extra: { additionalData } });

		const res = await app.http().post("/api/checkout").send(body);

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ code: "INVALID_REQUEST", errors: [{ field: "additionalData", message: expect.stringContaining(message) }] });
	});

	test("When additionalData holds a fraction whose digits look like a card number, then the checkout goes through: a fraction is not a card", async () => {
		const body = await checkoutBody(app, shop, {
			productId: shop.products.oneOff,
			extra: { additionalData: { rate: 0.4111111111111111, at: 1764000000 } },
		});

		const res = await app.http().post("/api/checkout").send(body);

		expect(res.body.code).toBe("OK");
	});

	test("When a card field is not a JWE for our key, then 400 INVALID_REQUEST naming it", async () => {
		const body = await checkoutBody(app, shop, { productId: shop.products.charge });

		const garbage = await app
			.http()
			.post("/api/checkout")
			.send({ ...body, encryptedCardNumber: "eyJhbGciOiJub25lIn0.x.y.z.w" });
		const plain = await app
			.http()
			.post("/api/checkout")
			.send({ ...body, encryptedCvc: "123" });

		expect(garbage.status).toBe(400);
		expect(garbage.body.errors).toEqual([expect.objectContaining({ field: "encryptedCardNumber" })]);
		expect(plain.body.errors).toEqual([expect.objectContaining({ field: "encryptedCvc" })]);
	});

	test("When the body is not valid JSON, then 400 INVALID_REQUEST too", async () => {
		const res = await app.http().post("/api/checkout").set("Content-Type", "application/json").send('{"sessionId": ');

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ code: "INVALID_REQUEST", errors: [{ field: "(body)", message: "Request body is not valid JSON" }] });
	});

	test("When X-API-Version is unsupported, then the checkout answers UNSUPPORTED_API_VERSION like the rest of /api", async () => {
		const body = await checkoutBody(app, shop, { productId: shop.products.charge });

		const res = await app.http().post("/api/checkout").set("X-API-Version", "2.0").send(body);

		expect(res.status).toBe(400);
		expect(res.body.error).toBe("UNSUPPORTED_API_VERSION");
	});

	test("When the JWE holds something other than digits, then 400", async () => {
		const body = await checkoutBody(app, shop, { productId: shop.products.charge });

		const res = await app
			.http()
			.post("/api/checkout")
			.send({ ...body, encryptedCardNumber: await encrypt(app, '{"$gt":""}') });

		expect(res.status).toBe(400);
	});

	test("When the checkout is called, then no token is needed and CORS allows any origin", async () => {
		const body = await checkoutBody(app, shop, { productId: shop.products.charge });

		const res = await app.http().post("/api/checkout").set("Origin", "https://shop.example.com").send(body);

		expect(res.body.code).toBe("OK");
		expect(res.headers["access-control-allow-origin"]).toBe("*");
	});
});

describe("GET /api/checkout/key", () => {
	test("When the key is fetched without a token, then it is a public RSA JWK for RSA-OAEP-256 with a kid", async () => {
		const res = await app.http().get("/api/checkout/key");

		expect(res.status).toBe(200);
		expect(res.body).toEqual({ kty: "RSA", n: expect.any(String), e: "AQAB", kid: expect.any(String), alg: "RSA-OAEP-256", use: "enc" });
		expect(res.body.d).toBeUndefined();
	});
});

describe("Customers of a checkout", () => {
	test("When a customer belongs to another account, then 200 with an empty body", async () => {
		const ok = await submitCheckout(app, shop, { productId: shop.products.charge });
		const other = await createMerchant(app);

		const res = await app.http().get(`/api/customer/${ok.body.customerId}`).set(bearer(other));

		expect(res.status).toBe(200);
		expect(res.text).toBe("");
	});

	test("When the id is not an integer, then 400", async () => {
		const res = await customer(Number.NaN);

		expect(res.status).toBe(400);
	});
});
