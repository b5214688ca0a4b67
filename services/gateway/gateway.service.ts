// The HTTP front door (moleculer-web): the merchant API under /api, the
// admin API under /admin and the health check under /actuator. It owns no
// data; it authenticates, checks the API version, and maps errors to the
// documented answers (http-errors.ts).
import { readFileSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import path from "node:path";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway, { type ApiSettingsSchema } from "moleculer-web";
import serveStatic from "serve-static";
import { call } from "../../shared/call";
import { config } from "../../shared/config";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { projectRoot } from "../../shared/paths";
import { type Authenticator, createAuthenticator } from "./api-auth";
import { clearSessionCookie, createDashboardRoutes, type DashboardRoutes, type DashboardUser } from "./dashboard-routes";
import {
	actuatorEndpoints,
	adminEndpoints,
	aliasesOf,
	apiEndpoints,
	dashboardEndpoints,
	dashboardSignInEndpoints,
	demoEndpoints,
	endpointFor,
	processorEndpoints,
	publicEndpoints,
	requiredServices,
} from "./endpoints";
import { createGatewayKeySealer } from "./gateway-keys";
import { checkHealth } from "./health";
import { type HttpAnswer, jsonError, toCheckoutAnswer, toHttpAnswer } from "./http-errors";
import { decideMethod, methodsFrom, routedPath } from "./methods";
import { checkInputPlacement, checkParameterNames, type GatewayRequest, readSignedEvent, readUrlParameters } from "./request-params";
import { DASHBOARD_OPTIONS, DEMO_OPTIONS, frameAncestors, STATIC_OPTIONS, UPDATE_CARD_OPTIONS } from "./static-files";

const SUPPORTED_API_VERSIONS = ["1.0"];

/** Set on /api from the token and the Idempotency-Key header: a request naming them itself is refused. */
const API_SET_BY_GATEWAY = ["accountId", "idempotencyKey"];

const CORS = {
	origin: "*",
	methods: ["GET", "POST", "DELETE", "PATCH", "OPTIONS"],
	allowedHeaders: ["Authorization", "Content-Type", "X-API-Version", "Idempotency-Key"],
	exposedHeaders: ["Retry-After", "X-Request-ID"],
	maxAge: 600,
};

type Request = GatewayRequest;

interface Locals {
	auth: Authenticator;
	dashboard: DashboardRoutes;
	/** Seals a MID's Stripe key to payments (gateway-keys.ts). */
	sealProcessor(processor: unknown): Promise<unknown>;
	openapi: object;
	server: import("node:http").Server;
	writeCorsHeaders(route: { cors: typeof CORS }, req: IncomingMessage, res: ServerResponse, preflight: boolean): void;
	resolveAlias(url: string, method?: string): { alias: { action?: string } } | null;
}

function checkApiVersion(req: IncomingMessage): void {
	const version = req.headers["x-api-version"];
	if (version !== undefined && !SUPPORTED_API_VERSIONS.includes(String(version))) {
		throw new ApiError(ApiErrorType.UnsupportedApiVersion, `Supported versions: ${SUPPORTED_API_VERSIONS.join(", ")}`);
	}
}

/** Every check a request's parameters go through before its action's schema. */
function checkParameters(req: Request, setByGateway: readonly string[] = []): void {
	checkInputPlacement(req);
	checkParameterNames(req, setByGateway);
	readUrlParameters(req);
}

function requestPath(req: Request): string {
	return (req.originalUrl ?? req.url ?? "").split("?")[0];
}

/**
 * The alias a failed request was for. A body that fails to parse fails before
 * the alias is attached to the request, so it is resolved again; a path that
 * is not valid percent-encoding cannot be resolved (moleculer-web throws), and
 * an error handler that throws would crash the process.
 */
function aliasOf(gateway: Pick<Locals, "resolveAlias">, req: Request): { action?: string } | undefined {
	if (req.$alias) return req.$alias;
	try {
		return gateway.resolveAlias(requestPath(req).replace(/\/$/, ""), req.method)?.alias;
	} catch {
		return undefined;
	}
}

function applyEndpointOptions(ctx: Context, _route: unknown, req: Request, _res: ServerResponse, data: unknown): unknown {
	const endpoint = endpointFor(req.$alias?.action);
	const meta = ctx.meta as Record<string, unknown>;
	if (endpoint?.plainText) meta.$responseType = "text/plain; charset=utf-8";
	if (endpoint?.status) {
		meta.$statusCode = endpoint.status;
		const path = requestPath(req);
		const id = (data as { id?: unknown } | null)?.id;
		if (endpoint.location === "item" && id !== undefined) meta.$location = `${path}/${id}`;
		if (endpoint.location === "list") meta.$location = path;
		if (endpoint.location === "parent") meta.$location = path.slice(0, path.lastIndexOf("/"));
	}
	return data;
}

/** Node's answer to a request it could not parse, as JSON: 431 for oversized headers, 400 otherwise. */
function answerClientError(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
	// As Node does: no answer on a dead socket, nor in the middle of another answer on it.
	const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
	if (err.code === "ECONNRESET" || !socket.writable || answering) return void socket.destroy();
	const answer =
		err.code === "HPE_HEADER_OVERFLOW"
			? jsonError("HEADERS_TOO_LARGE", 431, "Request headers are larger than the limit")
			: err.code === "ERR_HTTP_REQUEST_TIMEOUT"
				? jsonError("REQUEST_TIMEOUT", 408, "The request did not arrive in time")
				: jsonError(ApiErrorType.BadRequest, 400, "Malformed HTTP request");
	answerOnSocket(socket, answer);
}

/** Writes a whole answer on a socket no HTTP response object owns, and closes it. */
function answerOnSocket(socket: import("node:stream").Duplex, answer: HttpAnswer): void {
	const reason = STATUS_CODES[answer.status] ?? "";
	socket.end(
		`HTTP/1.1 ${answer.status} ${reason}\r\nContent-Type: ${answer.contentType}\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\nConnection: close\r\n\r\n${answer.body}`,
	);
}

/** Writes an answer the gateway made itself, with CORS headers outside /admin (error answers included). */
function sendAnswer(gateway: Pick<Locals, "writeCorsHeaders">, req: IncomingMessage, res: ServerResponse, answer: HttpAnswer): void {
	if (res.headersSent) return void res.end();
	if (!requestPath(req as Request).startsWith("/admin") && !res.getHeader("Access-Control-Allow-Origin")) {
		gateway.writeCorsHeaders({ cors: CORS }, req, res, false);
	}
	for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
	res.setHeader("Content-Type", answer.contentType);
	res.writeHead(answer.status);
	res.end(answer.body);
}

const routeDefaults = {
	mappingPolicy: "restrict" as const,
	// Not strict: any JSON value parses (`null` included), and checkInputPlacement says what the endpoint takes.
	bodyParsers: { json: { limit: "100kb", strict: false }, urlencoded: false },
	onAfterCall: applyEndpointOptions,
	logging: true,
};

/** Moleculer's typings omit the `merged` hook. */
const GatewayService: ServiceSchema<ApiSettingsSchema & ServiceSettingSchema, Record<string, never>, Locals> & {
	merged(schema: ServiceSchema<ApiSettingsSchema>): void;
} = {
	name: "gateway",
	mixins: [ApiGateway],

	settings: {
		port: 3000,
		ip: process.env.IP || "0.0.0.0",
		logRequest: "debug",
		logResponse: "debug",
		// Params can carry encrypted card data: never log them.
		logRequestParams: null,
		logResponseData: null,
		logRouteRegistration: "debug",
		routes: [
			{
				...routeDefaults,
				name: "api",
				path: "/api",
				cors: CORS,
				aliases: aliasesOf(apiEndpoints),
				authentication: "authenticateApi",
				// After authentication, so a request without a token is a 401 whatever else is wrong with it.
				authorization: "checkApiRequest",
			},
			{
				...routeDefaults,
				name: "public",
				path: "/api",
				cors: CORS,
				aliases: aliasesOf(publicEndpoints),
				async onBeforeCall(this: Locals, _ctx: Context, _route: unknown, req: Request) {
					checkApiVersion(req);
					const hostAsDomain = endpointFor(req.$alias?.action)?.hostAsDomain;
					checkParameters(req, hostAsDomain ? ["domain"] : []);
					if (hostAsDomain)
						req.$params.domain = String(req.headers.host ?? "")
							.replace(/:\d+$/, "")
							.replace(/^\[|\]$/g, "");
					if (req.method === "POST") await this.auth.limitCheckouts(req);
				},
			},
			// What gateways send us, signed (docs/api.md#stripe-events). The body stays text, so the signature is checked on
			// the bytes that were signed; Stripe's events are far smaller than the limit.
			{
				...routeDefaults,
				name: "processors",
				path: "/api/processors",
				cors: CORS,
				aliases: aliasesOf(processorEndpoints),
				bodyParsers: { text: { type: "application/json", limit: "1mb" }, json: false, urlencoded: false },
				onBeforeCall(_ctx: Context, _route: unknown, req: Request) {
					checkApiVersion(req);
					readSignedEvent(req, "stripe-signature");
				},
			},
			{
				...routeDefaults,
				name: "admin",
				path: "/admin",
				aliases: aliasesOf(adminEndpoints),
				authentication: "authenticateAdmin",
				authorization: "checkAdminRequest",
			},
			{
				...routeDefaults,
				name: "demo",
				path: "/demo",
				// With CORS a browser's preflight is answered here instead of reaching the action.
				cors: CORS,
				aliases: aliasesOf(demoEndpoints),
				// The page itself: moleculer-web strips the route's prefix before its global
				// static files, so the demo folder is served from this route.
				use: [serveStatic(path.join(projectRoot, "public/demo"), DEMO_OPTIONS)],
				// The session is for the host the demo page was served from.
				onBeforeCall: (_ctx: Context, _route: unknown, req: Request) => {
					checkParameters(req, ["host"]);
					req.$params.host = String(req.headers.host ?? "localhost");
				},
			},
			// The dashboard's JSON API (dashboard-routes.ts): signing in, then everything else with a session.
			{
				...routeDefaults,
				name: "dashboard-sign-in",
				path: "/dashboard/api",
				aliases: aliasesOf(dashboardSignInEndpoints),
				async onBeforeCall(this: Locals, _ctx: Context, _route: unknown, req: Request) {
					checkParameters(req);
					await this.dashboard.limitSignIn(req);
				},
				onAfterCall(this: Locals, ctx: Context, _route: unknown, req: Request, _res: ServerResponse, data: unknown) {
					return this.dashboard.signedIn(ctx, req, data as never);
				},
			},
			{
				...routeDefaults,
				name: "dashboard-api",
				path: "/dashboard/api",
				aliases: aliasesOf(dashboardEndpoints),
				authentication: "authenticateDashboard",
				authorization: "checkDashboardRequest",
				async onAfterCall(this: Locals, ctx: Context, _route: unknown, req: Request, res: ServerResponse, data: unknown) {
					await this.dashboard.audit(ctx, req, data);
					if (req.$alias?.action === "dashboard.signOut") clearSessionCookie(res);
					return data;
				},
			},
			// The dashboard's pages: static files with a strict CSP (no inline script or style).
			{
				name: "dashboard-pages",
				path: "/dashboard",
				mappingPolicy: "restrict" as const,
				use: [serveStatic(path.join(projectRoot, "public/dashboard"), DASHBOARD_OPTIONS)],
			},
			// The page a card update link opens: the SDK in update mode, on a session for this host.
			{
				name: "update-card",
				path: "/update-card",
				mappingPolicy: "restrict" as const,
				use: [serveStatic(path.join(projectRoot, "public/update-card"), UPDATE_CARD_OPTIONS)],
			},
			// The card frame and its resources, with the frame's CSP for its session (static-files.ts).
			{
				name: "checkout-frame",
				path: "/checkout",
				mappingPolicy: "restrict" as const,
				use: [frameAncestors, serveStatic(path.join(projectRoot, "public/checkout"), STATIC_OPTIONS)],
			},
			// jose's browser build, which the checkout iframe encrypts with.
			{
				name: "vendor",
				path: "/vendor/jose",
				mappingPolicy: "restrict" as const,
				use: [serveStatic(path.join(projectRoot, "node_modules/jose/dist/browser"), STATIC_OPTIONS)],
			},
			{ ...routeDefaults, name: "actuator", path: "/actuator", cors: CORS, aliases: aliasesOf(actuatorEndpoints) },
		],
		// The SDK, the checkout iframe and the demo page.
		assets: { folder: path.join(projectRoot, "public"), options: STATIC_OPTIONS },
		onError(this: Locals & { logger: { error(...args: unknown[]): void } }, req: IncomingMessage, res: ServerResponse, err: unknown) {
			const endpoint = endpointFor(aliasOf(this, req as Request)?.action);
			const answer = endpoint?.checkoutErrors ? toCheckoutAnswer(err) : toHttpAnswer(err);
			if (answer.unexpected) this.logger.error("Request failed:", (err as Error)?.name, (err as Error)?.message);
			sendAnswer(this, req, res, answer);
		},
	},

	actions: {
		health: {
			visibility: "published",
			async handler(ctx: Context) {
				const health = await checkHealth(this.broker, requiredServices);
				if (health.status !== "UP") (ctx.meta as Record<string, unknown>).$statusCode = 503;
				return health;
			},
		},
		openapi: {
			visibility: "published",
			handler() {
				return this.openapi;
			},
		},
		// GET /dashboard/api/me: who is signed in, and the CSRF token the pages send back.
		dashboardMe: {
			visibility: "published",
			async handler(ctx: Context<unknown, { user: DashboardUser }>) {
				const { userId, accountId, email, role, csrfToken } = ctx.meta.user;
				const account = await call(ctx, "accounts.get", { accountId });
				return { userId, email, role, csrfToken, account: { id: accountId, name: account.name, environment: account.environment } };
			},
		},
	},

	events: {
		"accounts.tokensRotated"(ctx: Context<{ accountId: number }>) {
			this.auth.forgetAccount(ctx.params.accountId);
		},
	},

	methods: {
		// Runs before moleculer-web's own: the method decides whether a handler may run at all (methods.ts).
		httpHandler(this: Locals, req: IncomingMessage, res: ServerResponse, next?: () => void) {
			// Every answer, the spec's plain-text ones included, is read as the type it declares.
			res.setHeader("X-Content-Type-Options", "nosniff");
			const decision = decideMethod(
				req.method,
				routedPath(req.url ?? ""),
				methodsFrom((url, method) => this.resolveAlias(url, method)),
			);
			const hasBody = (req.headers["content-length"] ?? "0") !== "0" || req.headers["transfer-encoding"] !== undefined;
			if (decision.kind !== "route" && hasBody) {
				// Answered without reading the body: the connection cannot carry another request after it.
				res.setHeader("Connection", "close");
				req.resume();
			}
			if (decision.kind === "preflight") {
				this.writeCorsHeaders({ cors: CORS }, req, res, true);
				res.writeHead(204, { "Content-Length": "0" }).end();
				return;
			}
			if (decision.kind === "notAllowed") {
				return sendAnswer(this, req, res, jsonError("METHOD_NOT_ALLOWED", 405, undefined, { Allow: decision.allow.join(", ") }));
			}
			if (decision.kind === "notFound") return sendAnswer(this, req, res, jsonError(ApiErrorType.NotFound, 404));
			return (ApiGateway.methods!.httpHandler as (req: IncomingMessage, res: ServerResponse, next?: () => void) => unknown).call(
				this,
				req,
				res,
				next,
			);
		},
		// Replaces moleculer-web's, which logs every answer outside 4xx with its data (the spec's 500 for a bad
		// session domain included, with the domain as sent): onError logs what is unexpected, without request data.
		errorHandler(req: IncomingMessage, res: ServerResponse, err: unknown) {
			(this as unknown as { sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void }).sendError(req, res, err);
		},
		async authenticateApi(ctx: Context, _route: unknown, req: IncomingMessage) {
			return this.auth.authenticateApi(ctx, req);
		},
		async authenticateAdmin(_ctx: Context, _route: unknown, req: IncomingMessage) {
			await this.auth.authenticateAdmin(req);
			return { admin: true };
		},
		checkApiRequest(ctx: Context<unknown, { user: { accountId: number } }>, _route: unknown, req: Request) {
			checkApiVersion(req);
			checkParameters(req, API_SET_BY_GATEWAY);
			// The account comes from the token, never from the request.
			req.$params.accountId = ctx.meta.user.accountId;
			const key = req.headers["idempotency-key"];
			if (key !== undefined && endpointFor(req.$alias?.action)?.idempotencyKey) req.$params.idempotencyKey = key;
		},
		async authenticateDashboard(ctx: Context, _route: unknown, req: IncomingMessage) {
			return this.dashboard.authenticate(ctx, req);
		},
		checkDashboardRequest(ctx: Context<unknown, { user: DashboardUser }>, _route: unknown, req: Request) {
			checkParameters(req, [...API_SET_BY_GATEWAY, "token", "baseUrl"]);
			this.dashboard.authorize(ctx.meta.user, req);
		},
		async checkAdminRequest(ctx: Context, _route: unknown, req: Request) {
			checkParameters(req);
			// Everything under /admin/accounts/{accountId} answers an unknown account the same way: 404, before its action runs.
			// Not retried: the request's retries belong to its action, so an outage answers 503 within the documented bound.
			if (/:accountId\b/.test(req.$alias?.path ?? ""))
				await call(ctx, "accounts.get", { accountId: req.$params.accountId as number }, { retries: 0 });
			if (endpointFor(req.$alias?.action)?.sealsGatewayKey && req.$params.processor !== undefined)
				req.$params.processor = await this.sealProcessor(req.$params.processor);
		},
	},

	// Configuration is read when the service is created, not when this file is imported. Moleculer
	// calls `merged` after mixins are merged and before `created`.
	merged(schema: ServiceSchema<ApiSettingsSchema>) {
		const { port, bodyLimit } = config();
		schema.settings!.port = port;
		for (const route of schema.settings!.routes ?? []) {
			// The processors' route keeps its text parser: a signed event is verified on the body as it came.
			if (route.name === "processors") continue;
			route.bodyParsers = { json: { limit: bodyLimit, strict: false }, urlencoded: false };
		}
	},

	created() {
		const { rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken, dashboardSignInsPerMinute, publicBaseUrl } =
			config();
		this.auth = createAuthenticator({ rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken });
		this.dashboard = createDashboardRoutes({ signInsPerMinute: dashboardSignInsPerMinute, publicBaseUrl });
		this.sealProcessor = createGatewayKeySealer(
			async () => (await call(this.broker, "payments.credentialsKey", {})).publicJwk as unknown as import("jose").JWK,
		);
		this.openapi = JSON.parse(readFileSync(path.join(projectRoot, "docs", "openapi.json"), "utf8"));
		// Requests Node's HTTP parser refuses never reach moleculer-web: answer them in the documented shape too.
		this.server.on("clientError", (err: NodeJS.ErrnoException, socket: import("node:stream").Duplex) => answerClientError(err, socket));
		// Without a listener Node drops a CONNECT without a word; no path here takes it.
		this.server.on("connect", (_req: IncomingMessage, socket: import("node:stream").Duplex) =>
			answerOnSocket(socket, jsonError(ApiErrorType.NotFound, 404)),
		);
	},

	started() {
		const address = this.server.address();
		if (address && typeof address === "object") this.logger.info(`HTTP listening on http://127.0.0.1:${address.port}`);
	},
};

export default GatewayService;
