// The HTTP front door (moleculer-web): the merchant API under /api, the
// admin API under /admin and the health check under /actuator. It owns no
// data; it authenticates, checks the API version, and maps errors to the
// documented answers (http-errors.ts). Its routes are in routes.ts, what they
// run around their actions in route-hooks.ts.
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway, { type ApiSettingsSchema } from "moleculer-web";
import { call } from "../../shared/call";
import { config } from "../../shared/config";
import { ApiErrorType } from "../../shared/errors";
import { projectRoot } from "../../shared/paths";
import { createAuthenticator } from "./api-auth";
import { createDashboardRoutes, type DashboardUser } from "./dashboard-routes";
import { requiredServices, USAGE_BODY_LIMIT } from "./endpoints";
import { onError } from "./error-handler";
import { checkHealth } from "./health";
import { jsonError } from "./http-errors";
import type { Locals } from "./locals";
import { answeredByMethod } from "./method-check";
import { createPortalRoutes } from "./portal-routes";
import { createProcessorKeySealer } from "./processor-keys";
import {
	authenticateAdmin,
	authenticateApi,
	authenticateDashboard,
	checkAdminRequest,
	checkApiRequest,
	checkDashboardRequest,
} from "./route-hooks";
import { routes } from "./routes";
import { answerClientError, answerOnSocket } from "./send-answer";
import { STATIC_OPTIONS } from "./static-files";

type MoleculerWebHandler = (req: IncomingMessage, res: ServerResponse, next?: () => void) => unknown;

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
		routes,
		// The SDK, the checkout iframe and the demo page.
		assets: { folder: path.join(projectRoot, "public"), options: STATIC_OPTIONS },
		onError,
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
		// Runs before moleculer-web's own: the method decides whether a handler may run at all (method-check.ts).
		httpHandler(this: Locals, req: IncomingMessage, res: ServerResponse, next?: () => void) {
			// Every answer, the spec's plain-text ones included, is read as the type it declares.
			res.setHeader("X-Content-Type-Options", "nosniff");
			if (answeredByMethod(this, req, res)) return;
			return (ApiGateway.methods!.httpHandler as MoleculerWebHandler).call(this, req, res, next);
		},
		// Replaces moleculer-web's, which logs every answer outside 4xx with its data (the spec's 500 for a bad
		// session domain included, with the domain as sent): onError logs what is unexpected, without request data.
		errorHandler(req: IncomingMessage, res: ServerResponse, err: unknown) {
			(this as unknown as { sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void }).sendError(req, res, err);
		},
		// The routes name these (routes.ts).
		authenticateApi,
		checkApiRequest,
		authenticateAdmin,
		checkAdminRequest,
		authenticateDashboard,
		checkDashboardRequest,
	},

	// Configuration is read when the service is created, not when this file is imported. Moleculer
	// calls `merged` after mixins are merged and before `created`.
	merged(schema: ServiceSchema<ApiSettingsSchema>) {
		const { port, bodyLimit } = config();
		schema.settings!.port = port;
		for (const route of schema.settings!.routes ?? []) {
			// The processors' route keeps its text parser: a signed event is verified on the body as it came.
			if (route.name === "processors") continue;
			// Not strict: any JSON value parses (`null` included), and checkInputPlacement says what the endpoint takes.
			const limit = route.name === "usage" ? USAGE_BODY_LIMIT : bodyLimit;
			route.bodyParsers = { json: { limit, strict: false }, urlencoded: false };
		}
	},

	created() {
		const {
			rateLimitPerSecond,
			authFailuresPerMinute,
			checkoutsPerMinute,
			adminToken,
			dashboardSignInsPerMinute,
			portalOpensPerMinute,
			portalRequestsPerMinute,
			publicBaseUrl,
		} = config();
		this.auth = createAuthenticator({ rateLimitPerSecond, authFailuresPerMinute, checkoutsPerMinute, adminToken });
		this.dashboard = createDashboardRoutes({ signInsPerMinute: dashboardSignInsPerMinute, publicBaseUrl });
		this.portal = createPortalRoutes({ opensPerMinute: portalOpensPerMinute, requestsPerMinute: portalRequestsPerMinute });
		this.publicBaseUrl = publicBaseUrl;
		this.sealProcessor = createProcessorKeySealer(
			async () => (await call(this.broker, "payments.credentialsKey", {})).publicJwk as unknown as import("jose").JWK,
		);
		this.openapi = JSON.parse(readFileSync(path.join(projectRoot, "docs", "openapi.json"), "utf8"));
		// Requests Node's HTTP parser refuses never reach moleculer-web: answer them in the documented shape too.
		this.server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
		// Without a listener Node drops a CONNECT without a word; no path here takes it.
		this.server.on("connect", (_req: IncomingMessage, socket: Duplex) => answerOnSocket(socket, jsonError(ApiErrorType.NotFound, 404)));
	},

	started() {
		const address = this.server.address();
		if (address && typeof address === "object") this.logger.info(`HTTP listening on http://127.0.0.1:${address.port}`);
	},
};

export default GatewayService;
