// The customer portal's HTTP side (docs/portal.md#security): its page under
// /portal and its JSON API under /portal/api. The link's token is traded once
// for a session token that lives only in an HttpOnly, SameSite=Strict cookie
// scoped to /portal; every change also needs the session's CSRF token in
// X-CSRF-Token and a same-origin request. The portal service checks the
// session and the token; the gateway only carries them, and limits how often
// an address opens links and how often a session asks.
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Context } from "moleculer";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { clientKey } from "./api-auth";
import { checkSameOrigin, cookieToken } from "./dashboard-routes";
import { behindTls, hostDomain } from "./request-checks";
import type { GatewayRequest } from "./request-params";

export const PORTAL_COOKIE = "portal_session";

/** Set by the gateway, refused from a request. */
export const PORTAL_SET_BY_GATEWAY = ["sessionToken", "csrfToken", "domain"];

export interface PortalRouteOptions {
	/** Links opened per minute per client address (PORTAL_OPENS_PER_MINUTE): a guessed token costs a try. */
	opensPerMinute: number;
	/** Requests per minute per session (PORTAL_REQUESTS_PER_MINUTE). */
	requestsPerMinute: number;
}

const tooMany = (message: string) => (rejection: unknown) => {
	const ms = rejection instanceof RateLimiterRes ? rejection.msBeforeNext : 1000;
	throw new ApiError(ApiErrorType.TooManyRequests, message, { retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) });
};

export function createPortalRoutes({ opensPerMinute, requestsPerMinute }: PortalRouteOptions) {
	const opens = new RateLimiterMemory({ points: opensPerMinute, duration: 60 });
	const perSession = new RateLimiterMemory({ points: requestsPerMinute, duration: 60 });

	return {
		/** What the portal's action gets from the request: the link's token is the body's; the session's, the cookie's. */
		async beforeCall(req: GatewayRequest): Promise<void> {
			const action = req.$alias?.action;
			if (action === "portal.open" || action === "portal.requestSignIn") {
				checkSameOrigin(req, "Links are opened only from the portal's own page");
				await opens
					.consume(clientKey(req.socket.remoteAddress))
					.catch(tooMany("Too many links opened from this address: try again in a minute"));
				return;
			}
			const token = cookieToken(req, PORTAL_COOKIE);
			if (token) {
				const key = createHash("sha256").update(token).digest("hex");
				await perSession.consume(key).catch(tooMany("Too many requests in this session: try again in a minute"));
				req.$params.sessionToken = token;
			}
			if (req.method !== "GET" && req.method !== "HEAD") {
				checkSameOrigin(req, "Changes are taken only from the portal's own page");
				const csrf = req.headers["x-csrf-token"];
				if (typeof csrf === "string") req.$params.csrfToken = csrf;
			}
			if (req.$alias?.action === "portal.cardSession") req.$params.domain = hostDomain(req);
		},

		/** The session's token goes into the cookie, never into the page; signing out clears it. */
		afterCall(ctx: Context, req: GatewayRequest, res: ServerResponse, data: unknown): unknown {
			const action = req.$alias?.action;
			if (action === "portal.open") {
				const { sessionToken, maxAgeSeconds } = data as { sessionToken: string; maxAgeSeconds: number };
				const cookie = `${PORTAL_COOKIE}=${sessionToken}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
				(ctx.meta as Record<string, unknown>).$responseHeaders = { "Set-Cookie": `${cookie}${behindTls(req) ? "; Secure" : ""}` };
				return { opened: true };
			}
			if (action === "portal.signOut") res.setHeader("Set-Cookie", `${PORTAL_COOKIE}=; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=0`);
			return data;
		},
	};
}

export type PortalRoutes = ReturnType<typeof createPortalRoutes>;
