// docs/openapi.json and the gateway's route tables (endpoints.ts) must
// describe the same operations, in both directions, so they cannot drift.

import { CustomerStatus, RefundStatus, TransactionStatus, TransactionType } from "../../../services/billing/states";
import { CVC_KEY_PATTERN } from "../../../services/checkout/buyer-input";
import {
	adminEndpoints,
	apiEndpoints,
	demoEndpoints,
	type Endpoint,
	processorEndpoints,
	publicEndpoints,
} from "../../../services/gateway/endpoints";
import { DeliveryStatus } from "../../../services/notifications/states";
import { DeclineCategory } from "../../../shared/contracts/billing";
import { EVENT_TYPES } from "../../../shared/contracts/notifications";
import { CURRENCY_CODES } from "../../../shared/money";
import { CARDS, createShop, submitCheckout } from "../../factories/checkout";
import { admin } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

interface Operation {
	security?: Record<string, string[]>[];
	parameters?: ({ $ref: string } | { name: string; in: string })[];
	responses: Record<string, { content?: Record<string, unknown> }>;
}

interface OpenApiDocument {
	openapi: string;
	paths: Record<string, Record<string, unknown>>;
}

interface Route {
	/** `"POST /admin/accounts"`, for test names. */
	name: string;
	/** Lower case, as the document's keys. */
	method: string;
	path: string;
	endpoint: Endpoint;
	/** The security scheme the route requires, or null for none. */
	scheme: "apiToken" | "adminToken" | null;
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The health check is a route of its own in services/gateway/routes.ts (/actuator), outside the tables. */
const OUTSIDE_THE_TABLES = ["GET /actuator/health"];

/** `"POST /accounts/:accountId/tokens"` under `/admin` → `{method: "post", path: "/admin/accounts/{accountId}/tokens"}`. */
function toRoutes(prefix: string, table: Record<string, Endpoint>, scheme: Route["scheme"]): Route[] {
	return Object.entries(table).map(([key, endpoint]) => {
		const [method, path] = key.split(" ");
		const documentedPath = prefix + path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
		return { name: `${method} ${documentedPath}`, method: method.toLowerCase(), path: documentedPath, endpoint, scheme };
	});
}

const routes: Route[] = [
	...toRoutes("/api", apiEndpoints, "apiToken"),
	...toRoutes("/api", publicEndpoints, null),
	...toRoutes("/api/processors", processorEndpoints, null),
	...toRoutes("/admin", adminEndpoints, "adminToken"),
	...toRoutes("/demo", demoEndpoints, null),
];

function operationsOf(document: OpenApiDocument): string[] {
	return Object.entries(document.paths).flatMap(([path, item]) =>
		Object.keys(item)
			.filter(key => HTTP_METHODS.includes(key))
			.map(method => `${method.toUpperCase()} ${path}`),
	);
}

function operation(document: OpenApiDocument, route: Route): Operation | undefined {
	return document.paths[route.path]?.[route.method] as Operation | undefined;
}

let app: TestApp;
let document: OpenApiDocument;

beforeAll(async () => {
	app = await startApp();
	document = (await app.http().get("/api/openapi.json")).body;
});
afterAll(() => app.stop());

describe("GET /api/openapi.json", () => {
	test("When it is requested without a token, then 200 with an OpenAPI 3 document", async () => {
		// Act
		const res = await app.http().get("/api/openapi.json");

		// Assert
		expect(res.status).toBe(200);
		expect(res.headers["content-type"]).toMatch(/^application\/json/);
		expect(res.body.openapi).toMatch(/^3\./);
		expect(res.body.components.securitySchemes).toMatchObject({
			apiToken: { type: "http", scheme: "bearer" },
			adminToken: { type: "http", scheme: "bearer" },
		});
	});
});

describe("The document and endpoints.ts", () => {
	test.each(routes)("When $name is a route in endpoints.ts, then the document describes it", route => {
		// Act
		const described = operation(document, route);

		// Assert
		expect(described).toBeDefined();
	});

	test("When the document describes an operation, then it is a route in endpoints.ts or the health check", () => {
		// Arrange
		const known = new Set([...routes.map(r => r.name), ...OUTSIDE_THE_TABLES]);

		// Act
		const unknown = operationsOf(document).filter(op => !known.has(op));

		// Assert
		expect(unknown).toEqual([]);
	});

	test("When the health check is looked up, then the document describes it without a token", () => {
		// Act
		const health = document.paths["/actuator/health"]?.get as Operation | undefined;

		// Assert
		expect(health?.security).toEqual([]);
		expect(Object.keys(health?.responses ?? {})).toEqual(expect.arrayContaining(["200", "503"]));
	});

	test.each(routes)("When $name is documented, then it names the route's token and its success status", route => {
		// Arrange
		const described = operation(document, route);
		const status = String(route.endpoint.status ?? 200);

		// Act
		const security = described?.security;
		const success = described?.responses[status];

		// Assert
		expect(security).toEqual(route.scheme ? [{ [route.scheme]: [] }] : []);
		expect(success).toBeDefined();
		if (route.endpoint.plainText) expect(Object.keys(success?.content ?? {})).toContain("text/plain");
	});

	test.each(routes.filter(r => r.path.startsWith("/api")))(
		"When $name is under /api, then it documents the X-API-Version header",
		route => {
			// Act
			const parameters = operation(document, route)?.parameters ?? [];

			// Assert
			expect(parameters).toContainEqual({ $ref: "#/components/parameters/ApiVersion" });
		},
	);
});

describe("The document and the code's own lists", () => {
	/** An enum of the document's components, by schema name. */
	function documentedEnum(name: string): unknown[] {
		return ((document as unknown as { components: { schemas: Record<string, { enum?: unknown[] }> } }).components.schemas[name]?.enum ?? [])
			.slice()
			.sort();
	}

	test.each([
		["CustomerStatus", Object.values(CustomerStatus)],
		["TransactionType", Object.values(TransactionType)],
		["TransactionStatus", Object.values(TransactionStatus)],
		["RefundStatus", Object.values(RefundStatus)],
		["DeliveryStatus", Object.values(DeliveryStatus)],
		["WebhookEventType", [...EVENT_TYPES]],
		["Currency", [...CURRENCY_CODES]],
		["DeclineCategory", Object.values(DeclineCategory)],
	])("When the document lists %s, then it lists exactly the code's values", (name, values) => {
		// Act
		const documented = documentedEnum(name);

		// Assert
		expect(documented).toEqual([...values].sort());
	});

	test("When the document describes additionalData keys, then it refuses CVC fields with the checkout's own pattern", () => {
		// Act
		const key = (document as unknown as { components: { schemas: Record<string, { not?: { pattern?: string } }> } }).components.schemas
			.AdditionalDataKey;

		// Assert
		expect(key.not?.pattern).toBe(CVC_KEY_PATTERN);
	});
});

describe("What every operation can answer", () => {
	test.each(routes.filter(r => r.endpoint.status === 201))(
		"When $name answers 201, then endpoints.ts says where Location points and the document documents the header",
		route => {
			// Act
			const created = operation(document, route)?.responses["201"] as { headers?: Record<string, unknown> } | undefined;

			// Assert
			expect(route.endpoint.location).toBeDefined();
			expect(created?.headers?.Location).toBeDefined();
		},
	);

	test.each(routes)(
		"When $name is documented, then it names the answers every request can get: 400, 413 and, behind a service, 503; 401 and 429 with a token",
		route => {
			// Act
			const statuses = Object.keys(operation(document, route)?.responses ?? {});

			// Assert
			expect(statuses).toEqual(expect.arrayContaining(["400", "413"]));
			if (route.endpoint.action.split(".")[0] !== "gateway") expect(statuses).toContain("503");
			if (route.scheme) expect(statuses).toEqual(expect.arrayContaining(["401", "429"]));
			if (route.path.startsWith("/admin/accounts/{accountId}")) expect(statuses).toContain("404");
		},
	);

	test.each(routes.filter(r => r.method === "post" && !r.scheme && r.path.startsWith("/api/") && !r.path.startsWith("/api/processors/")))(
		"When $name takes a POST without a token, then its 429 is the per-address limit the gateway counts it against (CHECKOUTS_PER_MINUTE)",
		route => {
			// Act
			const limited = operation(document, route)?.responses["429"] as { $ref?: string } | undefined;

			// Assert
			expect(limited?.$ref).toBe("#/components/responses/CheckoutTooManyRequests");
		},
	);
});

describe("What an answer holds", () => {
	test("When the sandbox's ledger lists a checkout's charge, then the SandboxOperation schema names every field of it, its outcome's authentication included", async () => {
		// Arrange
		const shop = await createShop(app);
		await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.frictionless });

		// Act
		const operations = (await admin(app).get("/sandbox/operations?cardBin=400000&kind=charge").expect(200)).body as {
			outcome: Record<string, unknown>;
		}[];

		// Assert
		const schema = (document as unknown as { components: { schemas: Record<string, SchemaObject> } }).components.schemas.SandboxOperation;
		const outcome = schema.properties?.outcome.anyOf?.find(s => s.type === "object");
		const charge = operations.at(-1)!;
		expect(Object.keys(schema.properties ?? {})).toEqual(expect.arrayContaining(Object.keys(charge)));
		expect(Object.keys(outcome?.properties ?? {})).toEqual(expect.arrayContaining(Object.keys(charge.outcome)));
		expect(charge.outcome.authentication).toEqual({ version: "2.2.0", outcome: "FRICTIONLESS", eci: "05" });
	});
});

interface SchemaObject {
	type?: string;
	properties?: Record<string, SchemaObject>;
	anyOf?: SchemaObject[];
}
