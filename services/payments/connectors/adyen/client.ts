// What every Adyen operation of the connector shares: the official library's
// Checkout API per MID (its API key, test or live platform), sent through our
// HTTP client, the keys we send Adyen for an operation, and what the connector
// keeps per MID and vault card (the stored payment method of a recurring card)
// and per operation (Adyen's notifications, a first payment's 3-D Secure challenge).
//
// The HTTP client is the library's documented extension point (`new Client(config, httpClient)`):
// its own speaks HTTPS only, and a test server (Prism, ADYEN_API_BASE) speaks HTTP. It
// also tells a connection refused (nothing reached Adyen) from a request that may have.
import { createHash } from "node:crypto";
import { CheckoutAPI, Client, type Config, EnvironmentEnum, HttpClientException } from "@adyen/api-library";
import type ClientInterface from "@adyen/api-library/lib/src/httpClient/clientInterface";
import type { IRequest } from "@adyen/api-library/lib/src/typings/requestOptions";
import type { MidContext } from "../connector";
import type { SettlingEvent } from "./notifications";

/** Adyen's test platform's Checkout endpoint, as the library builds it; ADYEN_API_BASE replaces it. */
const TEST_CHECKOUT = /^https:\/\/checkout-test\.adyen\.com\/v\d+/;

/** What the connector keeps of one card on one MID's Adyen merchant account. */
export interface AdyenCardKeys {
	/** Adyen's id of the stored card (`storedPaymentMethodId`, the former `recurringDetailReference`). */
	storedPaymentMethodId: string;
	/** The shopper it is stored for. */
	shopperReference: string;
}

/** Where the connector keeps, per MID and vault card, what it stored at that MID's Adyen merchant account. */
export interface AdyenCardStore {
	get(midId: number, cardToken: string): Promise<AdyenCardKeys | null>;
	set(midId: number, cardToken: string, value: AdyenCardKeys): Promise<void>;
}

/** Adyen could not be reached, or did not answer in time. `neverSent`: the connection was refused, so nothing reached it. */
export class AdyenUnreachable extends Error {
	constructor(
		message: string,
		readonly neverSent: boolean,
	) {
		super(message);
	}
}

/** A first payment's challenge: its card (kept at Adyen once paid), and the redirectResult the buyer came back with (null: not yet). */
export interface AdyenChallenge {
	cardToken: string;
	redirectResult: string | null;
}

/**
 * What Adyen notified of an operation of ours (notifications.ts), by the reference we sent with it; and a first
 * payment's 3-D Secure challenge (challenges.ts), by the operation's return token (returnTokenOf).
 */
export interface AdyenOutcomeStore {
	get(
		scope: { accountId: number; merchantAccount: string },
		reference: string,
		event: SettlingEvent,
	): Promise<{ success: boolean; pspReference: string; reason: string | null } | null>;
	/** Adyen asked the buyer to take the issuer's page: kept before the frame is told, so the buyer's return is taken. */
	challengeAsked(token: string, asked: { pspReference: string | null; cardToken: string }): Promise<void>;
	/** The challenge asked for the token, with the redirectResult the buyer came back with (null: not yet); null when none was asked. */
	challengeOf(token: string): Promise<AdyenChallenge | null>;
}

export interface AdyenApis {
	checkout: CheckoutAPI;
	/** The merchant account every request names. */
	merchantAccount: string;
}

export interface AdyenClients {
	/** The MID's Checkout API; null when the MID has no API key or merchant account. */
	apisOf(mid: MidContext): AdyenApis | null;
	cards: AdyenCardStore;
	outcomes: AdyenOutcomeStore;
	/** Where an issuer's page sends the buyer back for an operation (Adyen asks for one on every payment): our return route. */
	returnUrlOf(midId: number, key: string): string;
}

/** Our HTTP client for the library: fetch, a deadline per request, and the test server in place of Adyen's test platform. */
class AdyenHttp implements ClientInterface {
	constructor(
		private readonly apiBase: string | undefined,
		private readonly timeoutMs: number,
	) {}

	async request(endpoint: string, json: string | Buffer, config: Config, _required: boolean, options?: IRequest.Options): Promise<string> {
		const url = this.apiBase && config.environment === EnvironmentEnum.TEST ? endpoint.replace(TEST_CHECKOUT, this.apiBase) : endpoint;
		const headers: Record<string, string> = { "Content-Type": "application/json", "X-API-Key": config.apiKey ?? "" };
		if (options?.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
		let res: Response;
		try {
			res = await fetch(url, {
				method: options?.method ?? "POST",
				headers,
				body: options?.method === "GET" ? undefined : json.toString(),
				signal: AbortSignal.timeout(this.timeoutMs),
			});
		} catch (err) {
			const code = ((err as { cause?: { code?: unknown } }).cause?.code ?? "") as string;
			throw new AdyenUnreachable(`Adyen could not be reached: ${code || (err as Error).name}`, code === "ECONNREFUSED");
		}
		const body = await res.text().catch(() => {
			throw new AdyenUnreachable("Adyen's answer was cut off", false);
		});
		if (res.ok) return body;
		const apiError = parsed(body);
		throw new HttpClientException({
			message: `HTTP Exception: ${res.status}`,
			statusCode: res.status,
			errorCode: typeof apiError?.errorCode === "string" ? apiError.errorCode : undefined,
			responseBody: body,
		});
	}
}

function parsed(body: string): Record<string, unknown> | null {
	try {
		const value = JSON.parse(body);
		return typeof value === "object" && value !== null ? value : null;
	} catch {
		return null;
	}
}

export function createAdyenClients(options: {
	apiBase?: string;
	timeoutMs: number;
	cards: AdyenCardStore;
	outcomes: AdyenOutcomeStore;
	buyerBaseUrl: string;
}): AdyenClients {
	const http = new AdyenHttp(options.apiBase?.replace(/\/+$/, ""), options.timeoutMs);
	const apis = new Map<string, CheckoutAPI>();
	return {
		cards: options.cards,
		outcomes: options.outcomes,
		returnUrlOf: (midId, key) => `${options.buyerBaseUrl}${ADYEN_RETURNS_PATH}/${returnTokenOf(midId, key)}`,
		apisOf(mid) {
			const adyen = mid.adyen;
			if (!mid.secretKey || !adyen) return null;
			const id = `${mid.secretKey}\n${adyen.liveUrlPrefix ?? ""}`;
			let checkout = apis.get(id);
			if (!checkout) {
				const client = new Client(
					{
						apiKey: mid.secretKey,
						environment: adyen.liveUrlPrefix ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
						...(adyen.liveUrlPrefix ? { liveEndpointUrlPrefix: adyen.liveUrlPrefix } : {}),
					},
					http,
				);
				checkout = new CheckoutAPI(client);
				apis.set(id, checkout);
			}
			return { checkout, merchantAccount: adyen.merchantAccount };
		},
	};
}

/**
 * The `reference` a payment carries at Adyen (at most 80 characters): our idempotency key, so a notification names the
 * operation it concerns; a longer key is hashed.
 */
export function referenceOf(key: string): string {
	return key.length <= 80 ? key : `${HASHED_REFERENCE}${sha256(key).slice(0, 64)}`;
}

/** What a hashed reference starts with: it names no key of ours that can be read back. */
export const HASHED_REFERENCE = "sha256:";

/** Adyen's Idempotency-Key for one request of an operation (at most 64 characters): a repeat gets Adyen's first answer. */
export function idempotencyOf(key: string, step: string): IRequest.Options {
	return { idempotencyKey: sha256(`${key}\n${step}`) };
}

/** The gateway's route the buyer comes back to from Adyen's page, by the operation's return token (services/gateway/endpoints.ts). */
export const ADYEN_RETURNS_PATH = "/api/processors/adyen/returns";

/**
 * The token naming an operation's return from Adyen's page: the SHA-256 of `<midId>:<our key>`, in base64url (43
 * characters). A first payment's key carries 96 random bits of its attempt, so no one can make another's token.
 */
export function returnTokenOf(midId: number, key: string): string {
	return createHash("sha256").update(`${midId}:${key}`).digest("base64url");
}

/** The shopper a vault card is stored for at Adyen: the card token's hash, so nothing of ours is readable there. */
export function shopperReferenceOf(cardToken: string): string {
	return `card-${sha256(cardToken).slice(0, 40)}`;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
