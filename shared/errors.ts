// Errors that cross the service boundary to the gateway. Domain functions
// return string-enum errors; actions turn the ones a caller must see into an
// ApiError, and the gateway maps every ApiErrorType to HTTP in one place
// (services/gateway/http-errors.ts).
import { Errors } from "moleculer";

export enum ApiErrorType {
	BadRequest = "BAD_REQUEST",
	Unauthorized = "UNAUTHORIZED",
	NotFound = "NOT_FOUND",
	Conflict = "CONFLICT",
	PayloadTooLarge = "PAYLOAD_TOO_LARGE",
	TooManyRequests = "TOO_MANY_REQUESTS",
	UnsupportedApiVersion = "UNSUPPORTED_API_VERSION",
	ServiceUnavailable = "SERVICE_UNAVAILABLE",
	/** The spec's one documented 5xx: POST /api/session with a bad domain. */
	InvalidSessionDomain = "INVALID_SESSION_DOMAIN",
	/** POST /api/checkout with a malformed body: `{code: "INVALID_REQUEST", errors}`. */
	InvalidCheckout = "INVALID_CHECKOUT",
}

const STATUS: Record<ApiErrorType, number> = {
	[ApiErrorType.BadRequest]: 400,
	[ApiErrorType.Unauthorized]: 401,
	[ApiErrorType.NotFound]: 404,
	[ApiErrorType.Conflict]: 409,
	[ApiErrorType.PayloadTooLarge]: 413,
	[ApiErrorType.TooManyRequests]: 429,
	[ApiErrorType.UnsupportedApiVersion]: 400,
	[ApiErrorType.ServiceUnavailable]: 503,
	[ApiErrorType.InvalidSessionDomain]: 500,
	[ApiErrorType.InvalidCheckout]: 400,
};

export class ApiError extends Errors.MoleculerError {
	constructor(type: ApiErrorType, message?: string, data?: unknown) {
		super(message ?? type, STATUS[type], type, data);
		this.name = "ApiError";
	}
}

export function statusOf(type: ApiErrorType): number {
	return STATUS[type];
}

export function isApiErrorType(value: unknown): value is ApiErrorType {
	return typeof value === "string" && value in STATUS;
}

/** Errors meaning a service, its node or its database cannot answer now: the gateway answers 503, the circuit breaker counts them. */
export const OUTAGE_ERRORS = [
	"ServiceNotFoundError",
	"ServiceNotAvailableError",
	"ServiceUnavailableError",
	"RequestTimeoutError",
	"RequestSkippedError",
	"BrokerDisconnectedError",
	"QueueIsFullError",
	"MongooseServerSelectionError",
	"MongoNetworkError",
	"MongoServerSelectionError",
	"MongoNotConnectedError",
];
