// What the fuzzer accepts as an answer: the documented shapes of docs/api.md
// ("Errors"), no 5xx but the spec's 500 for a bad session domain, and, for
// an endpoint that changes state, a refusal.
import type { EndpointSpec, FuzzRequest } from "./fuzz-requests";
import type { RawResponse } from "./raw-http";

/** The `error` values each status may carry (docs/api.md, Errors). */
export const DOCUMENTED_ERRORS: Record<number, string[]> = {
	400: ["BAD_REQUEST", "UNSUPPORTED_API_VERSION"],
	401: ["UNAUTHORIZED"],
	404: ["NOT_FOUND"],
	405: ["METHOD_NOT_ALLOWED"],
	409: ["CONFLICT"],
	408: ["REQUEST_TIMEOUT"],
	413: ["PAYLOAD_TOO_LARGE"],
	429: ["TOO_MANY_REQUESTS"],
	431: ["HEADERS_TOO_LARGE"],
};

const CHECKOUT_CODES = [
	"SESSION_NOT_FOUND",
	"SESSION_EXPIRED",
	"SESSION_USED",
	"DOMAIN_MISMATCH",
	"PRODUCT_NOT_FOUND",
	"PRODUCT_INACTIVE",
	"NO_MERCHANT_ACCOUNT",
	"BIN_BLACKLIST",
	"CREDITCARD_VALIDATION",
	"ALREADY_SUBSCRIBED",
	"PAYMENT_DECLINED",
	"PROCESSING_ERROR",
];

/** A card update's refusals (docs/recovery.md#card-update): the checkout's that apply, and its own. */
const CARD_UPDATE_CODES = [...CHECKOUT_CODES.filter(code => !code.startsWith("PRODUCT_")), "CUSTOMER_NOT_UPDATABLE", "TRY_AGAIN"];

/** Files outside public/ that a traversal must never reach. */
const LEAKS = [/"name":\s*"subscription-payment-service"/, /root:x:0:0/, /PRIVATE KEY/, /"adminToken":\s*"/, /\[extensions\]/];

function parseJson(body: string): unknown {
	try {
		return JSON.parse(body);
	} catch {
		return undefined;
	}
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function exactKeys(value: Record<string, unknown>, allowed: string[], required: string[]): boolean {
	return Object.keys(value).every(k => allowed.includes(k)) && required.every(k => k in value);
}

/** Problems with an error answer's shape; none when it is documented. */
function errorShapeProblems(spec: EndpointSpec | null, req: FuzzRequest, res: RawResponse): string[] {
	if (req.method === "HEAD") return [];
	const type = String(res.headers["content-type"] ?? "");
	const body = parseJson(res.body);
	const checkoutLike =
		spec?.route === "POST /api/checkout" ||
		spec?.route === "POST /api/card-update" ||
		spec?.route === "POST /api/checkout/continue" ||
		spec?.route === "POST /api/card-update/continue";
	if (checkoutLike && res.status === 400 && isObject(body) && "code" in body) {
		const errors = body.errors;
		const ok =
			exactKeys(body, ["code", "errors"], ["code", "errors"]) &&
			body.code === "INVALID_REQUEST" &&
			Array.isArray(errors) &&
			errors.length > 0 &&
			errors.every(
				e =>
					isObject(e) &&
					exactKeys(e, ["field", "message"], ["field", "message"]) &&
					typeof e.field === "string" &&
					typeof e.message === "string",
			);
		return ok ? [] : [`checkout 400 not {code: INVALID_REQUEST, errors}: ${res.body.slice(0, 200)}`];
	}
	if (!type.startsWith("application/json")) return [`${res.status} with Content-Type ${JSON.stringify(type)}: ${res.body.slice(0, 200)}`];
	if (!isObject(body)) return [`${res.status} body is not a JSON object: ${res.body.slice(0, 200)}`];
	const problems: string[] = [];
	if (!exactKeys(body, ["error", "status", "message"], ["error", "status"]))
		problems.push(`${res.status} body keys ${Object.keys(body).join(",")}`);
	if (body.status !== res.status) problems.push(`${res.status} body says status ${String(body.status)}`);
	if (!(DOCUMENTED_ERRORS[res.status] ?? []).includes(String(body.error)))
		problems.push(`${res.status} with undocumented error ${JSON.stringify(body.error)}`);
	if ("message" in body && typeof body.message !== "string") problems.push(`${res.status} message is not a string`);
	if (res.status === 401 && "message" in body) problems.push("401 with a message (the spec's body is exactly {error, status})");
	return problems;
}

/** Whether a 2xx answer of an endpoint that changes state is one of its documented refusals. */
function isRefusal(spec: EndpointSpec, res: RawResponse): boolean {
	const body = parseJson(res.body);
	switch (spec.route) {
		case "GET /api/refund/:id":
		case "POST /api/unsubscribe/:customerId":
			return isObject(body) && body.success === false && typeof body.message === "string";
		case "POST /api/checkout":
			return isObject(body) && typeof body.code === "string" && CHECKOUT_CODES.includes(body.code) && typeof body.message === "string";
		case "POST /api/card-update":
			return isObject(body) && typeof body.code === "string" && CARD_UPDATE_CODES.includes(body.code) && typeof body.message === "string";
		// A session with no payment in progress (the world's sessions have none).
		case "POST /api/checkout/continue":
		case "POST /api/card-update/continue":
			return isObject(body) && typeof body.code === "string" && body.code.startsWith("SESSION_") && typeof body.message === "string";
		// A challenge no checkout asked for.
		case "POST /api/sandbox/challenges/:challengeId":
			return isObject(body) && body.accepted === false;
		case "POST /admin/accounts/:accountId/webhooks/redeliver":
			return isObject(body) && body.redelivered === 0;
		default:
			return false;
	}
}

/** Everything wrong with one answer to one fuzz request (empty: as documented). */
export function answerProblems(spec: EndpointSpec | null, req: FuzzRequest, res: RawResponse): string[] {
	if (res.status < 200 || res.status > 599) return [`status ${res.status}`];
	if (res.status >= 500) {
		const documented =
			spec?.route === "POST /api/session" &&
			req.method === "POST" &&
			res.status === 500 &&
			String(res.headers["content-type"]).startsWith("text/plain") &&
			res.body.startsWith("Error with domain in session ");
		return documented ? [] : [`${res.status}: ${res.body.slice(0, 300)}`];
	}
	const leak = LEAKS.find(pattern => pattern.test(res.body));
	if (leak) return [`the answer shows a file outside public/ (${leak})`];
	if (res.status >= 400) return errorShapeProblems(spec, req, res);
	// A CORS preflight is answered without running anything: 204, no body.
	if (req.method === "OPTIONS" && res.status === 204 && res.body === "") return [];
	// A 2xx or 3xx: for an endpoint that changes state only a refusal; for a read, only the
	// spec's "not found" (200 with an empty body) unless the defect was one a read may answer.
	if (spec?.changesState && !isRefusal(spec, res)) return [`accepted (${res.status}): ${res.body.slice(0, 200)}`];
	if (!spec?.changesState && req.mustRefuse && !(res.status === 200 && res.body === ""))
		return [`answered (${res.status}): ${res.body.slice(0, 200)}`];
	return [];
}
