// The merchant dashboard's HTTP side (docs/dashboard.md): its pages under
// /dashboard and their JSON API under /dashboard/api. A session is a random
// token in an HttpOnly, SameSite=Strict cookie, resolved by the dashboard
// service on every request; the API token never reaches the browser. Every
// change needs the operator role, the session's CSRF token in X-CSRF-Token
// and a same-origin request, goes to the same action as the REST API with the
// session's account, and is written to the audit log.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { call } from "../../shared/call";
import type { SessionUser } from "../../shared/contracts/dashboard";
import { secretsEqual } from "../../shared/crypto";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { findCurrencyById } from "../../shared/money";
import { clientKey } from "./api-auth";
import { dashboardEndpoints, type Endpoint } from "./endpoints";
import { behindTls } from "./request-checks";
import type { GatewayRequest } from "./request-params";

export const SESSION_COOKIE = "dashboard_session";

/** The pages: their own scripts and styles only, talking to this origin only, never framed. */
export const DASHBOARD_POLICY =
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface DashboardUser extends SessionUser {
	/** The cookie's token, for signing out. */
	token: string;
	from: string;
}

/** How the audit log names what a path parameter names. */
const TARGET_NAMES: Record<string, string> = { customerId: "customer", eventId: "event" };

export function cookieToken(req: IncomingMessage, cookie = SESSION_COOKIE): string | undefined {
	for (const part of (req.headers.cookie ?? "").split(";")) {
		const [name, ...value] = part.trim().split("=");
		if (name === cookie) return value.join("=") || undefined;
	}
	return undefined;
}

/**
 * A session cookie, without Max-Age: the dashboard service ends the session
 * after its idle limit since the last request, which a lifetime fixed at
 * sign-in would cut short. Secure for a production account's users, when the
 * request came over TLS, and when the gateway sits behind TLS
 * (DASHBOARD_SECURE_COOKIE=1). Browsers keep a Secure cookie for
 * http://localhost too, so a production account works in development.
 */
function sessionCookie(req: IncomingMessage, token: string, production: boolean): string {
	const secure = production || behindTls(req);
	return `${SESSION_COOKIE}=${token}; Path=/dashboard; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** A state-changing request must come from a page of this origin: its Origin (or Referer) names this host. Answers that origin. */
export function checkSameOrigin(req: IncomingMessage, refusal = "Changes are taken only from the dashboard's own pages"): string {
	const origin = req.headers.origin ?? req.headers.referer;
	const host = req.headers.host;
	const page = origin !== undefined && URL.canParse(origin) ? new URL(origin) : undefined;
	if (!page || host === undefined || page.host !== host) throw new ApiError(ApiErrorType.Forbidden, refusal);
	return page.origin;
}

/** The dashboard endpoint a request was routed to (moleculer-web's alias: its method, and its path without the route's). */
function endpointOf(req: GatewayRequest & { $alias?: { method?: string } }): Endpoint | undefined {
	const method = req.$alias?.method === "HEAD" ? "GET" : req.$alias?.method;
	return dashboardEndpoints[`${method} /${req.$alias?.path ?? ""}`];
}

export interface DashboardRouteOptions {
	/** Sign-in attempts per minute per client address, on top of the per-email lockout (dashboard/sign-in.ts). */
	signInsPerMinute: number;
	/** PUBLIC_BASE_URL: where links sent to buyers point; unset, the dashboard page's own origin. */
	publicBaseUrl: string | undefined;
}

export function createDashboardRoutes({ signInsPerMinute, publicBaseUrl }: DashboardRouteOptions) {
	const signIns = new RateLimiterMemory({ points: signInsPerMinute, duration: 60 });

	return {
		/** Before the sign-in action: same origin, and not too many attempts from this address. */
		async limitSignIn(req: IncomingMessage): Promise<void> {
			checkSameOrigin(req);
			await signIns.consume(clientKey(req.socket.remoteAddress)).catch((rejection: unknown) => {
				const ms = rejection instanceof RateLimiterRes ? rejection.msBeforeNext : 1000;
				throw new ApiError(ApiErrorType.TooManyRequests, "Too many sign-in attempts from this address: try again in a minute", {
					retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)),
				});
			});
		},

		/** After signing in: the token goes into the cookie, never into the page; the sign-in goes into the audit log. */
		async signedIn(
			ctx: Context,
			req: IncomingMessage,
			data: { token: string; csrfToken: string; user: { id: number; accountId: number; email: string } },
		) {
			const account = await call(ctx, "accounts.get", { accountId: data.user.accountId });
			const cookie = sessionCookie(req, data.token, account.environment === "production");
			(ctx.meta as Record<string, unknown>).$responseHeaders = { "Set-Cookie": cookie };
			await call(ctx, "dashboard.recordAudit", {
				accountId: data.user.accountId,
				userId: data.user.id,
				email: data.user.email,
				action: "sign-in",
				target: null,
				outcome: "signed in",
				from: clientKey(req.socket.remoteAddress),
			});
			return { user: data.user, csrfToken: data.csrfToken };
		},

		/** The session's user, or 401. */
		async authenticate(ctx: Context, req: IncomingMessage): Promise<DashboardUser> {
			const token = cookieToken(req);
			const session = token && /^[A-Za-z0-9_-]{43}$/.test(token) ? await call(ctx, "dashboard.session", { token }) : null;
			if (!session || typeof session === "string") throw new ApiError(ApiErrorType.Unauthorized, "Not signed in, or the session expired");
			return { ...session, token: token!, from: clientKey(req.socket.remoteAddress) };
		},

		/**
		 * Changes: an operator, the CSRF token, the same origin; the audit log: an operator. Then the account (and the
		 * token, to sign out) go to the action. Answers the route's endpoint.
		 */
		authorize(user: DashboardUser, req: GatewayRequest): Endpoint {
			const endpoint = endpointOf(req);
			// Fail closed: a route this table does not know runs nothing.
			if (!endpoint) throw new ApiError(ApiErrorType.NotFound);
			checkAllowed(user, req, endpoint);
			if (endpoint.publicBaseUrl) req.$params.baseUrl = publicBaseUrl ?? checkSameOrigin(req);
			passSessionToAction(user, req, endpoint);
			return endpoint;
		},

		/** After a change: the audit log says who did what to what, from where, and what came of it. */
		async audit(ctx: Context, req: GatewayRequest, data: unknown): Promise<void> {
			const endpoint = endpointOf(req);
			if (!endpoint?.change) return;
			const user = (ctx.meta as { user: DashboardUser }).user;
			// A plain `:id` names what the path segment before it lists: /customers/:id is a customer.
			const params = [...(req.$alias?.path ?? "").matchAll(/([\w-]*)\/:(\w+)/g)].map(([, listed, name]) => ({ listed, name }));
			const target = params
				.map(({ listed, name }) => `${name === "id" ? listed.replace(/s$/, "") : (TARGET_NAMES[name] ?? name)} ${req.$params[name]}`)
				.join(", ");
			await call(ctx, "dashboard.recordAudit", {
				accountId: user.accountId,
				userId: user.userId,
				email: user.email,
				action: endpoint.change,
				target: target || null,
				outcome: auditOutcome(data).slice(0, 500),
				from: user.from,
			});
		},
	};
}

export type DashboardRoutes = ReturnType<typeof createDashboardRoutes>;

interface ChangeAnswer {
	change: { mode: string; currency: string; from: Plan; to: Plan; charge: number; creditAfter: number };
}
type Plan = { productId: number; quantity: number };

/** What came of a change, in a line: the answer's message, a subscription change's summary, or the answer itself. */
function auditOutcome(data: unknown): string {
	const answer = data as ({ message?: string } & Partial<ChangeAnswer>) | null;
	if (answer?.message) return answer.message;
	const change = answer?.change;
	if (!change) return JSON.stringify(data ?? null);
	const plan = ({ productId, quantity }: Plan) => `product ${productId} × ${quantity}`;
	return `${change.mode}: ${plan(change.from)} → ${plan(change.to)}; charged ${change.charge} ${change.currency}; credit ${change.creditAfter} ${change.currency}`;
}

/** A change (or any request but a read) needs a page of this origin and the session's CSRF token; changes and operator-only reads need an operator. */
function checkAllowed(user: DashboardUser, req: GatewayRequest, endpoint: Endpoint): void {
	if (endpoint.change || req.method !== "GET") {
		checkSameOrigin(req);
		const csrf = req.headers["x-csrf-token"];
		if (typeof csrf !== "string" || !secretsEqual(csrf, user.csrfToken)) {
			throw new ApiError(ApiErrorType.Forbidden, "The CSRF token is missing or wrong: reload the page");
		}
	}
	if ((endpoint.change || endpoint.operatorOnly) && user.role !== "operator")
		throw new ApiError(ApiErrorType.Forbidden, "Only an operator may do this");
}

/** What the session gives the action: the account (or, to sign out, the session's token) and the Idempotency-Key. */
function passSessionToAction(user: DashboardUser, req: GatewayRequest, endpoint: Endpoint): void {
	if (endpoint.action === "dashboard.signOut") req.$params.token = user.token;
	else if (endpoint.action !== "gateway.dashboardMe") req.$params.accountId = user.accountId;
	const key = req.headers["idempotency-key"];
	if (key !== undefined && endpoint.idempotencyKey) req.$params.idempotencyKey = key;
}

/** The transaction lists the pages read; their transactions carry only the spec's numeric `currencyId`. */
const TRANSACTION_LISTS = new Set(["billing.transactions", "billing.customerTransactions"]);

/**
 * The pages show every amount with its currency: a transaction list's transactions get the ISO 4217 code
 * (`currency`, "EUR") beside `currencyId`, which a browser has no table to read. The REST API's answer is the spec's.
 */
export function withCurrencyCodes(action: string | undefined, data: unknown): unknown {
	const page = data as { data?: { currencyId?: number }[] } | null;
	if (!TRANSACTION_LISTS.has(action ?? "") || !Array.isArray(page?.data)) return data;
	return { ...page, data: page.data.map(t => ({ ...t, currency: findCurrencyById(t.currencyId ?? 0)?.code ?? null })) };
}

/** The cookie that ends the session in the browser too. */
export function clearSessionCookie(res: ServerResponse): void {
	res.setHeader("Set-Cookie", `${SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`);
}
