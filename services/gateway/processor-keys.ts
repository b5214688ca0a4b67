// A MID's processor key (Stripe's secret key, Adyen's API key) and its webhook
// signing secret (Stripe's whsec_…, Adyen's HMAC key) are sealed here, the
// moment the admin request arrives, to the payments service's public key (JWE,
// RSA-OAEP-256 + A256GCM): they cross the transporter and the accounts service
// sealed, and only payments can read them. What the rules and the answers need
// of them (test or live, the last 4 characters) travels beside them.
import { CompactEncrypt, importJWK, type JWK } from "jose";
import {
	ADYEN_API_KEY_PATTERN,
	ADYEN_HMAC_KEY_PATTERN,
	PROCESSOR_KEY_PATTERN,
	WEBHOOK_SECRET_PATTERN,
} from "../../shared/contracts/payments";
import { ApiError, ApiErrorType } from "../../shared/errors";

const PROCESSOR_KEY = new RegExp(PROCESSOR_KEY_PATTERN);
const WEBHOOK_SECRET = new RegExp(WEBHOOK_SECRET_PATTERN);
const ADYEN_API_KEY = new RegExp(ADYEN_API_KEY_PATTERN);
const ADYEN_HMAC_KEY = new RegExp(ADYEN_HMAC_KEY_PATTERN);
/** payments' key is asked again after this long, so a rotation of CREDENTIALS_PRIVATE_KEY reaches every gateway. */
const KEY_CACHE_MS = 60_000;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function createProcessorKeySealer(fetchKey: () => Promise<JWK>, now: () => number = Date.now) {
	let cached: { until: number; key: Promise<{ key: CryptoKey | Uint8Array; kid?: string }> } | null = null;

	function publicKey() {
		if (!cached || cached.until <= now()) {
			const key = fetchKey().then(async jwk => ({ key: (await importJWK(jwk, "RSA-OAEP-256")) as CryptoKey, kid: jwk.kid }));
			cached = { until: now() + KEY_CACHE_MS, key };
			key.catch(() => {
				cached = null;
			});
		}
		return cached.key;
	}

	async function sealed(secret: string): Promise<string> {
		const { key, kid } = await publicKey();
		return new CompactEncrypt(new TextEncoder().encode(secret))
			.setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", kid })
			.encrypt(key);
	}

	/** What the admin request says of a Stripe MID, its key and webhook secret sealed. */
	async function sealStripe(processor: Record<string, unknown>) {
		const { secretKey, webhookSecret, ...rest } = processor;
		if (typeof secretKey !== "string" || !PROCESSOR_KEY.test(secretKey))
			throw new ApiError(
				ApiErrorType.BadRequest,
				"processor.secretKey must be a Stripe secret or restricted key: sk_test_…, sk_live_…, rk_test_… or rk_live_…",
			);
		if (webhookSecret !== undefined && (typeof webhookSecret !== "string" || !WEBHOOK_SECRET.test(webhookSecret)))
			throw new ApiError(
				ApiErrorType.BadRequest,
				"processor.webhookSecret must be the signing secret of the MID's endpoint in Stripe's dashboard: whsec_ and 8 to 247 letters or digits",
			);
		return {
			...rest,
			...(await sealedKeys(secretKey, webhookSecret)),
			keyMode: secretKey.split("_")[1],
		};
	}

	/** What the admin request says of an Adyen MID, its API key and HMAC key sealed; test or live by its live URL prefix. */
	async function sealAdyen(processor: Record<string, unknown>) {
		const { apiKey, hmacKey, ...rest } = processor;
		if (typeof apiKey !== "string" || !ADYEN_API_KEY.test(apiKey))
			throw new ApiError(
				ApiErrorType.BadRequest,
				"processor.apiKey must be the API key of an Adyen API credential: 16 to 512 printable characters, no spaces",
			);
		if (hmacKey !== undefined && (typeof hmacKey !== "string" || !ADYEN_HMAC_KEY.test(hmacKey)))
			throw new ApiError(
				ApiErrorType.BadRequest,
				"processor.hmacKey must be the HMAC key of the MID's notification webhook in Adyen's Customer Area: 64 hexadecimal digits",
			);
		return {
			...rest,
			...(await sealedKeys(apiKey, hmacKey)),
			keyMode: rest.liveUrlPrefix === undefined ? "test" : "live",
		};
	}

	async function sealedKeys(secretKey: string, webhookSecret: string | undefined) {
		return {
			sealedSecretKey: await sealed(secretKey),
			secretKeyLast4: secretKey.slice(-4),
			...(webhookSecret === undefined
				? {}
				: { sealedWebhookSecret: await sealed(webhookSecret), webhookSecretLast4: webhookSecret.slice(-4) }),
		};
	}

	/** The request's `processor`, its keys sealed; anything else is passed on for the action's own validation. */
	return async function sealProcessor(processor: unknown): Promise<unknown> {
		if (!isObject(processor)) return processor;
		if (processor.type === "stripe") return sealStripe(processor);
		if (processor.type === "adyen") return sealAdyen(processor);
		return processor;
	};
}
