// Every error the gateway answers goes through here: one place that maps
// errors to the documented HTTP status and body.
import { ApiErrorType, isApiErrorType, isOutageError, statusOf } from "../../shared/errors";

export interface HttpAnswer {
	status: number;
	contentType: string;
	body: string;
	headers?: Record<string, string>;
	/** True for answers that mean a bug or an outage, worth an error log. */
	unexpected?: boolean;
}

interface ErrorLike {
	name?: string;
	message?: string;
	code?: unknown;
	type?: unknown;
	status?: unknown;
	data?: unknown;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Bodies are `{error, status}` plus `message` where there is something to explain. */
export function jsonError(type: string, status: number, message?: string, headers?: Record<string, string>): HttpAnswer {
	return {
		status,
		contentType: JSON_TYPE,
		body: JSON.stringify(message ? { error: type, status, message } : { error: type, status }),
		headers,
	};
}

function validationMessage(data: unknown): string {
	const errors = Array.isArray(data) ? (data as { message?: string }[]) : [];
	return (
		errors
			.map(e => e.message)
			.filter(Boolean)
			.join("; ") || "Invalid request"
	);
}

function domainText(domain: unknown): string {
	if (domain === undefined || domain === null) return "";
	return typeof domain === "string" ? domain : JSON.stringify(domain);
}

function fieldErrors(data: unknown): { field: string; message: string }[] {
	const errors = Array.isArray(data) ? (data as { field?: string; message?: string }[]) : [];
	return errors.map(e => ({ field: e.field ?? "(body)", message: e.message ?? "is invalid" }));
}

/** POST /api/checkout speaks the SDK's language: every malformed request is `{code: "INVALID_REQUEST", errors}`. */
export function toCheckoutAnswer(error: unknown): HttpAnswer {
	const answer = toHttpAnswer(error);
	if (answer.status !== 400 || JSON.parse(answer.body).error !== ApiErrorType.BadRequest) return answer;
	const err = (error ?? {}) as ErrorLike;
	const errors = fieldErrors(err.data);
	const body = {
		code: "INVALID_REQUEST",
		errors: errors.length ? errors : [{ field: "(body)", message: JSON.parse(answer.body).message }],
	};
	return { status: 400, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

export function toHttpAnswer(error: unknown): HttpAnswer {
	const err = (error ?? {}) as ErrorLike;
	if (isApiErrorType(err.type)) return apiErrorAnswer(err as ErrorLike & { type: ApiErrorType });
	// Moleculer's parameter validation (Ajv) failed, or the checkout found an undecryptable card.
	if (err.type === "VALIDATION_ERROR" || err.name === "ValidationError" || err.type === ApiErrorType.InvalidCheckout) {
		return jsonError(ApiErrorType.BadRequest, 400, validationMessage(err.data));
	}
	return bodyParserAnswer(err) ?? moleculerWebAnswer(err) ?? unexpectedAnswer(err);
}

/** Our own errors (shared/errors.ts): their type is the answer's `error`. */
function apiErrorAnswer(err: ErrorLike & { type: ApiErrorType }): HttpAnswer {
	switch (err.type) {
		case ApiErrorType.InvalidSessionDomain:
			return {
				status: 500,
				contentType: "text/plain; charset=utf-8",
				body: `Error with domain in session ${domainText((err.data as { domain?: unknown } | undefined)?.domain)}`,
			};
		case ApiErrorType.Unauthorized:
		case ApiErrorType.NotFound:
			// Our own ApiErrors may explain (admin: "No account with this accountId"); moleculer-web's 404 has nothing to add.
			return jsonError(err.type, statusOf(err.type), err.name === "ApiError" && err.message !== err.type ? err.message : undefined);
		case ApiErrorType.InvalidCheckout:
			return jsonError(ApiErrorType.BadRequest, 400, validationMessage(err.data));
		case ApiErrorType.TooManyRequests: {
			const retryAfter = (err.data as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
			return jsonError(err.type, 429, err.message, retryAfter ? { "Retry-After": String(retryAfter) } : undefined);
		}
		default:
			return jsonError(err.type, statusOf(err.type), err.message);
	}
}

/**
 * body-parser's errors: too large, malformed JSON, unsupported charset or encoding. They carry `status`, or `code`
 * once moleculer-web has wrapped them (route middlewares).
 */
function bodyParserAnswer(err: ErrorLike): HttpAnswer | undefined {
	if (err.status === 413 || err.type === "entity.too.large") {
		return jsonError(ApiErrorType.PayloadTooLarge, 413, "Request body is larger than the limit");
	}
	if (err.type === "charset.unsupported") return jsonError(ApiErrorType.BadRequest, 400, "Request body must be JSON in UTF-8");
	// zlib's errors (Z_DATA_ERROR, brotli's ERR__ERROR_…): a body whose Content-Encoding it is not.
	if (typeof err.code === "string" && /^(Z_|ERR__)/.test(err.code))
		return jsonError(ApiErrorType.BadRequest, 400, "Request body could not be decompressed");
	if (err.type === "encoding.unsupported")
		return jsonError(ApiErrorType.BadRequest, 400, "Content-Encoding must be gzip, deflate, br or identity");
	if ((typeof err.type === "string" && /^(entity|request|stream)\./.test(err.type)) || err.status === 400 || err.status === 415) {
		return jsonError(ApiErrorType.BadRequest, 400, "Request body is not valid JSON");
	}
	return undefined;
}

/** moleculer-web's own answers. */
function moleculerWebAnswer(err: ErrorLike): HttpAnswer | undefined {
	if (err.code === 404 && (err.type === "NOT_FOUND" || err.name === "NotFoundError")) return jsonError(ApiErrorType.NotFound, 404);
	if (err.type === "UNABLE_DECODE_PARAM") return jsonError(ApiErrorType.BadRequest, 400, "The path is not valid percent-encoding");
	if (err.code === 429) return jsonError(ApiErrorType.TooManyRequests, 429, "Too many requests");
	return undefined;
}

/** An outage (a service behind the gateway is missing, timed out, or the transporter is down) or a bug. */
function unexpectedAnswer(err: ErrorLike): HttpAnswer {
	if (isOutageError(err)) {
		return { ...jsonError(ApiErrorType.ServiceUnavailable, 503, "The service is temporarily unavailable, please retry"), unexpected: true };
	}
	return { ...jsonError("INTERNAL_ERROR", 500, "Internal error"), unexpected: true };
}
