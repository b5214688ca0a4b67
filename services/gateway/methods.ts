// Which HTTP methods reach a handler. moleculer-web runs an OPTIONS request as
// the method its Access-Control-Request-Method names, or as a GET without it,
// so a bare OPTIONS could refund a transaction. Before moleculer-web sees a
// request, the gateway decides here from the route table alone:
//   - OPTIONS under a CORS route is a preflight: 204 with CORS headers, no handler;
//     elsewhere it runs nothing (405 on a known path, 404 otherwise);
//   - a known path with a method it does not take: 405 with `Allow`;
//   - everything else goes on to moleculer-web's routing.
// HEAD is routed only where it is an alias of its own (endpoints.ts adds one for
// every GET that is safe to repeat). Method-override headers are never read.

/** Methods the route tables can hold; OPTIONS never reaches a handler. */
const ROUTED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Routes with CORS: browsers call them from other origins and preflight first. */
export const CORS_PREFIXES = ["/api", "/actuator", "/demo"];

export type MethodDecision = { kind: "preflight" } | { kind: "notAllowed"; allow: string[] } | { kind: "notFound" } | { kind: "route" };

/** The path as moleculer-web matches it: no query string, no trailing slash. */
export function routedPath(url: string): string {
	const path = url.split("?")[0];
	return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

function underPrefix(path: string, prefix: string): boolean {
	return path === prefix || path.startsWith(`${prefix}/`);
}

/** What the route table answers: whether a path takes a method, and every method it takes (none for an unknown path). */
export interface RouteTable {
	takes(path: string, method: string): boolean;
	methodsAt(path: string): string[];
}

export function decideMethod(method: string | undefined, path: string, table: RouteTable): MethodDecision {
	// Most requests take this path: one lookup for their own method instead of one per method.
	if (method !== undefined && method !== "OPTIONS" && table.takes(path, method)) return { kind: "route" };
	const allowed = table.methodsAt(path);
	if (method === "OPTIONS") {
		if (CORS_PREFIXES.some(prefix => underPrefix(path, prefix))) return { kind: "preflight" };
		return allowed.length ? { kind: "notAllowed", allow: allowed } : { kind: "notFound" };
	}
	if (allowed.length) return { kind: "notAllowed", allow: allowed };
	return { kind: "route" };
}

/** The route table, asking the gateway's own matcher; a path it cannot decode takes nothing. */
export function routeTable(resolveAlias: (url: string, method: string) => unknown): RouteTable {
	const takes = (path: string, method: string) => {
		try {
			return Boolean(resolveAlias(path, method));
		} catch {
			return false;
		}
	};
	return { takes, methodsAt: path => ROUTED_METHODS.filter(method => takes(path, method)) };
}
