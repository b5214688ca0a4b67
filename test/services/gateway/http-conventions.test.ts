import { bearer, createMerchant, type TestMerchant } from "../../factories/merchant";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let merchant: TestMerchant;

beforeAll(async () => {
	app = await startApp();
	merchant = await createMerchant(app);
});
afterAll(() => app.stop());

describe("Unknown paths", () => {
	test.each(["/api/nothing-here", "/nowhere", "/admin/nothing", "/api/session/extra"])(
		"When %s is requested, then 404 with exactly {error, status}",
		async path => {
			const res = await app.http().get(path).set(bearer(merchant));

			expect(res.status).toBe(404);
			expect(res.text).toBe(JSON.stringify({ error: "NOT_FOUND", status: 404 }));
		},
	);
});

describe("X-API-Version", () => {
	test.each([
		["absent", undefined],
		["1.0", "1.0"],
	])("When the version is %s, then the request is served", async (_, version) => {
		const req = app.http().post("/api/session?domain=a.com").set(bearer(merchant));
		if (version) req.set("X-API-Version", version);

		expect((await req).status).toBe(200);
	});

	test.each(["2.0", "1", "latest"])("When the version is %s, then 400 UNSUPPORTED_API_VERSION", async version => {
		const res = await app.http().post("/api/session?domain=a.com").set(bearer(merchant)).set("X-API-Version", version);

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "UNSUPPORTED_API_VERSION", status: 400, message: "Supported versions: 1.0" });
	});
});

describe("HEAD /actuator/health", () => {
	test("When an uptime monitor sends HEAD, then it gets the status without a body", async () => {
		const res = await app.http().head("/actuator/health");

		expect(res.status).toBe(200);
		expect(res.text ?? "").toBe("");
	});
});

describe("CORS", () => {
	const origin = "https://merchant.example";

	test("When a browser sends a preflight, then any origin is allowed for GET, POST, DELETE and PATCH", async () => {
		const res = await app
			.http()
			.options("/api/session")
			.set("Origin", origin)
			.set("Access-Control-Request-Method", "POST")
			.set("Access-Control-Request-Headers", "Authorization, X-API-Version");

		expect(res.status).toBe(204);
		expect(res.headers["access-control-allow-origin"]).toBe("*");
		for (const method of ["GET", "POST", "DELETE", "PATCH"]) expect(res.headers["access-control-allow-methods"]).toContain(method);
		expect(res.headers["access-control-allow-headers"]).toMatch(/Authorization/);
	});

	test.each([
		["a success", (h: Record<string, string>) => h, 200],
		["a 401", () => ({}), 401],
	])("When the answer is %s, then it carries CORS headers", async (_, headers, status) => {
		const res = await app
			.http()
			.post("/api/session?domain=a.com")
			.set(headers(bearer(merchant)))
			.set("Origin", origin);

		expect(res.status).toBe(status);
		expect(res.headers["access-control-allow-origin"]).toBe("*");
	});

	test("When the answer is a 404 or a 400, then it carries CORS headers too", async () => {
		const notFound = await app.http().get("/api/nothing").set("Origin", origin);
		const badRequest = await app.http().get("/api/session?sessionId=x").set(bearer(merchant)).set("Origin", origin);

		expect([notFound.status, badRequest.status]).toEqual([404, 400]);
		expect(notFound.headers["access-control-allow-origin"]).toBe("*");
		expect(badRequest.headers["access-control-allow-origin"]).toBe("*");
	});
});

describe("Where parameters go", () => {
	test("When POST /api/session gets a JSON body, then 400: its only parameter is the domain query parameter", async () => {
		const res = await app.http().post("/api/session").set(bearer(merchant)).send({ domain: "shop.example.com" });

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: "This endpoint takes no request body" });
	});

	test("When an admin POST carries its fields in the query string, then 400", async () => {
		const res = await app
			.http()
			.post("/admin/accounts?name=Q&environment=sandbox")
			.set("Authorization", "Bearer test-admin-token-0123456789");

		expect(res.status).toBe(400);
		expect(res.body.message).toMatch(/Query parameters are not accepted/);
	});

	test("When an admin body is a JSON array, then 400 saying it must be an object", async () => {
		const res = await app.http().post("/admin/accounts").set("Authorization", "Bearer test-admin-token-0123456789").send([1, 2]);

		expect(res.status).toBe(400);
		expect(res.body.message).toBe("Request body must be a JSON object");
	});

	test("When a request has no token and a bad X-API-Version, then 401 comes first", async () => {
		const res = await app.http().post("/api/session?domain=a.com").set("X-API-Version", "9");

		expect(res.status).toBe(401);
	});
});

describe("Admin answers", () => {
	test("When an admin request fails and the browser sent an Origin, then no CORS header invites it: the admin API is not for browsers", async () => {
		const res = await app
			.http()
			.get("/admin/accounts/abc")
			.set("Origin", "https://evil.example")
			.set("Authorization", "Bearer test-admin-token-0123456789");

		expect(res.status).toBe(400);
		expect(res.headers["access-control-allow-origin"]).toBeUndefined();
	});

	test("When an account is created, then Location names where to read it, without the query string", async () => {
		const res = await app
			.http()
			.post("/admin/accounts")
			.set("Authorization", "Bearer test-admin-token-0123456789")
			.send({ name: "L", environment: "sandbox" });

		expect(res.status).toBe(201);
		expect(res.headers.location).toBe(`/admin/accounts/${res.body.id}`);
	});
});

describe("Request bodies", () => {
	test("When the JSON body is malformed, then 400 BAD_REQUEST", async () => {
		const res = await app
			.http()
			.post("/admin/accounts")
			.set("Authorization", "Bearer test-admin-token-0123456789")
			.set("Content-Type", "application/json")
			.send('{"name": ');

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: "Request body is not valid JSON" });
	});

	test("When the body is larger than the limit (100kb by default), then 413 PAYLOAD_TOO_LARGE", async () => {
		const res = await app
			.http()
			.post("/admin/accounts")
			.set("Authorization", "Bearer test-admin-token-0123456789")
			.send({ name: "x".repeat(200_000), environment: "sandbox" });

		expect(res.status).toBe(413);
		expect(res.body).toEqual({ error: "PAYLOAD_TOO_LARGE", status: 413, message: expect.any(String) });
	});
});

describe("The demo session", () => {
	test("When a browser sends a preflight to /demo/session, then it is answered without creating a session", async () => {
		const res = await app.http().options("/demo/session").set("Origin", "https://x.example").set("Access-Control-Request-Method", "GET");

		expect(res.status).toBe(204);
		expect(res.text ?? "").toBe("");
	});
});
