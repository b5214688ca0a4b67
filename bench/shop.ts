// A merchant ready to sell, set up through the admin API as an operator
// would (see test/factories/checkout.ts), and the card the browser SDK would
// send: number and CVC encrypted as JWE to the service's public key.
import { CompactEncrypt, importJWK, type JWK } from "jose";
import { ADMIN_TOKEN } from "./topology";

export interface Shop {
	url: string;
	accountId: number;
	apiToken: string;
	productId: number;
	/** The card as the SDK submits it. Encrypting once is enough: the service decrypts every submission anyway. */
	encryptedCardNumber: string;
	encryptedCvc: string;
}

export const SHOP_DOMAIN = "shop.example.com";
const VISA = "4242424242424242";

/** An admin API call as an operator would make it; anything but 2xx throws. */
export async function adminCall<T>(url: string, method: string, path: string, body?: object): Promise<T> {
	const res = await fetch(`${url}/admin${path}`, {
		method,
		headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
		body: body ? JSON.stringify(body) : undefined,
	});
	if (!res.ok) throw new Error(`${method} /admin${path}: ${res.status} ${await res.text()}`);
	return (await res.json()) as T;
}

async function encrypt(jwk: JWK, digits: string): Promise<string> {
	const key = await importJWK(jwk, "RSA-OAEP-256");
	return new CompactEncrypt(new TextEncoder().encode(digits))
		.setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: jwk.kid })
		.encrypt(key);
}

/** A sandbox account whose webhooks go to `webhookUrl`, two MIDs and a monthly CHARGE product. */
export async function createShop(url: string, webhookUrl: string | null): Promise<Shop> {
	const account = await adminCall<{ id: number; apiToken: string }>(url, "POST", "/accounts", {
		name: "Bench shop",
		environment: "sandbox",
		webhookUrl,
	});
	for (const mid of [
		{ name: "MID A", group: "default", cardTypes: ["visa", "mastercard"] },
		{ name: "MID B", group: "default", cardTypes: ["visa", "mastercard", "amex"] },
	]) {
		await adminCall(url, "POST", `/accounts/${account.id}/merchant-accounts`, mid);
	}
	const product = await adminCall<{ id: number }>(url, "POST", `/accounts/${account.id}/products`, {
		name: "Monthly",
		amount: 9.99,
		currency: "EUR",
		billing: "CHARGE",
		renewal: { every: 1, unit: "month" },
		merchantAccountGroup: "default",
	});
	const jwk = (await (await fetch(`${url}/api/checkout/key`)).json()) as JWK;
	return {
		url,
		accountId: account.id,
		apiToken: account.apiToken,
		productId: product.id,
		encryptedCardNumber: await encrypt(jwk, VISA),
		encryptedCvc: await encrypt(jwk, "123"),
	};
}
