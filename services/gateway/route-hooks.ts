// What each route runs around its action (routes.ts): who is calling, what
// the gateway sets on the request, and what the answer gets besides its data.
// `this` is the gateway service (locals.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import { call } from "../../shared/call";
import type { FileAnswer } from "../../shared/contracts/invoicing";
import { clearSessionCookie, type DashboardUser, withCurrencyCodes } from "./dashboard-routes";
import { type Endpoint, endpointFor } from "./endpoints";
import type { Locals } from "./locals";
import { PORTAL_SET_BY_GATEWAY } from "./portal-routes";
import { API_SET_BY_GATEWAY, checkApiVersion, checkParameters, hostDomain, overTls } from "./request-checks";
import { badParameters, type GatewayRequest, readBuyerReturn, readSignedEvent } from "./request-params";
import { requestPath } from "./send-answer";

// /api with a token.

export async function authenticateApi(this: Locals, ctx: Context, _route: unknown, req: IncomingMessage) {
	return this.auth.authenticateApi(ctx, req);
}

export function checkApiRequest(
	this: Locals,
	ctx: Context<unknown, { user: { accountId: number } }>,
	_route: unknown,
	req: GatewayRequest,
): void {
	checkApiVersion(req);
	checkParameters(req, API_SET_BY_GATEWAY);
	// The account comes from the token, never from the request.
	req.$params.accountId = ctx.meta.user.accountId;
	const endpoint = endpointFor(req.$alias?.action);
	const key = req.headers["idempotency-key"];
	if (key !== undefined && endpoint?.idempotencyKey) req.$params.idempotencyKey = key;
	// A link for the buyer: on the service's public address, else the one this request was sent to.
	if (endpoint?.publicBaseUrl) req.$params.baseUrl = this.publicBaseUrl ?? `${requestScheme(req)}://${req.headers.host}`;
}

const requestScheme = (req: IncomingMessage) => (overTls(req) ? "https" : "http");

// /portal/api: the customer portal's page (portal-routes.ts).

export async function beforePortalCall(this: Locals, _ctx: Context, _route: unknown, req: GatewayRequest): Promise<void> {
	checkParameters(req, PORTAL_SET_BY_GATEWAY);
	await this.portal.beforeCall(req);
}

export function afterPortalCall(this: Locals, ctx: Context, _route: unknown, req: GatewayRequest, res: ServerResponse, data: unknown) {
	return this.portal.afterCall(ctx, req, res, data);
}

// /api without a token: the checkout's endpoints, called from the buyer's browser.

export async function beforePublicCall(this: Locals, _ctx: Context, _route: unknown, req: GatewayRequest): Promise<void> {
	checkApiVersion(req);
	const hostAsDomain = endpointFor(req.$alias?.action)?.hostAsDomain;
	checkParameters(req, hostAsDomain ? ["domain"] : []);
	if (hostAsDomain) req.$params.domain = hostDomain(req);
	if (req.method === "POST") await this.auth.limitCheckouts(req);
}

export function beforeProcessorEvent(_ctx: Context, _route: unknown, req: GatewayRequest): void {
	checkApiVersion(req);
	const endpoint = endpointFor(req.$alias?.action);
	// The buyer a processor's page sent back, not a signed event.
	if (endpoint?.redirectTo) readBuyerReturn(req);
	else readSignedEvent(req, endpoint?.signatureHeader);
}

/** The demo's session is for the host the demo page was served from. */
export function beforeDemoCall(_ctx: Context, _route: unknown, req: GatewayRequest): void {
	checkParameters(req, ["host"]);
	req.$params.host = String(req.headers.host ?? "localhost");
}

// /admin.

export async function authenticateAdmin(this: Locals, _ctx: Context, _route: unknown, req: IncomingMessage) {
	await this.auth.authenticateAdmin(req);
	return { admin: true };
}

export async function checkAdminRequest(this: Locals, ctx: Context, _route: unknown, req: GatewayRequest): Promise<void> {
	// An account is named by the path only: an action that takes one as an option (the dashboard's scope) never gets it here.
	checkParameters(req, ["accountId"]);
	// Everything under /admin/accounts/{accountId} answers an unknown account the same way: 404, before its action runs.
	// Not retried: the request's retries belong to its action, so an outage answers 503 within the documented bound.
	if (/:accountId\b/.test(req.$alias?.path ?? ""))
		await call(ctx, "accounts.get", { accountId: req.$params.accountId as number }, { retries: 0 });
	await sealProcessorKeys(this, req, endpointFor(req.$alias?.action));
}

/** A MID's processor keys are sealed to payments the moment they arrive (processor-keys.ts), on /admin and the dashboard alike. */
async function sealProcessorKeys(gateway: Locals, req: GatewayRequest, endpoint: Endpoint | undefined): Promise<void> {
	if (endpoint?.sealsProcessorKey && req.$params.processor !== undefined)
		req.$params.processor = await gateway.sealProcessor(req.$params.processor);
}

// /dashboard/api (dashboard-routes.ts).

export async function beforeSignIn(this: Locals, _ctx: Context, _route: unknown, req: GatewayRequest): Promise<void> {
	checkParameters(req);
	await this.dashboard.limitSignIn(req);
}

export function afterSignIn(this: Locals, ctx: Context, _route: unknown, req: GatewayRequest, _res: ServerResponse, data: unknown) {
	return this.dashboard.signedIn(ctx, req, data as never);
}

export async function authenticateDashboard(this: Locals, ctx: Context, _route: unknown, req: IncomingMessage) {
	return this.dashboard.authenticate(ctx, req);
}

export async function checkDashboardRequest(
	this: Locals,
	ctx: Context<unknown, { user: DashboardUser }>,
	_route: unknown,
	req: GatewayRequest,
): Promise<void> {
	checkParameters(req, [...API_SET_BY_GATEWAY, "token", "baseUrl"]);
	const endpoint = this.dashboard.authorize(ctx.meta.user, req);
	checkBodyFields(req, endpoint.bodyFields);
	await sealProcessorKeys(this, req, endpoint);
}

/** A route narrower than its action (a MID's processor, not the rest of the MID) takes its own fields only: any other is a 400. */
function checkBodyFields(req: GatewayRequest, fields: readonly string[] | undefined): void {
	if (!fields || typeof req.body !== "object" || req.body === null) return;
	const refused = Object.keys(req.body).filter(name => !fields.includes(name));
	if (refused.length) throw badParameters(refused.map(name => ({ field: name, message: `${name} is not allowed` })));
}

export async function afterDashboardCall(
	this: Locals,
	ctx: Context,
	_route: unknown,
	req: GatewayRequest,
	res: ServerResponse,
	data: unknown,
): Promise<unknown> {
	await this.dashboard.audit(ctx, req, data);
	if (req.$alias?.action === "dashboard.signOut") clearSessionCookie(res);
	return withCurrencyCodes(req.$alias?.action, data);
}

// Every route with actions.

/**
 * A redirect of the buyer's browser, without a body: to a page of the address it came to (a relative Location; the
 * buyer base URL is a scheme and a host), never cached, and naming nothing of the request to the next page.
 */
function redirected(meta: Record<string, unknown>, status: number, page: string): null {
	meta.$statusCode = status;
	meta.$location = page;
	meta.$responseHeaders = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" };
	return null;
}

/** A file an action answered (a PDF in base64, an HTML page), as its bytes with its content type. */
function fileOf(meta: Record<string, unknown>, file: FileAnswer): Buffer {
	meta.$responseType = file.contentType;
	// The page and the PDF are the buyer's: never cached by a shared cache, never framed.
	const headers: Record<string, string> = { "Cache-Control": "private, no-store", "X-Frame-Options": "DENY" };
	if (file.filename) headers["Content-Disposition"] = `attachment; filename="${file.filename.replace(/[^A-Za-z0-9._-]/g, "_")}"`;
	meta.$responseHeaders = headers;
	return file.base64 !== undefined ? Buffer.from(file.base64, "base64") : Buffer.from(file.text ?? "", "utf8");
}

/** The endpoint's status, Location and content type (endpoints.ts) on a successful answer. */
export function applyEndpointOptions(ctx: Context, _route: unknown, req: GatewayRequest, _res: ServerResponse, data: unknown): unknown {
	const endpoint = endpointFor(req.$alias?.action);
	const meta = ctx.meta as Record<string, unknown>;
	if (endpoint?.redirectTo) return redirected(meta, endpoint.status ?? 303, endpoint.redirectTo);
	if (endpoint?.plainText) meta.$responseType = "text/plain; charset=utf-8";
	if (endpoint?.file) return fileOf(meta, data as FileAnswer);
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
