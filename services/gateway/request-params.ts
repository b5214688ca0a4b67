// What a request may send, and how its values are read, before the action's
// JSON Schema judges them. Body values are JSON and keep their JSON type (the
// validator never coerces). Path and query values are text: each is read by
// the rule of the type its action declares, and nothing else is guessed.
import type { IncomingMessage } from "node:http";
import { ADYEN_REDIRECT_RESULT_PATTERN, ADYEN_RETURN_TOKEN_PATTERN } from "../../shared/contracts/payments";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { endpointFor } from "./endpoints";

export interface GatewayRequest extends IncomingMessage {
	$alias?: { action?: string; path?: string };
	$action?: { params?: { properties?: Record<string, { type?: unknown }> } };
	$params: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
	query?: Record<string, unknown>;
}

export interface FieldError {
	field: string;
	message: string;
}

/** A 400 naming the fields, as the validator's: the checkout lists them in `errors`. */
export function badParameters(errors: FieldError[]): ApiError {
	return new ApiError(ApiErrorType.BadRequest, errors.map(e => e.message).join("; "), errors);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parameters arrive where the endpoint takes them: the query for GET, HEAD, DELETE and POST /api/session, a JSON object body otherwise. */
export function checkInputPlacement(req: GatewayRequest): void {
	const endpoint = endpointFor(req.$alias?.action);
	const takesQuery = req.method === "GET" || req.method === "HEAD" || req.method === "DELETE";
	const input = endpoint?.input ?? (takesQuery ? "query" : "body");
	const body = req.body;
	const hasBody = body !== undefined && !(isPlainObject(body) && Object.keys(body).length === 0);
	if (input === "query" && hasBody) throw new ApiError(ApiErrorType.BadRequest, "This endpoint takes no request body");
	if (input === "body") {
		if (hasBody && !isPlainObject(body)) throw new ApiError(ApiErrorType.BadRequest, "Request body must be a JSON object");
		if (Object.keys(req.query ?? {}).length > 0) {
			throw new ApiError(ApiErrorType.BadRequest, "Query parameters are not accepted here; send them in the JSON body");
		}
	}
}

/** Per alias path, computed once: every request of a route asks. */
const parameterNames = new Map<string, string[]>();

function pathParameterNames(req: GatewayRequest): string[] {
	const path = req.$alias?.path ?? "";
	const known = parameterNames.get(path);
	if (known) return known;
	const names = [...path.matchAll(/:(\w+)/g)].map(match => match[1]);
	parameterNames.set(path, names);
	return names;
}

/** The top-level names in the raw query string, as sent. */
function queryNames(req: GatewayRequest): string[] {
	const url = req.originalUrl ?? req.url ?? "";
	const at = url.indexOf("?");
	if (at < 0) return [];
	return url
		.slice(at + 1)
		.split("&")
		.filter(Boolean)
		.map(part => {
			const name = part.split("=")[0].replace(/\+/g, " ");
			try {
				return decodeURIComponent(name).split("[")[0];
			} catch {
				return name.split("[")[0];
			}
		});
}

/**
 * Names a request may not send as parameters: `__proto__` (merging it into the
 * action's parameters would replace their prototype), a path parameter's name
 * (the path would silently win), and those the gateway sets itself.
 */
export function checkParameterNames(req: GatewayRequest, setByGateway: readonly string[] = []): void {
	const body = isPlainObject(req.body) ? req.body : {};
	const fromPath = pathParameterNames(req);
	const sent = [...Object.keys(body), ...Object.keys(req.query ?? {})];
	const refused = sent.filter(name => name === "__proto__" || fromPath.includes(name) || setByGateway.includes(name));
	// The query parser drops names such as __proto__, constructor or toString without a word: refuse them too.
	const parsed = req.query ?? {};
	const dropped = queryNames(req).filter(name => !Object.hasOwn(parsed, name));
	const names = [...new Set([...refused, ...dropped])].map(name => name || "(a parameter without a name)");
	if (names.length) throw badParameters(names.map(name => ({ field: name, message: `${name} is not allowed` })));
}

/** Text to the declared type: integers and booleans by their plain spelling only ("0x10", "1e3", " 12", "1" for true are refused). */
function readText(name: string, text: string, type: unknown): unknown | FieldError {
	if (type === "integer") {
		return /^[0-9]+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : { field: name, message: `${name} must be integer` };
	}
	if (type === "number") {
		return /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : { field: name, message: `${name} must be number` };
	}
	if (type === "boolean") {
		return text === "true" ? true : text === "false" ? false : { field: name, message: `${name} must be true or false` };
	}
	// Strings (amounts included: they stay text, so no decimal is lost to a float) and enums.
	return text;
}

function isFieldError(value: unknown): value is FieldError {
	return isPlainObject(value) && typeof value.field === "string" && typeof value.message === "string";
}

/**
 * Reads path and query values into the types their action declares, in
 * place. Each parameter is sent once: a repeated one (`?a=1&a=2`, `?a[]=1`) or
 * a nested one (`?a[b]=1`) is refused rather than one value picked.
 */
export function readUrlParameters(req: GatewayRequest): void {
	const properties = req.$action?.params?.properties ?? {};
	const names = [...new Set([...Object.keys(req.query ?? {}), ...pathParameterNames(req)])];
	const errors: FieldError[] = [];
	for (const name of names) {
		const read = readUrlParameter(name, req.$params[name], Object.hasOwn(properties, name) ? properties[name].type : undefined);
		if (isFieldError(read)) errors.push(read);
		else if (read !== undefined) req.$params[name] = read;
	}
	if (errors.length) throw badParameters(errors);
}

/** One path or query value in its declared type, or why it cannot be read; undefined for a value that is not text. */
function readUrlParameter(name: string, value: unknown, type: unknown): unknown {
	if (Array.isArray(value)) return { field: name, message: `${name} must be given once` };
	if (isPlainObject(value)) return { field: name, message: `${name} must be a single value` };
	return typeof value === "string" ? readText(name, value, type) : undefined;
}

/**
 * A processor's signed event (Stripe's, Adyen's): the path's values, the body as the text that came, byte for byte (a
 * parsed and re-serialised body would not match its signature), and the signature header if the processor uses one.
 * Nothing else is taken.
 */
export function readSignedEvent(req: GatewayRequest, signatureHeader: string | undefined): void {
	if (queryNames(req).length > 0) throw new ApiError(ApiErrorType.BadRequest, "Query parameters are not accepted here");
	readUrlParameters(req);
	if (typeof req.body !== "string" || req.body === "")
		throw new ApiError(ApiErrorType.BadRequest, "The body must be the event as JSON (Content-Type: application/json)");
	const signature = signatureHeader ? req.headers[signatureHeader] : undefined;
	const path = Object.fromEntries(pathParameterNames(req).map(name => [name, req.$params[name]]));
	req.$params = { ...path, payload: req.body, ...(typeof signature === "string" ? { signature } : {}) };
}

const RETURN_TOKEN = new RegExp(ADYEN_RETURN_TOKEN_PATTERN);
const REDIRECT_RESULT = new RegExp(ADYEN_REDIRECT_RESULT_PATTERN);

/**
 * The buyer an Adyen MID's 3-D Secure page sent back (`GET /api/processors/adyen/returns/{token}?redirectResult=…`):
 * the path's token and the query's redirectResult, each passed on only when well-formed, and the redirectResult on a
 * GET only, so a HEAD keeps nothing. Nothing else is read, and nothing is refused: whatever came, the buyer is sent on
 * to the card frame's return page, which asks what the payment came to.
 */
export function readBuyerReturn(req: GatewayRequest): void {
	const token = req.$params.token;
	const redirectResult = req.method === "GET" ? req.query?.redirectResult : undefined;
	req.$params = {
		...(typeof token === "string" && RETURN_TOKEN.test(token) ? { token } : {}),
		...(typeof redirectResult === "string" && REDIRECT_RESULT.test(redirectResult) ? { redirectResult } : {}),
	};
}
