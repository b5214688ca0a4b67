// The gateway's routes, one per base path and kind of caller (moleculer-web
// takes the first route whose path and alias match). The endpoints of each
// are a table in endpoints.ts; the hooks each runs are in route-hooks.ts.
import path from "node:path";
import type { ApiRouteSchema } from "moleculer-web";
import serveStatic from "serve-static";
import { projectRoot } from "../../shared/paths";
import { CORS } from "./cors";
import {
	actuatorEndpoints,
	adminEndpoints,
	aliasesOf,
	apiEndpoints,
	dashboardEndpoints,
	dashboardSignInEndpoints,
	demoEndpoints,
	LARGE_BODY_ENDPOINTS,
	portalEndpoints,
	processorEndpoints,
	publicEndpoints,
} from "./endpoints";
import {
	afterDashboardCall,
	afterPortalCall,
	afterSignIn,
	applyEndpointOptions,
	beforeDemoCall,
	beforePortalCall,
	beforeProcessorEvent,
	beforePublicCall,
	beforeSignIn,
} from "./route-hooks";
import { DASHBOARD_OPTIONS, DEMO_OPTIONS, frameAncestors, PORTAL_OPTIONS, STATIC_OPTIONS, UPDATE_CARD_OPTIONS } from "./static-files";

const routeDefaults = {
	mappingPolicy: "restrict" as const,
	// Body parsers: BODY_LIMIT's, set on every route when the service is created (gateway.service.ts, merged).
	onAfterCall: applyEndpointOptions,
	logging: true,
};

/** A route of static files only. */
function staticRoute(name: string, routePath: string, ...use: NonNullable<ApiRouteSchema["use"]>) {
	return { name, path: routePath, mappingPolicy: "restrict" as const, use };
}

export const routes = [
	// POST /api/usage: the API's, with a body large enough for 1,000 events (gateway.service.ts sets its limit).
	{
		...routeDefaults,
		name: "usage",
		path: "/api",
		cors: CORS,
		aliases: aliasesOf(Object.fromEntries(LARGE_BODY_ENDPOINTS.map(route => [route, apiEndpoints[route]]))),
		authentication: "authenticateApi",
		authorization: "checkApiRequest",
	},
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
	{ ...routeDefaults, name: "public", path: "/api", cors: CORS, aliases: aliasesOf(publicEndpoints), onBeforeCall: beforePublicCall },
	// What processors send us, signed (docs/api.md#stripe-events). The body stays text, so the signature is checked on
	// the bytes that were signed; Stripe's events are far smaller than the limit. Also the buyer an Adyen MID's
	// 3-D Secure page sends back (a GET, redirected on: route-hooks.ts).
	{
		...routeDefaults,
		name: "processors",
		path: "/api/processors",
		cors: CORS,
		aliases: aliasesOf(processorEndpoints),
		bodyParsers: { text: { type: "application/json", limit: "1mb" }, json: false, urlencoded: false },
		onBeforeCall: beforeProcessorEvent,
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
		onBeforeCall: beforeDemoCall,
	},
	// The dashboard's JSON API (dashboard-routes.ts): signing in, then everything else with a session.
	{
		...routeDefaults,
		name: "dashboard-sign-in",
		path: "/dashboard/api",
		aliases: aliasesOf(dashboardSignInEndpoints),
		onBeforeCall: beforeSignIn,
		onAfterCall: afterSignIn,
	},
	{
		...routeDefaults,
		name: "dashboard-api",
		path: "/dashboard/api",
		aliases: aliasesOf(dashboardEndpoints),
		authentication: "authenticateDashboard",
		authorization: "checkDashboardRequest",
		onAfterCall: afterDashboardCall,
	},
	// The customer portal's JSON API (portal-routes.ts) and its page, with the dashboard's CSP and this origin's card frame.
	{
		...routeDefaults,
		name: "portal-api",
		path: "/portal/api",
		aliases: aliasesOf(portalEndpoints),
		onBeforeCall: beforePortalCall,
		onAfterCall: afterPortalCall,
	},
	staticRoute("portal-page", "/portal", serveStatic(path.join(projectRoot, "public/portal"), PORTAL_OPTIONS)),
	// The dashboard's pages: static files with a strict CSP (no inline script or style).
	staticRoute("dashboard-pages", "/dashboard", serveStatic(path.join(projectRoot, "public/dashboard"), DASHBOARD_OPTIONS)),
	// The page a card update link opens: the SDK in update mode, on a session for this host.
	staticRoute("update-card", "/update-card", serveStatic(path.join(projectRoot, "public/update-card"), UPDATE_CARD_OPTIONS)),
	// The card frame and its resources, with the frame's CSP for its session (static-files.ts).
	staticRoute("checkout-frame", "/checkout", frameAncestors, serveStatic(path.join(projectRoot, "public/checkout"), STATIC_OPTIONS)),
	// jose's browser build, which the checkout iframe encrypts with.
	staticRoute("vendor", "/vendor/jose", serveStatic(path.join(projectRoot, "node_modules/jose/dist/browser"), STATIC_OPTIONS)),
	// Chart.js's browser build (node_modules/chart.js/dist/chart.umd.min.js), which draws the dashboard's home page.
	staticRoute("vendor-charts", "/vendor/chart.js", serveStatic(path.join(projectRoot, "node_modules/chart.js/dist"), STATIC_OPTIONS)),
	{ ...routeDefaults, name: "actuator", path: "/actuator", cors: CORS, aliases: aliasesOf(actuatorEndpoints) },
] satisfies ApiRouteSchema[];
