// The gateway and the services on separate brokers that talk only over a
// real NATS server, as `npm run node` runs them.
import type { AddressInfo } from "node:net";
import type { ServiceBroker } from "moleculer";
import { connect, type NatsConnection } from "nats";
import request from "supertest";
import { createBroker } from "../../runtime/broker";
import { replCommands } from "../../runtime/repl-commands";
import { ALL_SERVICES, type ServiceName } from "../../shared/config";
import { CARDS, createShop, submitCheckout } from "../factories/checkout";
import { ADMIN_TOKEN, testEnvironment } from "../setup/app";
import { type NatsServer, startNats } from "../setup/nats";

let nats: NatsServer;
/** Every message any node sent over NATS, read by a client of our own subscribed to all subjects. */
const wire: { subject: string; data: string }[] = [];
let spy: NatsConnection;
const nodes: Partial<Record<ServiceName, ServiceBroker>> = {};
let url: string;

async function startNode(service: ServiceName): Promise<ServiceBroker> {
	const broker = createBroker([service], { nodeID: `${service}-node`, logger: false });
	await broker.start();
	nodes[service] = broker;
	return broker;
}

beforeAll(async () => {
	nats = await startNats();
	testEnvironment({ env: { TRANSPORTER: nats.url } });
	spy = await connect({ servers: nats.url });
	const everything = spy.subscribe(">");
	void (async () => {
		for await (const message of everything) wire.push({ subject: message.subject, data: new TextDecoder().decode(message.data) });
	})();
	const gateway = await startNode("gateway");
	await startNode("accounts");
	await startNode("sessions");
	await startNode("checkout");
	await startNode("payments");
	await startNode("billing");
	await startNode("invoicing");
	await startNode("refunds");
	await startNode("notifications");
	await startNode("dashboard");
	await startNode("metrics");
	await startNode("portal");
	await startNode("usage");
	await gateway.waitForServices(
		[
			"accounts",
			"sessions",
			"checkout",
			"payments",
			"billing",
			"invoicing",
			"refunds",
			"notifications",
			"dashboard",
			"metrics",
			"portal",
			"usage",
		],
		10_000,
	);
	const server = (gateway.getLocalService("gateway") as unknown as { server: import("node:http").Server }).server;
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
	await Promise.all(Object.values(nodes).map(node => node?.stop()));
	await spy?.close();
	await nats?.stop();
});

describe("Cluster over NATS", () => {
	test("When each service runs on its own node, then the API works end to end through the gateway", async () => {
		// Arrange
		const account = await request(url)
			.post("/admin/accounts")
			.set("Authorization", `Bearer ${ADMIN_TOKEN}`)
			.send({ name: "Shop", environment: "sandbox" });
		const auth = { Authorization: `Bearer ${account.body.apiToken}` };

		// Act
		const created = await request(url).post("/api/session?domain=shop.example.com").set(auth);
		const read = await request(url).get(`/api/session?sessionId=${created.text}`).set(auth);

		// Assert
		expect(account.status).toBe(201);
		expect(created.status).toBe(200);
		expect(read.body).toMatchObject({ sessionId: created.text, domain: "shop.example.com", status: "VALID" });
		expect(new Set(Object.values(nodes).map(n => n!.nodeID)).size).toBe(ALL_SERVICES.length);
	});

	test("When a bad request crosses NATS, then its error keeps its documented shape", async () => {
		const account = await request(url)
			.post("/admin/accounts")
			.set("Authorization", `Bearer ${ADMIN_TOKEN}`)
			.send({ name: "Shop", environment: "sandbox" });
		const auth = { Authorization: `Bearer ${account.body.apiToken}` };

		const badDomain = await request(url).post("/api/session?domain=http://x").set(auth);
		const badId = await request(url).get("/api/session?sessionId=nope").set(auth);

		expect(badDomain.status).toBe(500);
		expect(badDomain.text).toBe("Error with domain in session http://x");
		expect(badId.status).toBe(400);
		expect(badId.body.error).toBe("BAD_REQUEST");
	});

	test("When a buyer checks out, then the checkout, sessions, accounts, payments and billing nodes complete it over NATS", async () => {
		// Arrange: the factories take an app; here the "app" is the gateway node's URL.
		const app = { url, http: () => request(url), broker: nodes.gateway!, stop: async () => {} };
		const shop = await createShop(app);

		// Act
		const ok = await submitCheckout(app, shop, { productId: shop.products.charge });
		const declined = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds });

		// Assert
		expect([ok.body.code, declined.body.code]).toEqual(["OK", "PAYMENT_DECLINED"]);
		const customer = await request(url).get(`/api/customer/${ok.body.customerId}`).set("Authorization", `Bearer ${shop.apiToken}`);
		expect(customer.body).toMatchObject({ id: ok.body.customerId, status: "ACTIVE", cardBin: "424242" });
	});

	test("When buyers check out and an operator gives a MID a Stripe key, then only the payments node is sent a card number, and the key crosses NATS only sealed", async () => {
		// Arrange
		const app = { url, http: () => request(url), broker: nodes.gateway!, stop: async () => {} };
		const shop = await createShop(app);
		const key = `sk_test_${Date.now().toString(36)}WireScan${Math.random().toString(36).slice(2)}`;
		wire.length = 0;

		// Act: a paid checkout, a declined one, and a Stripe MID.
		const paid = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.mastercard });
		const declined = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.insufficientFunds });
		const mid = await request(url)
			.post(`/admin/accounts/${shop.accountId}/merchant-accounts`)
			.set("Authorization", `Bearer ${ADMIN_TOKEN}`)
			.send({ name: "Stripe", group: "stripe", cardTypes: ["visa"], processor: { type: "stripe", secretKey: key } });
		await new Promise(resolve => setTimeout(resolve, 500));

		// Assert: the numbers travelled, to payments only (the checkout node sent them; the browser's JWE went to checkout).
		expect([paid.body.code, declined.body.code, mid.status]).toEqual(["OK", "PAYMENT_DECLINED", 201]);
		for (const pan of [CARDS.mastercard, CARDS.insufficientFunds]) {
			const carrying = wire.filter(m => m.data.includes(pan)).map(m => m.subject);
			expect(carrying.length).toBeGreaterThan(0);
			expect(carrying.filter(subject => !subject.endsWith(".payments-node"))).toEqual([]);
		}
		expect(wire.filter(m => m.data.includes(key.slice(8)))).toEqual([]);
	});

	test("When all nodes are up, then health names the NATS transporter UP", async () => {
		const res = await request(url).get("/actuator/health");

		expect(res.status).toBe(200);
		expect(res.body.components.transporter).toEqual({ status: "UP", details: { type: "NatsTransporter" } });
	});

	test("When an operator's REPL node joins over NATS, then its custom commands create and list accounts, products and BINs", async () => {
		// Arrange: a node with no services of its own, as `npm run repl` starts.
		const repl = createBroker([], { nodeID: "repl-node", logger: false });
		await repl.start();
		await repl.waitForServices(["accounts"], 10_000);
		const printed: string[] = [];
		const log = jest.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
		const run = (command: string, args: Record<string, unknown>, options: Record<string, string> = {}) =>
			replCommands.find(c => c.command.split(" ")[0] === command)!.action(repl, { ...args, options });

		try {
			// Act
			await run("account-create", { name: "From the REPL", environment: "sandbox" });
			const created = JSON.parse(printed.pop()!);
			await run("token-rotate", { accountId: created.id }, { grace: "60" });
			await run("bin-block", { accountId: created.id, bin: "411111" });
			await run("accounts", {});
			await run("renewals-status", {});

			// Assert
			expect(created).toMatchObject({ name: "From the REPL", apiToken: expect.stringMatching(/^sk_test_/) });
			expect(JSON.parse(printed.pop()!)).toEqual({ due: expect.any(Number), inFlight: expect.any(Number), suspended: expect.any(Number) });
			const accounts = JSON.parse(printed.pop()!);
			expect(accounts.map((a: { id: number }) => a.id)).toContain(created.id);
			expect(JSON.parse(printed.pop()!)).toEqual({ accountId: created.id, bin: "411111" });
			expect(JSON.parse(printed.pop()!).apiToken).toMatch(/^sk_test_/);
		} finally {
			log.mockRestore();
			await repl.stop();
		}
	});

	test("When the sessions node stops, then health is 503 naming it and session requests fail with 503 JSON", async () => {
		// Arrange
		const account = await request(url)
			.post("/admin/accounts")
			.set("Authorization", `Bearer ${ADMIN_TOKEN}`)
			.send({ name: "Shop", environment: "sandbox" });

		// Act
		await nodes.sessions!.stop();
		delete nodes.sessions;
		await new Promise(r => setTimeout(r, 300));
		const health = await request(url).get("/actuator/health");
		const create = await request(url).post("/api/session?domain=a.com").set("Authorization", `Bearer ${account.body.apiToken}`);

		// Assert
		expect(health.status).toBe(503);
		expect(health.body.components.services.details.sessions).toBe("DOWN");
		expect(create.status).toBe(503);
		expect(create.body).toEqual({ error: "SERVICE_UNAVAILABLE", status: 503, message: expect.any(String) });
	});
});
