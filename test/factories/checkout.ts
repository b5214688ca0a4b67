// A shop ready to sell, and checkouts submitted as the browser SDK submits
// them: the card encrypted to the service's public key as JWE.
import { randomBytes } from "node:crypto";
import { CompactEncrypt, importJWK, type JWK } from "jose";
import type { TestApp } from "../setup/app";
import { admin, bearer, createMerchant, type TestMerchant } from "./merchant";

export const CARDS = {
	visa: "4242424242424242",
	mastercard: "5555555555554444",
	amex: "378282246310005",
	failsVerification: "4000000000000002",
	insufficientFunds: "4000000000009995",
	declinesRenewals: "4000000000000341",
	renewalsInsufficientFunds: "4000000000001018",
	renewalsDoNotHonor: "4000000000001026",
	renewalsLostCard: "4000000000001034",
	renewalsStolenCard: "4000000000001042",
	renewalsExpiredCard: "4000000000001059",
	renewalsRefusedByFirstMid: "4000000000001067",
	/** 3-D Secure (docs/authentication.md). */
	frictionless: "4000000000003055",
	challenge: "4000000000003220",
	notEnrolled: "4000000000003238",
	authenticationUnavailable: "4000000000003246",
	renewalsNeedAuthentication: "4000000000003253",
	renewalsDeclinedTwice: "4000000000001075",
	processorError: "4000000000000119",
	refundsDeclined: "4000000000005126",
	discover: "6011111111111117",
	/** Each approved charge disputed 3 days after it, and the dispute lost 12 days after it (docs/disputes.md). */
	disputedLost: "4000000000002602",
} as const;

export interface Shop extends TestMerchant {
	products: Record<"charge" | "preauthorize" | "schedule" | "oneOff", number>;
	mids: number[];
}

/** A shop of a sandbox account on the sandbox processor, unless named: a production account, or its MIDs' processor. */
export async function createShop(
	app: TestApp,
	options: { environment?: "sandbox" | "production"; processor?: object } = {},
): Promise<Shop> {
	const merchant = await createMerchant(app, { environment: options.environment ?? "sandbox" });
	const a = admin(app);
	const mids = [];
	const processor = options.processor ? { processor: options.processor } : {};
	for (const body of [
		{ name: "MID A", group: "default", cardTypes: ["visa", "mastercard"], ...processor },
		{ name: "MID B", group: "default", cardTypes: ["visa", "mastercard", "amex"], ...processor },
	]) {
		mids.push((await a.post(`/accounts/${merchant.accountId}/merchant-accounts`, body).expect(201)).body.id);
	}
	const product = async (body: object) =>
		(
			await a
				.post(`/accounts/${merchant.accountId}/products`, {
					name: "P",
					amount: 9.99,
					currency: "EUR",
					merchantAccountGroup: "default",
					...body,
				})
				.expect(201)
		).body.id as number;
	const monthly = { every: 1, unit: "month" };
	return {
		...merchant,
		mids,
		products: {
			charge: await product({ billing: "CHARGE", renewal: monthly }),
			preauthorize: await product({ billing: "PREAUTHORIZE", trialDays: 7, renewal: monthly, amount: 19.99 }),
			schedule: await product({ billing: "SCHEDULE", trialDays: 14, renewal: monthly, amount: 4.99 }),
			oneOff: await product({ billing: "CHARGE", renewal: null, amount: 25 }),
		},
	};
}

let cachedKey: { url: string; jwk: JWK } | undefined;

export async function encrypt(app: TestApp, digits: string): Promise<string> {
	if (cachedKey?.url !== app.url) cachedKey = { url: app.url, jwk: (await app.http().get("/api/checkout/key").expect(200)).body };
	const key = await importJWK(cachedKey.jwk, "RSA-OAEP-256");
	return new CompactEncrypt(new TextEncoder().encode(digits))
		.setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: cachedKey.jwk.kid })
		.encrypt(key);
}

export async function newSession(app: TestApp, merchant: TestMerchant, domain = "shop.example.com"): Promise<string> {
	return (await app.http().post(`/api/session?domain=${domain}`).set(bearer(merchant)).expect(200)).text;
}

export interface CheckoutOptions {
	productId: number;
	card?: string;
	cvc?: string;
	expiry?: string;
	email?: string;
	sessionId?: string;
	landingDomain?: string;
	extra?: Record<string, unknown>;
}

export function uniqueEmail(): string {
	return `buyer-${randomBytes(5).toString("hex")}@example.com`;
}

export async function checkoutBody(app: TestApp, merchant: TestMerchant, options: CheckoutOptions) {
	return {
		sessionId: options.sessionId ?? (await newSession(app, merchant)),
		productId: options.productId,
		email: options.email ?? uniqueEmail(),
		name: "Ada",
		lastName: "Lovelace",
		landingDomain: options.landingDomain ?? "shop.example.com",
		additionalData: { orderRef: "A-1" },
		encryptedCardNumber: await encrypt(app, options.card ?? CARDS.visa),
		encryptedCvc: await encrypt(app, options.cvc ?? (options.card === CARDS.amex ? "1234" : "123")),
		cardExpiry: options.expiry ?? "1234",
		...options.extra,
	};
}

/** Submits a checkout as the SDK does and returns the HTTP answer. */
export async function submitCheckout(app: TestApp, merchant: TestMerchant, options: CheckoutOptions) {
	return app
		.http()
		.post("/api/checkout")
		.send(await checkoutBody(app, merchant, options));
}

/** A card update session for the merchant's customer (POST /api/session with customerId). */
export function cardUpdateSession(app: TestApp, merchant: TestMerchant, customerId: number, domain = "shop.example.com") {
	return app.http().post(`/api/session?domain=${domain}&customerId=${customerId}`).set(bearer(merchant));
}

/** Submits a new card as the frame does in update mode (POST /api/card-update). */
export async function submitCardUpdate(
	app: TestApp,
	sessionId: string,
	options: { card?: string; expiry?: string; landingDomain?: string } = {},
) {
	return app
		.http()
		.post("/api/card-update")
		.send({
			sessionId,
			landingDomain: options.landingDomain ?? "shop.example.com",
			encryptedCardNumber: await encrypt(app, options.card ?? CARDS.mastercard),
			encryptedCvc: await encrypt(app, options.card === CARDS.amex ? "1234" : "123"),
			cardExpiry: options.expiry ?? "1234",
		});
}
