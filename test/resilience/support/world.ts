// Two shops with customers, transactions, sessions, a blocked BIN, a blocked
// email and delivered webhooks: what the fuzzer and the security tests aim at. Built
// through the API, as merchants and operators would.
import { generateKeyPairSync } from "node:crypto";
import { CompactEncrypt, importJWK, type JWK } from "jose";
import { CARDS, createShop, encrypt, newSession, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, advanceClock, bearer } from "../../factories/merchant";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { ADMIN_TOKEN, type TestApp } from "../../setup/app";
import type { World } from "./fuzz-requests";

/** Disputed 3 days after each charge, and won only with evidence. */
const DISPUTE_CARD = "4000000000002610";

export interface Built {
	world: World;
	shop: Shop;
	other: Shop;
	receiver: WebhookReceiver;
}

async function jweTo(jwk: JWK, plaintext: string, kid: string | undefined): Promise<string> {
	const key = await importJWK(jwk, "RSA-OAEP-256");
	return new CompactEncrypt(new TextEncoder().encode(plaintext))
		.setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", kid })
		.encrypt(key);
}

async function paidCustomer(
	app: TestApp,
	shop: Shop,
	productId: number,
	card: string = CARDS.visa,
): Promise<{ customerId: number; transactionId: number }> {
	const res = await submitCheckout(app, shop, { productId, card });
	if (res.body.code !== "OK") throw new Error(`checkout: ${res.status} ${res.text}`);
	const transactions = (await admin(app).get(`/accounts/${shop.accountId}/customers/${res.body.customerId}/transactions`)).body;
	return { customerId: res.body.customerId, transactionId: transactions[0].id };
}

/** Waits until every webhook of both shops is delivered, so nothing changes in the background any more. */
async function webhooksSettled(app: TestApp, shops: Shop[]): Promise<void> {
	const deadline = Date.now() + 20_000;
	for (;;) {
		const lists = await Promise.all(shops.map(s => admin(app).get(`/accounts/${s.accountId}/webhooks?limit=1000`)));
		const deliveries = lists.flatMap(l => l.body as { status: string }[]);
		if (deliveries.length > 0 && deliveries.every(d => d.status === "DELIVERED")) return;
		if (Date.now() > deadline) throw new Error(`webhooks not delivered: ${JSON.stringify(deliveries.map(d => d.status))}`);
		await new Promise(resolve => setTimeout(resolve, 100));
	}
}

export async function buildWorld(app: TestApp): Promise<Built> {
	const receiver = await startWebhookReceiver();
	const shop = await createShop(app);
	const other = await createShop(app);
	for (const s of [shop, other]) await admin(app).patch(`/accounts/${s.accountId}`, { webhookUrl: receiver.url }).expect(200);

	const mine = await paidCustomer(app, shop, shop.products.charge);
	const refunded = await paidCustomer(app, shop, shop.products.oneOff);
	const refund = await app.http().get(`/api/refund/${refunded.transactionId}`).set(bearer(shop));
	if (refund.body.success !== true) throw new Error(`refund: ${refund.text}`);
	const theirs = await paidCustomer(app, other, other.products.charge);
	// A dispute each, needing a response: the sandbox disputes this card's charge 3 days after it (docs/disputes.md).
	const disputes: number[] = [];
	for (const s of [shop, other]) {
		await paidCustomer(app, s, s.products.oneOff, DISPUTE_CARD);
		await advanceClock(app, s, 4);
		disputes.push((await app.http().get("/api/disputes").set(bearer(s)).expect(200)).body.data[0].id);
	}
	await admin(app).post(`/accounts/${shop.accountId}/bin-blacklist`, { bin: "411111" }).expect(201);
	await admin(app).post(`/accounts/${shop.accountId}/blocked-buyers`, { email: "blocked@fuzz-shop.example.com" }).expect(201);
	const dashboardUser = await admin(app)
		.post(`/accounts/${shop.accountId}/dashboard-users`, { email: "support@fuzz-shop.example.com", role: "operator" })
		.expect(201);
	const otherDashboardUser = await admin(app)
		.post(`/accounts/${other.accountId}/dashboard-users`, { email: "support@fuzz-other.example.com", role: "viewer" })
		.expect(201);

	await webhooksSettled(app, [shop, other]);
	const [event] = (await admin(app).get(`/accounts/${shop.accountId}/webhooks?limit=1`)).body as { id: string }[];

	const jwk = (await app.http().get("/api/checkout/key").expect(200)).body as JWK;
	const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" }) as JWK;
	const refusedJwes = await Promise.all([
		jweTo(jwk, "abcd", jwk.kid),
		jweTo(jwk, "4242 4242 4242 4242", jwk.kid),
		jweTo(jwk, "4".repeat(25), jwk.kid),
		jweTo(jwk, "", jwk.kid),
		jweTo(jwk, '{"$gt":""}', jwk.kid),
		jweTo(jwk, "4242424242424242", "another-kid"),
		jweTo(jwk, "4242424242424242", undefined),
		// Another key claiming ours: the service cannot decrypt it.
		jweTo(stranger, "4242424242424242", jwk.kid),
	]);

	const world: World = {
		apiToken: shop.apiToken,
		adminToken: ADMIN_TOKEN,
		accountId: shop.accountId,
		otherAccountId: other.accountId,
		productId: shop.products.charge,
		otherProductId: other.products.charge,
		customerId: mine.customerId,
		otherCustomerId: theirs.customerId,
		transactionId: mine.transactionId,
		refundedTransactionId: refunded.transactionId,
		otherTransactionId: theirs.transactionId,
		disputeId: disputes[0],
		otherDisputeId: disputes[1],
		sessionId: await newSession(app, shop),
		otherSessionId: await newSession(app, other),
		domain: "shop.example.com",
		eventId: event.id,
		blockedBin: "411111",
		blockedEmail: "blocked@fuzz-shop.example.com",
		midId: shop.mids[0],
		dashboardUserId: dashboardUser.body.id,
		otherDashboardUserId: otherDashboardUser.body.id,
		encryptedCard: await encrypt(app, CARDS.visa),
		encryptedCvc: await encrypt(app, "123"),
		refusedJwes,
		kid: String(jwk.kid),
	};
	return { world, shop, other, receiver };
}
