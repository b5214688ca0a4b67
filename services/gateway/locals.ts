// What the gateway service holds (set in created()) and the moleculer-web
// methods its route hooks call: `this` in every hook and method.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Authenticator } from "./api-auth";
import type { CORS } from "./cors";
import type { DashboardRoutes } from "./dashboard-routes";
import type { PortalRoutes } from "./portal-routes";

export interface Locals {
	auth: Authenticator;
	dashboard: DashboardRoutes;
	portal: PortalRoutes;
	/** PUBLIC_BASE_URL: where links sent to buyers point; unset, the request's own origin. */
	publicBaseUrl: string | undefined;
	/** Seals a MID's Stripe key to payments (processor-keys.ts). */
	sealProcessor(processor: unknown): Promise<unknown>;
	openapi: object;
	server: Server;
	writeCorsHeaders(route: { cors: typeof CORS }, req: IncomingMessage, res: ServerResponse, preflight: boolean): void;
	resolveAlias(url: string, method?: string): { alias: { action?: string } } | null;
}
