// Errors that cross the service boundary to the gateway. Domain functions
// return string-enum errors; actions turn the ones a caller must see into an
// ApiError, and the gateway maps every ApiErrorType to HTTP in one place
// (services/gateway/http-errors.ts).
import { Errors } from "moleculer";

export enum ApiErrorType {
	BadRequest = "BAD_REQUEST",
	Unauthorized = "UNAUTHORIZED",
	/** The dashboard: signed in, but not allowed (a viewer's change, a missing CSRF token, another origin). */
	Forbidden = "FORBIDDEN",
	/** A charge the issuer declined or the processor failed (a subscription's change): nothing changed. */
	PaymentDeclined = "PAYMENT_DECLINED",
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
	[ApiErrorType.Forbidden]: 403,
	[ApiErrorType.PaymentDeclined]: 402,
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
const OUTAGE_ERRORS = new Set([
	// Moleculer: the service, its node or the transporter.
	"ServiceNotFoundError",
	"ServiceNotAvailableError",
	"ServiceUnavailableError",
	"RequestTimeoutError",
	"RequestSkippedError",
	// The node it went to left the registry, or its request was lost with a NATS connection (shared/lost-requests.ts).
	"RequestRejectedError",
	"BrokerDisconnectedError",
	"QueueIsFullError",
	// A processor (Stripe) took a request and could not be reached to tell what it did: it is looked up later.
	"OutcomeUnknownError",
	// The MongoDB driver and mongoose: the database server cannot be reached, or went away mid-operation.
	"MongooseServerSelectionError",
	"MongoServerSelectionError",
	"MongoNetworkError",
	"MongoNetworkTimeoutError",
	"MongoNotConnectedError",
	"MongoPoolClearedError",
	"PoolClearedOnNetworkError",
	"MongoPoolClosedError",
	"MongoWaitQueueTimeoutError",
	"MongoServerClosedError",
	"MongoTopologyClosedError",
	"MongoOperationTimeoutError",
]);

/** Server answers that mean "not now" (shutting down, stepping down, unreachable host), as the driver's retryable codes. */
const TRANSIENT_SERVER_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

/**
 * Socket errors the driver sometimes lets through unwrapped when the database
 * server goes away mid-write (mongodb 6: "This socket has been ended by the
 * other party", EPIPE). Where Moleculer wrapped one (an error from another
 * realm becomes a MoleculerError), only its message says what it was.
 */
const SOCKET_ERROR_CODES = new Set(["EPIPE", "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "ETIMEDOUT"]);
const SOCKET_ERROR_MESSAGE = /socket has been ended by the other party|\b(EPIPE|ECONNRESET|ECONNREFUSED)\b/;
/** The driver's own network errors, by message: "connection 4 to 127.0.0.1:27017 closed" (or "timed out"). */
const BULK_NETWORK_MESSAGE = /^connection \S+ to \S+ (closed|timed out)$/;

type MaybeOutage = { name?: string; code?: unknown; message?: string; errorResponse?: unknown };

export function isOutageError(err: MaybeOutage): boolean {
	if (err.name && OUTAGE_ERRORS.has(err.name)) return true;
	if (err.name === "MongoBulkWriteError") return isBulkWriteOutage(err);
	if (isSocketError(err)) return true;
	if (err.name === "MongoServerError" && typeof err.code === "number") return TRANSIENT_SERVER_CODES.has(err.code);
	// mongoose gave up waiting for a connection to run a queued operation.
	return err.name === "MongooseError" && /buffering timed out/.test(err.message ?? "");
}

/**
 * A bulk write (insertMany, bulkWrite) cut off by the outage carries the network error it met, and its message
 * (all that crosses the transporter from another node).
 */
function isBulkWriteOutage(err: MaybeOutage): boolean {
	if (typeof err.errorResponse === "object" && err.errorResponse !== null) return isOutageError(err.errorResponse as { name?: string });
	return BULK_NETWORK_MESSAGE.test(err.message ?? "") || SOCKET_ERROR_MESSAGE.test(err.message ?? "");
}

function isSocketError(err: MaybeOutage): boolean {
	if (typeof err.code === "string" && SOCKET_ERROR_CODES.has(err.code)) return true;
	return (err.name === "Error" || err.name === "MoleculerError") && SOCKET_ERROR_MESSAGE.test(err.message ?? "");
}
