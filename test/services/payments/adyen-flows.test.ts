// A sandbox account whose MIDs are on Adyen goes through the flows a merchant
// uses, over HTTP, with the Adyen connector talking to Prism serving Adyen's
// published Checkout API document (ADYEN_API_BASE), through a recorder that
// keeps what reached "Adyen" (test/factories/prism-recorder.ts). Prism checks
// every request against the document (a fault answers 422, which no flow here
// could pass) and answers its examples: authorised payments, "received"
// modifications. Refusals, 3-D Secure and lost answers are not among them:
// adyen-outcomes.test.ts tests their mapping as pure functions.
import { type PrismServer, prismViolations } from "../../../dev/adyen-servers";
import { ADYEN_KEYS, type AdyenApp, startAdyenApp } from "../../factories/adyen-app";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import type { PrismRecorder } from "../../factories/prism-recorder";
import type { TestApp } from "../../setup/app";

jest.setTimeout(90_000);

interface TransactionView {
	id: number;
	type: string;
	status: string;
	amount: number;
	processorReference: string | null;
	declineReason: string | null;
}

describe("An Adyen MID, on Adyen's published contract", () => {
	let started: AdyenApp;
	let prism: PrismServer;
	let recorder: PrismRecorder;
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		started = await startAdyenApp();
		({ prism, recorder, app } = started);
		shop = await adyenShop();
	}, 120_000);
	afterAll(() => started?.stop());
	afterEach(() => {
		// Every request our connector sent was valid against Adyen's document.
		expect(recorder.exchanges.filter(e => e.status >= 400).map(e => [e.path, e.status, e.answer])).toEqual([]);
		expect(prismViolations(prism.log())).toEqual([]);
		recorder.prefer = () => undefined;
	});

	/** A sandbox account of its own (its own test clock), its two MIDs on Adyen's test platform. */
	const adyenShop = () => createShop(app, { processor: { type: "adyen", ...ADYEN_KEYS, merchantAccount: "ShopComTest" } });
	const transactionsOf = async (customerId: number, of: Shop = shop): Promise<TransactionView[]> =>
		(await admin(app).get(`/accounts/${of.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	const payments = () => recorder.exchanges.filter(e => e.path === "/payments");
	const since = (count: number) => recorder.exchanges.slice(count);

	test("When an Adyen MID is created, then the admin API shows its merchant account and the last characters of its keys, never the keys", async () => {
		// Act
		const mid = (await admin(app).get(`/accounts/${shop.accountId}/merchant-accounts`).expect(200)).body[0];

		// Assert
		expect(mid.processor).toEqual({
			type: "adyen",
			keyMode: "test",
			merchantAccount: "ShopComTest",
			liveUrlPrefix: null,
			apiKeyLast4: "test",
			hmacKeyLast4: "A056",
		});
		expect(JSON.stringify(mid)).not.toContain(ADYEN_KEYS.apiKey.slice(0, 20));
	});

	test("When a buyer pays a CHARGE product, then Adyen is asked once for the card, verified with its CVC at zero and stored, then charged the amount for a subscription, each under its own Idempotency-Key", async () => {
		// Arrange
		const before = recorder.exchanges.length;

		// Act
		const res = await submitCheckout(app, shop, { productId: shop.products.charge });

		// Assert
		expect(res.body).toMatchObject({ code: "OK", customerId: expect.any(Number) });
		const [charge] = await transactionsOf(res.body.customerId);
		expect(charge).toMatchObject({ type: "SUBSCRIPTION_START", status: "APPROVED", amount: 9.99, processorReference: "993617895204576J" });
		const sent = since(before).filter(e => e.path === "/payments");
		expect(sent.map(e => e.body)).toEqual([
			expect.objectContaining({
				merchantAccount: "ShopComTest",
				amount: { currency: "EUR", value: 0 },
				paymentMethod: expect.objectContaining({ type: "scheme", cvc: "123", expiryYear: expect.stringMatching(/^20\d\d$/) }),
				storePaymentMethod: true,
				shopperInteraction: "Ecommerce",
				recurringProcessingModel: "Subscription",
			}),
			expect.objectContaining({
				merchantAccount: "ShopComTest",
				amount: { currency: "EUR", value: 999 },
				shopperInteraction: "Ecommerce",
				recurringProcessingModel: "Subscription",
				// The payment's own return route (docs/authentication.md), should the issuer ask for a challenge.
				returnUrl: expect.stringMatching(/\/api\/processors\/adyen\/returns\/[A-Za-z0-9_-]{43}$/),
			}),
		]);
		expect(sent[1].body.paymentMethod).not.toHaveProperty("cvc");
		expect(sent[0].headers["x-api-key"]).toBe(ADYEN_KEYS.apiKey);
		const keys = sent.map(e => e.headers["idempotency-key"]);
		expect(new Set(keys).size).toBe(2);
		expect(sent[0].body.shopperReference).toBe(sent[1].body.shopperReference);
	});

	test("When Adyen stores the card at its first payment, then the renewal a month later charges the stored card, merchant-initiated, without the card's number", async () => {
		// Arrange: the document's subscription example answers the first payments with the stored card's reference.
		const own = await adyenShop();
		recorder.prefer = path => (path === "/payments" ? "example=subscription-first-transaction" : undefined);
		const paidAt = recorder.exchanges.length;
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.charge })).body;
		recorder.prefer = () => undefined;
		// The stored card's id, as the example gives it.
		const firstAnswer = recorder.exchanges.slice(paidAt).find(e => e.path === "/payments")?.answer as {
			additionalData: Record<string, string>;
		};
		const storedId =
			firstAnswer.additionalData["tokenization.storedPaymentMethodId"] ?? firstAnswer.additionalData["recurring.recurringDetailReference"];
		const before = recorder.exchanges.length;

		// Act
		await advanceClock(app, own, 32);

		// Assert
		const renewal = (await transactionsOf(customerId, own)).find(t => t.type === "RENEWAL");
		expect(renewal).toMatchObject({ status: "APPROVED", amount: 9.99, processorReference: "993617895204576J" });
		const sent = since(before).filter(e => e.path === "/payments");
		expect(sent.map(e => e.body)).toEqual([
			expect.objectContaining({
				amount: { currency: "EUR", value: 999 },
				paymentMethod: { type: "scheme", storedPaymentMethodId: storedId },
				shopperInteraction: "ContAuth",
				recurringProcessingModel: "Subscription",
			}),
		]);
		expect(sent[0].body).not.toHaveProperty("storePaymentMethod");
	});

	test("When a charge is refunded in part and then in full, then Adyen takes two refunds of the payment adding up to its amount, and both are REFUNDED transactions", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const [charge] = await transactionsOf(customerId);
		const before = recorder.exchanges.length;

		// Act
		const partial = await app.http().get(`/api/refund/${charge.id}?amountToRefund=4.00`).set(bearer(shop));
		const rest = await app.http().get(`/api/refund/${charge.id}`).set(bearer(shop));

		// Assert
		expect([partial.body, rest.body]).toEqual([
			{ success: true, message: "Refund success with amount 4" },
			{ success: true, message: "Refund success with amount 5.99" },
		]);
		const refunds = since(before).filter(e => e.path === `/payments/${charge.processorReference}/refunds`);
		expect(refunds.map(e => e.body.amount)).toEqual([
			{ currency: "EUR", value: 400 },
			{ currency: "EUR", value: 599 },
		]);
		expect((await transactionsOf(customerId)).filter(t => t.type === "REFUNDED").map(t => [t.status, t.amount])).toEqual([
			["APPROVED", -4],
			["APPROVED", -5.99],
		]);
	});

	test("When a buyer takes a PREAUTHORIZE trial, then Adyen holds the amount for a manual capture, and at the trial's end the hold is captured for it", async () => {
		// Arrange
		const own = await adyenShop();
		const before = recorder.exchanges.length;
		const { customerId } = (await submitCheckout(app, own, { productId: own.products.preauthorize })).body;
		const hold = since(before).find(e => e.path === "/payments" && (e.body.amount as { value: number }).value === 1999);

		// Act
		await advanceClock(app, own, 8);

		// Assert
		expect(hold?.body.additionalData).toEqual({ manualCapture: "true" });
		const captures = since(before).filter(e => e.path === "/payments/993617895204576J/captures");
		expect(captures.map(e => e.body)).toEqual([
			expect.objectContaining({ merchantAccount: "ShopComTest", amount: { currency: "EUR", value: 1999 } }),
		]);
		expect((await transactionsOf(customerId, own)).map(t => [t.type, t.status])).toEqual(
			expect.arrayContaining([["SUBSCRIPTION_START", "APPROVED"]]),
		);
	});

	test("When a PREAUTHORIZE trial is unsubscribed, then its hold is cancelled at Adyen", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.preauthorize })).body;
		const before = recorder.exchanges.length;

		// Act
		await app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		// Assert
		const cancels = since(before).filter(e => e.path === "/payments/993617895204576J/cancels");
		expect(cancels.map(e => e.body)).toEqual([expect.objectContaining({ merchantAccount: "ShopComTest", reference: expect.any(String) })]);
		expect(payments().length).toBeGreaterThan(0);
	});
});
