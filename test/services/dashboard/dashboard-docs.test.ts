// docs/dashboard.md's table of the dashboard's API and the gateway's route
// tables (endpoints.ts) must name the same paths, and the same ones as an
// operator's, so the reference cannot drift from what the gateway serves; and
// its roles table must say, in the row of the role that may, what each route
// does.
import { readFileSync } from "node:fs";
import path from "node:path";
import { dashboardEndpoints, dashboardSignInEndpoints } from "../../../services/gateway/endpoints";

const DOC = readFileSync(path.join(__dirname, "../../../docs/dashboard.md"), "utf8");

/** `"POST /customers/:customerId/unsubscribe"` → `"POST /customers/{customerId}/unsubscribe"`, as the document writes it. */
const documented = (route: string) => route.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

/** The table's rows: `| \`GET /audit\` (operator) | …`. */
const rows = [...DOC.matchAll(/^\| `([A-Z]+ \/[^`]*)`( \(operator[^)]*\))? \|/gm)].map(([, route, operator]) => ({
	route,
	operator: Boolean(operator),
}));

describe("docs/dashboard.md and endpoints.ts", () => {
	test("When the document lists the dashboard's API, then it names every route of endpoints.ts and no other", () => {
		const routes = Object.keys({ ...dashboardSignInEndpoints, ...dashboardEndpoints }).map(documented);

		expect(rows.map(r => r.route).sort()).toEqual(routes.sort());
	});

	test("When a route is marked (operator) in the document, then only an operator may use it, and the other way round", () => {
		const operators = Object.entries(dashboardEndpoints)
			.filter(([, endpoint]) => endpoint.change || endpoint.operatorOnly)
			.map(([route]) => documented(route));

		expect(
			rows
				.filter(r => r.operator)
				.map(r => r.route)
				.sort(),
		).toEqual(operators.sort());
	});

	test("When the roles table says what each role may do, then the viewer's row names what every route a viewer may use reads, and the operator's what every other does", () => {
		// What each route does, in the roles table's words; a route added without its words here fails.
		const words: Record<string, string> = {
			"GET /customers": "customers",
			"GET /customers/{id}": "customers",
			"GET /customers/{id}/transactions": "transactions",
			"GET /customers/{customerId}/emails": "emails sent to them",
			"GET /customers/{customerId}/invoices": "invoices",
			"GET /email-settings": "the email settings",
			"GET /portal-settings": "the portal settings",
			"PATCH /portal-settings": "change the portal settings",
			"GET /meters": "meters",
			"POST /meters": "create meters",
			"GET /customers/{id}/usage": "usage this period",
			"GET /customers/{id}/usage-events": "usage events",
			"GET /transactions": "transactions",
			"GET /events": "events",
			"GET /webhooks": "webhook deliveries",
			"GET /products": "products",
			"GET /merchant-accounts": "merchant accounts",
			"GET /merchant-accounts/health": "health",
			"PATCH /merchant-accounts/{id}/processor": "set a MID's processor",
			"GET /metrics": "subscription metrics",
			"GET /disputes": "disputes",
			"GET /coupons": "coupons",
			"GET /audit": "read the audit log",
			"PATCH /email-settings": "change the email settings",
			"POST /coupons": "create and deactivate coupons",
			"POST /coupons/{couponId}/deactivate": "create and deactivate coupons",
			"POST /transactions/{id}/refund": "refund",
			"POST /customers/{customerId}/unsubscribe": "unsubscribe",
			"POST /customers/{id}/pause": "pause",
			"POST /customers/{id}/resume": "resume",
			"POST /customers/{id}/cancel-at-period-end": "cancel at the period's end",
			"DELETE /customers/{id}/cancel-at-period-end": "undo a cancellation",
			"POST /customers/{id}/change-quote": "quote",
			"POST /customers/{id}/change": "apply",
			"DELETE /customers/{id}/pending-change": "cancel a scheduled change",
			"POST /customers/{customerId}/card-update-link": "send a card update link",
			"POST /webhooks/{eventId}/redeliver": "redeliver a webhook",
			"POST /clock": "run the sandbox test clock",
		};
		const roleRow = (role: string) => DOC.match(new RegExp(`^\\| \`${role}\` \\| (.*) \\|$`, "m"))?.[1] ?? "";
		// Signing out and reading who one is are every user's.
		const everyone = ["POST /sign-out", "GET /me"];
		const unsaid = Object.entries(dashboardEndpoints)
			.filter(([route]) => !everyone.includes(route))
			.map(([route, endpoint]) => [documented(route), endpoint.change || endpoint.operatorOnly ? "operator" : "viewer"] as const)
			.filter(([route, role]) => !words[route] || !roleRow(role).includes(words[route]))
			.map(([route, role]) => `${role}: ${route}`);

		expect(unsaid).toEqual([]);
	});
});
