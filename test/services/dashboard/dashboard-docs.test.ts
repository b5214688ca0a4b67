// docs/dashboard.md's table of the dashboard's API and the gateway's route
// tables (endpoints.ts) must name the same paths, and the same ones as an
// operator's, so the reference cannot drift from what the gateway serves.
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
});
