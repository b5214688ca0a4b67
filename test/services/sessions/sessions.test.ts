import { bearer, createMerchant, type TestMerchant } from "../../factories/merchant";
import { setWallClock } from "../../factories/wall-clock";
import { startApp, type TestApp } from "../../setup/app";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;

let app: TestApp;
let merchant: TestMerchant;

beforeAll(async () => {
	app = await startApp();
	merchant = await createMerchant(app);
});
afterAll(() => app.stop());
afterEach(() => jest.useRealTimers());

async function createSession(domain: string, who: TestMerchant = merchant) {
	return app
		.http()
		.post(`/api/session?domain=${encodeURIComponent(domain)}`)
		.set(bearer(who));
}

describe("POST /api/session", () => {
	test("When the domain is a host name, then 200 text/plain with a UUID", async () => {
		// Act
		const res = await createSession("shop.example.com");

		// Assert
		expect(res.status).toBe(200);
		expect(res.headers["content-type"]).toMatch(/^text\/plain/);
		expect(res.text).toMatch(UUID);
	});

	test.each([
		["a scheme", "https://shop.example.com"],
		["a port", "shop.example.com:8080"],
		["a path", "shop.example.com/checkout"],
		["a space", "shop example.com"],
		["an empty label", "shop..example.com"],
		["a label starting with a hyphen", "-shop.example.com"],
		["an underscore", "shop_1.example.com"],
		["non-ASCII letters", "bücher.de"],
		["a 64-character label", `${"a".repeat(64)}.com`],
	])("When the domain has %s, then 500 text/plain 'Error with domain in session <domain>'", async (_, domain) => {
		// Act
		const res = await createSession(domain);

		// Assert
		expect(res.status).toBe(500);
		expect(res.headers["content-type"]).toMatch(/^text\/plain/);
		expect(res.text).toBe(`Error with domain in session ${domain}`);
	});

	test("When the domain is empty or missing, then 500 with an empty domain in the message", async () => {
		const empty = await createSession("");
		const missing = await app.http().post("/api/session").set(bearer(merchant));

		for (const res of [empty, missing]) {
			expect(res.status).toBe(500);
			expect(res.text).toBe("Error with domain in session ");
		}
	});

	test("When the domain is sent twice, then 400 naming domain: a parameter has one value, never one picked", async () => {
		const res = await app.http().post("/api/session?domain=a.com&domain=b.com").set(bearer(merchant));

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: "domain must be given once" });
	});

	test("When the token is missing, then 401 and no session is created", async () => {
		const res = await app.http().post("/api/session?domain=shop.example.com");

		expect(res.status).toBe(401);
		expect(res.body).toEqual({ error: "UNAUTHORIZED", status: 401 });
	});
});

describe("GET /api/session", () => {
	test("When the session was just created, then it is VALID with local date-times 5 minutes apart", async () => {
		// Arrange
		const sessionId = (await createSession("Shop.Example.com")).text;

		// Act
		const res = await app.http().get(`/api/session?sessionId=${sessionId}`).set(bearer(merchant));

		// Assert
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			sessionId,
			domain: "shop.example.com",
			createdAt: expect.stringMatching(LOCAL_DATE_TIME),
			expiresAt: expect.stringMatching(LOCAL_DATE_TIME),
			status: "VALID",
		});
		const lifetime = Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt);
		expect(lifetime).toBe(5 * 60 * 1000);
	});

	test("When 5 minutes have passed since creation, then the session is EXPIRED", async () => {
		// Arrange: the session is made between these two readings of the clock, whatever the machine's load.
		const notBefore = Date.now();
		const sessionId = (await createSession("shop.example.com")).text;
		const notAfter = Date.now();
		setWallClock(notBefore + 5 * 60 * 1000 - 50);
		const justBefore = await app.http().get(`/api/session?sessionId=${sessionId}`).set(bearer(merchant));
		jest.setSystemTime(notAfter + 5 * 60 * 1000 + 50);

		// Act
		const after = await app.http().get(`/api/session?sessionId=${sessionId}`).set(bearer(merchant));

		// Assert
		expect(justBefore.body.status).toBe("VALID");
		expect(after.body.status).toBe("EXPIRED");
	});

	test("When the session belongs to another account, then 200 with an empty body", async () => {
		// Arrange
		const other = await createMerchant(app, { name: "Other shop" });
		const sessionId = (await createSession("shop.example.com", other)).text;

		// Act
		const res = await app.http().get(`/api/session?sessionId=${sessionId}`).set(bearer(merchant));

		// Assert
		expect(res.status).toBe(200);
		expect(res.text).toBe("");
	});

	test("When the session id is sent in upper case, then it is the same session", async () => {
		const sessionId = (await createSession("shop.example.com")).text;

		const res = await app.http().get(`/api/session?sessionId=${sessionId.toUpperCase()}`).set(bearer(merchant));

		expect(res.body.sessionId).toBe(sessionId);
	});

	test("When the session does not exist, then 200 with an empty body", async () => {
		const res = await app.http().get("/api/session?sessionId=6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f").set(bearer(merchant));

		expect(res.status).toBe(200);
		expect(res.text).toBe("");
	});

	test.each([
		["not a UUID", "?sessionId=abc"],
		["missing", ""],
		["a query operator", "?sessionId[$ne]=x"],
		["a URN", "?sessionId=urn:uuid:6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f"],
	])("When sessionId is %s, then 400 BAD_REQUEST naming sessionId", async (_, query) => {
		const res = await app.http().get(`/api/session${query}`).set(bearer(merchant));

		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "BAD_REQUEST", status: 400, message: expect.stringContaining("sessionId") });
	});
});
