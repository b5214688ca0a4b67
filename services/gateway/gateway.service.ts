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
import { config } from "../../shared/config";
import { ApiError, ApiErrorType } from "../../shared/errors";
import { projectRoot } from "../../shared/paths";
import { type Authenticator, createAuthenticator } from "./api-auth";
import { adminEndpoints, aliasesOf, apiEndpoints, demoEndpoints, endpointFor, publicEndpoints, requiredServices } from "./endpoints";
import { checkHealth } from "./health";
import { DEMO_OPTIONS, frameAncestors, STATIC_OPTIONS } from "./static-files";
import { type HttpAnswer, jsonError, toCheckoutAnswer, toHttpAnswer } from "./http-errors";

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

interface Request extends IncomingMessage {
	$alias?: { action?: string; path?: string };
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

/**
 * Names a request may not send as parameters: `__proto__` (merging it into the
 * action's parameters would replace their prototype), a path parameter's name
 * (the path would silently win), and those the gateway sets itself.
 */
function checkParameterNames(req: Request, setByGateway: readonly string[] = []): void {
	const body = typeof req.body === "object" && req.body !== null && !Array.isArray(req.body) ? req.body : {};
	const fromPath = [...(req.$alias?.path ?? "").matchAll(/:(\w+)/g)].map(match => match[1]);
	const sent = [...Object.keys(body), ...Object.keys(req.query ?? {})];
	const refused = sent.filter(name => name === "__proto__" || fromPath.includes(name) || setByGateway.includes(name));
	// The query parser drops names such as __proto__, constructor or toString without a word: refuse them too.
	const parsed = req.query ?? {};
	const dropped = queryNames(req).filter(name => !Object.hasOwn(parsed, name));
	const names = [...new Set([...refused, ...dropped])].map(name => name || "(a parameter without a name)");
	if (names.length) throw badParameters(names.map(name => ({ field: name, message: `${name} is not allowed` })));
}

/** A 400 naming the fields, as the validator's: the checkout lists them in `errors`. */
function badParameters(errors: { field: string; message: string }[]): ApiError {
	return new ApiError(ApiErrorType.BadRequest, errors.map(e => e.message).join("; "), errors);
}

/** The top-level names in the raw query string, as sent. */
function queryNames(req: Request): string[] {
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
 * Numbers sent as text (path and query values, or a JSON string) must be
 * plain decimals: the validator would otherwise coerce "0x10" to 16, "1e3" to
 * 1000 and " 12" to 12.
 */
function checkNumericText(req: Request): void {
	const properties = ((req as { $action?: { params?: { properties?: Record<string, { type?: string }> } } }).$action?.params?.properties ?? {}) as Record<string, { type?: string }>;
	const refused: { field: string; message: string }[] = [];
	for (const [name, value] of Object.entries(req.$params ?? {})) {
		const type = Object.hasOwn(properties, name) ? properties[name].type : undefined;
		if (typeof value !== "string") continue;
		if (type === "integer" && !/^[0-9]+$/.test(value)) refused.push({ field: name, message: `${name} must be integer` });
		if (type === "number" && !/^[0-9]+(\.[0-9]+)?$/.test(value)) refused.push({ field: name, message: `${name} must be number` });
	}
	if (refused.length) throw badParameters(refused);
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

/** Node's answer to a request it could not parse, as JSON: 431 for oversized headers, 400 otherwise. */
function answerClientError(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
	// As Node does: no answer on a dead socket, nor in the middle of another answer on it.
	const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
	if (err.code === "ECONNRESET" || !socket.writable || answering) return void socket.destroy();
	const answer = err.code === "HPE_HEADER_OVERFLOW"
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
					checkParameterNames(req);
					checkNumericText(req);
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
				use: [serveStatic(path.join(projectRoot, "public/demo"), DEMO_OPTIONS)],
				// The session is for the host the demo page was served from.
				onBeforeCall: (ctx: Context, route: unknown, req: Request) => {
					checkParameterNames(req, ["host"]);
					req.$params.host = String(req.headers.host ?? "localhost");
				},
			},
			// The card frame and its resources, with the frame's CSP for its session (static-files.ts).
			{ name: "checkout-frame", path: "/checkout", mappingPolicy: "restrict" as const, use: [frameAncestors, serveStatic(path.join(projectRoot, "public/checkout"), STATIC_OPTIONS)] },
			// jose's browser build, which the checkout iframe encrypts with.
			{ name: "vendor", path: "/vendor/jose", mappingPolicy: "restrict" as const, use: [serveStatic(path.join(projectRoot, "node_modules/jose/dist/browser"), STATIC_OPTIONS)] },
			{ ...routeDefaults, name: "actuator", path: "/actuator", cors: CORS, aliases: { "GET /health": "gateway.health", "HEAD /health": "gateway.health" } },
		],
		// The SDK, the checkout iframe and the demo page.
		assets: { folder: path.join(projectRoot, "public"), options: STATIC_OPTIONS },
		onError(this: Locals & { logger: { error(...args: unknown[]): void } }, req: IncomingMessage, res: ServerResponse, err: unknown) {
			const endpoint = endpointFor(aliasOf(this, req as Request)?.action);
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
		// Replaces moleculer-web's, which logs every answer outside 4xx with its data (the spec's 500 for a bad
		// session domain included, with the domain as sent): onError logs what is unexpected, without request data.
		errorHandler(req: IncomingMessage, res: ServerResponse, err: unknown) {
			(this as unknown as { sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void }).sendError(req, res, err);
		},
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
			checkParameterNames(req, API_SET_BY_GATEWAY);
			checkNumericText(req);
			// The account comes from the token, never from the request.
			req.$params.accountId = ctx.meta.user.accountId;
			const key = req.headers["idempotency-key"];
			if (key !== undefined && endpointFor(req.$alias?.action)?.idempotencyKey) req.$params.idempotencyKey = key;
		},
		checkAdminRequest(ctx: Context, route: unknown, req: Request) {
			checkInputPlacement(req);
			checkParameterNames(req);
			checkNumericText(req);
		},
	},

	created() {
		const { rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken } = config();
		this.auth = createAuthenticator({ rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken });
		this.openapi = JSON.parse(readFileSync(path.join(projectRoot, "docs", "openapi.json"), "utf8"));
		// Requests Node's HTTP parser refuses never reach moleculer-web: answer them in the documented shape too.
		this.server.on("clientError", (err: NodeJS.ErrnoException, socket: import("node:stream").Duplex) => answerClientError(err, socket));
		// Without a listener Node drops a CONNECT without a word; no path here takes it.
		this.server.on("connect", (req: IncomingMessage, socket: import("node:stream").Duplex) => answerOnSocket(socket, jsonError(ApiErrorType.NotFound, 404)));
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
