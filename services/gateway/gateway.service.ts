// The HTTP front door (moleculer-web): the merchant API under /api, the
// admin API under /admin and the health check under /actuator. It owns no
// data; it authenticates, checks the API version, and maps errors to the
// documented answers (http-errors.ts).
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway, { type ApiSettingsSchema } from "moleculer-web";
import serveStatic from "serve-static";
import { config } from "../../shared/config";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { projectRoot } from "../../shared/paths";
import { type Authenticator, createAuthenticator } from "./api-auth";
import { adminEndpoints, aliasesOf, apiEndpoints, demoEndpoints, endpointFor, publicEndpoints, requiredServices } from "./endpoints";
import { checkHealth } from "./health";
import { toCheckoutAnswer, toHttpAnswer } from "./http-errors";

const SUPPORTED_API_VERSIONS = ["1.0"];

const CORS = {
	origin: "*",
	methods: ["GET", "POST", "DELETE", "PATCH", "OPTIONS"],
	allowedHeaders: ["Authorization", "Content-Type", "X-API-Version", "Idempotency-Key"],
	exposedHeaders: ["Retry-After", "X-Request-ID"],
	maxAge: 600,
};

interface Request extends IncomingMessage {
	$alias?: { action?: string };
	$params: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
	query?: Record<string, unknown>;
}

interface Locals {
	auth: Authenticator;
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

/** Parameters arrive where the endpoint takes them: the query for GET, DELETE and POST /api/session, a JSON object body otherwise. */
function checkInputPlacement(req: Request): void {
	const endpoint = endpointFor(req.$alias?.action);
	const input = endpoint?.input ?? (req.method === "GET" || req.method === "DELETE" ? "query" : "body");
	const body = req.body;
	const hasBody = body !== undefined && !(typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
	if (input === "query" && hasBody) throw new ApiError(ApiErrorType.BadRequest, "This endpoint takes no request body");
	if (input === "body") {
		if (hasBody && (typeof body !== "object" || body === null || Array.isArray(body))) {
			throw new ApiError(ApiErrorType.BadRequest, "Request body must be a JSON object");
		}
		if (Object.keys(req.query ?? {}).length > 0) {
			throw new ApiError(ApiErrorType.BadRequest, "Query parameters are not accepted here; send them in the JSON body");
		}
	}
}

function requestPath(req: Request): string {
	return (req.originalUrl ?? req.url ?? "").split("?")[0];
}

function applyEndpointOptions(ctx: Context, route: unknown, req: Request, res: ServerResponse, data: unknown): unknown {
	const endpoint = endpointFor(req.$alias?.action);
	const meta = ctx.meta as Record<string, unknown>;
	if (endpoint?.plainText) meta.$responseType = "text/plain; charset=utf-8";
	if (endpoint?.status) {
		meta.$statusCode = endpoint.status;
		const id = (data as { id?: unknown } | null)?.id;
		meta.$location = endpoint.readableById && id !== undefined ? `${requestPath(req)}/${id}` : requestPath(req);
	}
	return data;
}

const STATIC_OPTIONS = {
	index: ["index.html"],
	setHeaders(res: ServerResponse) {
		res.setHeader("X-Content-Type-Options", "nosniff");
		res.setHeader("Referrer-Policy", "strict-origin-when-cross-origin");
	},
};

const routeDefaults = {
	mappingPolicy: "restrict" as const,
	bodyParsers: { json: { limit: "100kb", strict: true }, urlencoded: false },
	onAfterCall: applyEndpointOptions,
	logging: true,
};

const GatewayService: ServiceSchema<ApiSettingsSchema & ServiceSettingSchema, Record<string, never>, Locals> = {
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
				async onBeforeCall(this: Locals, ctx: Context, route: unknown, req: Request) {
					checkApiVersion(req);
					checkInputPlacement(req);
					if (req.method === "POST") await this.auth.limitCheckouts(req);
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
				use: [serveStatic(path.join(projectRoot, "public/demo"), { ...STATIC_OPTIONS, redirect: false })],
				// The session is for the host the demo page was served from.
				onBeforeCall: (ctx: Context, route: unknown, req: Request) => {
					req.$params.host = String(req.headers.host ?? "localhost");
				},
			},
			// jose's browser build, which the checkout iframe encrypts with.
			{ name: "vendor", path: "/vendor/jose", mappingPolicy: "restrict" as const, use: [serveStatic(path.join(projectRoot, "node_modules/jose/dist/browser"), STATIC_OPTIONS)] },
			{ ...routeDefaults, name: "actuator", path: "/actuator", cors: CORS, aliases: { "GET /health": "gateway.health", "HEAD /health": "gateway.health" } },
		],
		// The SDK, the checkout iframe and the demo page.
		assets: { folder: path.join(projectRoot, "public"), options: STATIC_OPTIONS },
		onError(this: Locals & { logger: { error(...args: unknown[]): void } }, req: IncomingMessage, res: ServerResponse, err: unknown) {
			// A body that fails to parse fails before the alias is attached to the request.
			const alias = (req as Request).$alias ?? this.resolveAlias(requestPath(req as Request).replace(/\/$/, ""), req.method)?.alias;
			const endpoint = endpointFor(alias?.action);
			const answer = endpoint?.checkoutErrors ? toCheckoutAnswer(err) : toHttpAnswer(err);
			if (answer.unexpected) this.logger.error("Request failed:", (err as Error)?.name, (err as Error)?.message);
			if (res.headersSent) return void res.end();
			// CORS on error answers too, including those raised before the route's own CORS step.
			if (!requestPath(req as Request).startsWith("/admin") && !res.getHeader("Access-Control-Allow-Origin")) {
				this.writeCorsHeaders({ cors: CORS }, req, res, false);
			}
			for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
			res.setHeader("Content-Type", answer.contentType);
			res.writeHead(answer.status);
			res.end(answer.body);
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
	},

	events: {
		"accounts.tokensRotated"(ctx: Context<{ accountId: number }>) {
			this.auth.forgetAccount(ctx.params.accountId);
		},
	},

	methods: {
		async authenticateApi(ctx: Context, route: unknown, req: IncomingMessage) {
			return this.auth.authenticateApi(ctx, req);
		},
		async authenticateAdmin(ctx: Context, route: unknown, req: IncomingMessage) {
			await this.auth.authenticateAdmin(req);
			return { admin: true };
		},
		checkApiRequest(ctx: Context<unknown, { user: { accountId: number } }>, route: unknown, req: Request) {
			checkApiVersion(req);
			checkInputPlacement(req);
			// The account comes from the token, never from the request.
			req.$params.accountId = ctx.meta.user.accountId;
			const key = req.headers["idempotency-key"];
			if (key !== undefined && endpointFor(req.$alias?.action)?.idempotencyKey) req.$params.idempotencyKey = key;
		},
		checkAdminRequest(ctx: Context, route: unknown, req: Request) {
			checkInputPlacement(req);
		},
	},

	created() {
		const { rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken } = config();
		this.auth = createAuthenticator({ rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken });
		this.openapi = JSON.parse(readFileSync(path.join(projectRoot, "docs", "openapi.json"), "utf8"));
	},

	started() {
		const address = this.server.address();
		if (address && typeof address === "object") this.logger.info(`HTTP listening on http://127.0.0.1:${address.port}`);
	},
};

// Configuration is read when the service is created, not when this file is
// imported. Moleculer calls `merged` after mixins are merged and before
// `created`; its typings omit the hook.
Object.assign(GatewayService, {
	merged(schema: ServiceSchema<ApiSettingsSchema>) {
		const { port, bodyLimit } = config();
		schema.settings!.port = port;
		for (const route of schema.settings!.routes ?? []) {
			route.bodyParsers = { json: { limit: bodyLimit, strict: true }, urlencoded: false };
		}
	},
});

export default GatewayService;
