// The service with its Adyen MIDs' calls going to Prism serving Adyen's Checkout
// API document (dev/adyen-servers.ts), through the recorder that keeps what
// reached "Adyen" (prism-recorder.ts): what the Adyen tests start.
import { type PrismServer, startPrism } from "../../dev/adyen-servers";
import { startApp, type TestApp } from "../setup/app";
import { type PrismRecorder, startPrismRecorder } from "./prism-recorder";

/** An Adyen API key's shape, and an HMAC key as Adyen's Customer Area makes one (64 hexadecimal digits). */
export const ADYEN_KEYS = {
	apiKey: "AQEyhmfxK4PJbhZKw0m/n3Q5qf3VaY9UCJ1+XWZe9W27jmlZivgnJf0tAbYX5/W8aRGVnYPT5b0QwV1bDb7kfNy1WIxIIkxgBw==-test",
	hmacKey: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
};

/** The merchant account's APIs as paymentRequest takes them, for the request's pure-function tests (no client is called). */
export const PURE_APIS = { checkout: {} as never, merchantAccount: "ShopCom" };

/** An operation on an Adyen MID of merchant account ShopCom under `idempotencyKey`, with a card of number `pan`. */
export const adyenOperation = (idempotencyKey: string, pan = "4111111111111111") => ({
	idempotencyKey,
	mid: { midId: 3, accountId: 1, secretKey: "AQE…", adyen: { merchantAccount: "ShopCom", liveUrlPrefix: null } },
	card: { cardToken: "tok_1", pan, expiry: "0330" },
	amount: 999,
	currency: "EUR",
});

export interface AdyenApp {
	prism: PrismServer;
	recorder: PrismRecorder;
	app: TestApp;
	stop(): Promise<void>;
}

/** `env`: more of the app's settings (another processor's server, shorter timeouts). */
export async function startAdyenApp(env: Record<string, string> = {}): Promise<AdyenApp> {
	const prism = await startPrism();
	const recorder = await startPrismRecorder(prism.url);
	const app = await startApp({ env: { ADYEN_API_BASE: recorder.url, ...env } });
	return {
		prism,
		recorder,
		app,
		async stop() {
			await app.stop();
			await recorder.stop();
			await prism.stop();
		},
	};
}
