// Load through HTTP with autocannon (closed loop: each connection sends its
// next request when the previous one is answered). Latencies are taken per
// request from autocannon's own timings, or per checkout (session + submission)
// from the two requests' callbacks; every sample is kept.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { SHOP_DOMAIN, type Shop } from "./shop";
import { type Percentiles, percentiles, round } from "./stats";

/** Without a callback autocannon returns its event emitter, which is also a promise of the result. */
function start(options: autocannon.Options): autocannon.Instance & PromiseLike<autocannon.Result> {
	return autocannon(options) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
}

export interface CheckoutTarget extends Pick<Shop, "url" | "apiToken" | "productId" | "encryptedCardNumber" | "encryptedCvc"> {}

export interface CheckoutLoadResult {
	connections: number;
	seconds: number;
	/** Checkouts answered OK. */
	ok: number;
	/** Anything else, by reason: "session 500", "checkout PROCESSING_ERROR", "timeout", … */
	failures: Record<string, number>;
	checkoutsPerSecond: number;
	/** Session creation + checkout submission, as the merchant's server and the buyer see it. */
	checkout: Percentiles;
	/** POST /api/checkout alone. */
	submit: Percentiles;
	/** POST /api/session alone. */
	session: Percentiles;
}

interface CheckoutContext {
	startedAt: number;
	sentAt: number;
	sessionId: string | null;
}

/**
 * Each "request" of this load is a checkout: POST /api/session with the API
 * token, then POST /api/checkout with that session and a fresh email (so the
 * duplicate-subscription check never refuses it). `onOk` hears of every
 * customer created, with the time its answer arrived (Date.now()). With
 * `checkouts`, it makes that many instead of running for `seconds`, and
 * resolves once every one has been answered.
 */
export async function checkoutLoad(
	target: CheckoutTarget,
	options: { connections: number; onOk?: (customerId: number, answeredAt: number) => void } & ({ seconds: number } | { checkouts: number }),
): Promise<CheckoutLoadResult> {
	const checkout: number[] = [];
	const submit: number[] = [];
	const session: number[] = [];
	const failures: Record<string, number> = {};
	const fail = (reason: string) => (failures[reason] = (failures[reason] ?? 0) + 1);
	const run = randomBytes(4).toString("hex");
	let sequence = 0;
	let ok = 0;

	const instance = start({
		url: target.url,
		connections: options.connections,
		// A checkout is two requests.
		...("checkouts" in options ? { amount: options.checkouts * 2 } : { duration: options.seconds }),
		timeout: 30,
		requests: [
			{
				method: "POST",
				path: `/api/session?domain=${SHOP_DOMAIN}`,
				headers: { authorization: `Bearer ${target.apiToken}` },
				setupRequest(request, context) {
					(context as CheckoutContext).startedAt = performance.now();
					return request;
				},
				onResponse(status, body, context) {
					const ctx = context as CheckoutContext;
					session.push(performance.now() - ctx.startedAt);
					ctx.sessionId = status === 200 ? body : null;
					if (status !== 200) fail(`session ${status}`);
				},
			},
			{
				method: "POST",
				path: "/api/checkout",
				headers: { "content-type": "application/json" },
				setupRequest(request, context) {
					const ctx = context as CheckoutContext;
					// No session: autocannon starts over with the session request.
					if (!ctx.sessionId) return null as never;
					ctx.sentAt = performance.now();
					const body = JSON.stringify({
						sessionId: ctx.sessionId,
						productId: target.productId,
						email: `bench-${run}-${sequence++}@example.com`,
						name: "Ada",
						lastName: "Lovelace",
						landingDomain: SHOP_DOMAIN,
						additionalData: { orderRef: "bench" },
						encryptedCardNumber: target.encryptedCardNumber,
						encryptedCvc: target.encryptedCvc,
						cardExpiry: "1234",
					});
					return { ...request, body };
				},
				onResponse(status, body, context) {
					const ctx = context as CheckoutContext;
					const now = performance.now();
					let answer: { code?: string; customerId?: number } = {};
					try {
						answer = JSON.parse(body);
					} catch {
						// counted below
					}
					if (status !== 200 || answer.code !== "OK") return void fail(`checkout ${status} ${answer.code ?? ""}`.trim());
					ok++;
					checkout.push(now - ctx.startedAt);
					submit.push(now - ctx.sentAt);
					options.onOk?.(answer.customerId!, Date.now());
				},
			},
		],
	});
	const started = performance.now();
	const result = await instance;
	const seconds = (performance.now() - started) / 1000;
	if (result.timeouts) failures.timeout = result.timeouts;
	if (result.errors - result.timeouts > 0) failures["connection error"] = result.errors - result.timeouts;
	return {
		connections: options.connections,
		seconds: round(seconds),
		ok,
		failures,
		checkoutsPerSecond: round(ok / seconds),
		checkout: percentiles(checkout),
		submit: percentiles(submit),
		session: percentiles(session),
	};
}

export interface ReadLoadResult {
	connections: number;
	seconds: number;
	requests: number;
	requestsPerSecond: number;
	latency: Percentiles;
	/** Answers that were not 200 with a non-empty body (an empty 200 means "not found"). */
	failures: number;
}

/** GETs of `paths`, picked at random, with the API token. */
export async function readLoad(
	url: string,
	apiToken: string,
	paths: string[],
	options: { connections: number; seconds: number },
): Promise<ReadLoadResult> {
	const latencies: number[] = [];
	let failures = 0;
	const instance = start({
		url,
		connections: options.connections,
		duration: options.seconds,
		timeout: 30,
		requests: [
			{
				method: "GET",
				headers: { authorization: `Bearer ${apiToken}` },
				setupRequest: request => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)] }),
				onResponse(status, body) {
					if (status !== 200 || body.length === 0) failures++;
				},
			},
		],
	});
	instance.on("response", (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
	const started = performance.now();
	const result = await instance;
	const seconds = (performance.now() - started) / 1000;
	return {
		connections: options.connections,
		seconds: round(seconds),
		requests: latencies.length,
		requestsPerSecond: round(latencies.length / seconds),
		latency: percentiles(latencies),
		failures: failures + result.errors,
	};
}
