// The checks every route's requests share, before their action's schema.
import type { IncomingMessage } from "node:http";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { checkInputPlacement, checkParameterNames, type GatewayRequest, readUrlParameters } from "./request-params";

const SUPPORTED_API_VERSIONS = ["1.0"];

/**
 * Set on /api from the token and the Idempotency-Key header, and `by`, set only by the customer portal's calls: a
 * request naming them itself is refused.
 */
export const API_SET_BY_GATEWAY = ["accountId", "idempotencyKey", "by", "baseUrl"];

export function checkApiVersion(req: IncomingMessage): void {
	const version = req.headers["x-api-version"];
	if (version !== undefined && !SUPPORTED_API_VERSIONS.includes(String(version))) {
		throw new ApiError(ApiErrorType.UnsupportedApiVersion, `Supported versions: ${SUPPORTED_API_VERSIONS.join(", ")}`);
	}
}

/** Every check a request's parameters go through before its action's schema. */
export function checkParameters(req: GatewayRequest, setByGateway: readonly string[] = []): void {
	checkInputPlacement(req);
	checkParameterNames(req, setByGateway);
	readUrlParameters(req);
}

/** The Host header without its port or an IPv6 address's brackets: the domain a checkout session is for. */
/** The request came over TLS to this gateway. */
export const overTls = (req: IncomingMessage): boolean => Boolean((req.socket as { encrypted?: boolean }).encrypted);

/** A cookie set here must be Secure: the request came over TLS, or the gateway sits behind a TLS proxy (DASHBOARD_SECURE_COOKIE=1). */
export const behindTls = (req: IncomingMessage): boolean => overTls(req) || process.env.DASHBOARD_SECURE_COOKIE === "1";

export function hostDomain(req: IncomingMessage): string {
	return String(req.headers.host ?? "")
		.replace(/:\d+$/, "")
		.replace(/^\[|\]$/g, "");
}
