// Checkouts an outage or a crash cut off are settled by billing's recovery
// sweep (services/billing/subscriptions/checkout-recovery.ts). Each test leaves the state a
// checkout stopped at one point leaves: a PENDING customer opened by billing's
// own step (listed for the recovery), and, where the checkout had already paid,
// the charge in the real sandbox processor's ledger under the checkout's key;
// the step that would have recorded it never runs. The sweep runs every 200 ms
// with a grace period of 2 s. What the merchant sees is asserted through the
// API and a real webhook receiver.
import { randomBytes, randomUUID } from "node:crypto";
import { cardFingerprint } from "../../../services/checkout/card-data";
import type { CouponTerms } from "../../../shared/contracts/accounts";
import type { OpenSubscriptionInput } from "../../../shared/contracts/billing";
import { CARDS, createShop, type Shop, submitCheckout, uniqueEmail } from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { type SandboxPayments, sandboxPayments } from "../../factories/sandbox-processor";
import { startWebhookReceiver, type WebhookReceiver } from "../../factories/webhook-receiver";
import { startApp, type TestApp } from "../../setup/app";

let app: TestApp;
let shop: Shop;
let receiver: WebhookReceiver;
/** The payments service, as billing calls it: what "the processor charged" means here. */
let processor: SandboxPayments;

beforeAll(async () => {
	app = await startApp({
		env: { REQUEST_TIMEOUT_MS: "1000", REFUND_RECOVERY_GRACE_MS: "2000", REFUND_RECOVERY_INTERVAL_MS: "200" },
	});
	receiver = await startWebhookReceiver();
	shop = await createShop(app);
	await admin(app).patch(`/accounts/${shop.accountId}`, { webhookUrl: receiver.url }).expect(200);
	processor = sandboxPayments(app);
});

afterAll(async () => {
	await app.stop();
	await receiver.stop();
});

interface Opened {
	customerId: number;
	attemptId: string;
	email: string;
	cardToken: string;
}

/** The charge the checkout made with its key, as the processor saw it, before the checkout stopped. */
async function chargedBeforeItStopped(opened: Opened, amount: number): Promise<void> {
	const charged = await processor.charge({
		idempotencyKey: `${opened.attemptId}:charge`,
		cardToken: opened.cardToken,
		amount,
		currency: "EUR",
		midId: shop.mids[0],
		initiator: "customer",
	});
	expect(charged.status).toBe("APPROVED");
}

/** The customer once the sweep has settled it (after the grace period). */
const recovered = (opened: Opened) =>
	eventually(
		() => customerOf(opened.customerId),
		c => c.status !== "PENDING",
		"the checkout's recovery",
	);

/** Billing's step 4 of a checkout, as the checkout service calls it: a PENDING customer under the duplicate lock. */
async function openedCheckout(card: string = CARDS.visa, coupon: CouponTerms | null = null): Promise<Opened> {
	const attemptId = `co_${randomBytes(8).toString("hex")}`;
	const email = uniqueEmail();
	const { cardToken } = await processor.tokenize({ pan: card, expiry: "1234" }, shop.mids[0]);
	const input: OpenSubscriptionInput = {
		accountId: shop.accountId,
		attemptId,
		environment: "sandbox",
		product: { id: shop.products.charge, allowMultipleSubscriptions: false },
		buyer: { email, name: "Ada", lastName: "Lovelace" },
		card: {
			cardToken,
			// The checkout's own fingerprint, so the duplicate lock is the one a real checkout of this card meets.
			fingerprint: cardFingerprint(Buffer.from(process.env.CARD_FINGERPRINT_KEY!, "base64"), card),
			bin: card.slice(0, 6),
			last4: card.slice(-4),
			brand: card === CARDS.mastercard ? "mastercard" : "visa",
			expiry: "1234",
		},
		mid: { id: shop.mids[0], name: "MID A" },
		sessionId: randomUUID(),
		additionalData: null,
		coupon,
	};
	const opened = await app.broker.call<{ customerId: number }, OpenSubscriptionInput>("billing.openSubscription", input);
	// The checkout's next step with a coupon: its redemption, taken for the customer before the payment.
	if (coupon)
		await app.broker.call("accounts.redeemCoupon", { accountId: shop.accountId, couponId: coupon.couponId, customerId: opened.customerId });
	return { customerId: opened.customerId, attemptId, email, cardToken };
}

const customerOf = async (id: number) => (await app.http().get(`/api/customer/${id}`).set(bearer(shop))).body;
const transactionsOf = async (customerId: number): Promise<{ id: number; type: string; status: string; amount: number }[]> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`)).body;
const webhooksOf = (customerId: number) => receiver.requests.map(r => JSON.parse(r.rawBody)).filter(e => e.customerId === customerId);

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
	const deadline = Date.now() + 15_000;
	for (;;) {
		const value = await read();
		if (done(value)) return value;
		if (Date.now() > deadline) throw new Error(`${what} did not happen within 15 s; last seen: ${JSON.stringify(value)}`);
		await new Promise(resolve => setTimeout(resolve, 200));
	}
}

test("When a checkout stopped after the processor charged, before anything was recorded, then the sweep records the charge, activates the customer and sends TRANSACTION and CONVERSION, charging nothing more", async () => {
	// Arrange: the charge the checkout made, with its key; then the checkout stops.
	const opened = await openedCheckout();
	await chargedBeforeItStopped(opened, 999);

	// Act: the sweep, after the grace period.
	const customer = await recovered(opened);

	// Assert
	expect(customer).toMatchObject({ id: opened.customerId, status: "ACTIVE" });
	const transactions = await transactionsOf(opened.customerId);
	expect(transactions).toEqual([expect.objectContaining({ type: "SUBSCRIPTION_START", status: "APPROVED", amount: 9.99 })]);
	const operations = (await admin(app).get("/sandbox/operations?kind=charge")).body as { idempotencyKey: string }[];
	expect(operations.filter(o => o.idempotencyKey.startsWith(opened.attemptId))).toHaveLength(1);
	const events = await eventually(
		async () => webhooksOf(opened.customerId),
		e => e.length >= 3,
		"the TRANSACTION and CONVERSION webhooks, and the charge's INVOICE_ISSUED",
	);
	expect(events.map(e => e.type).sort()).toEqual(["CONVERSION", "INVOICE_ISSUED", "TRANSACTION"]);
}, 30_000);

test("When a checkout stopped before the processor was asked, then the sweep abandons the customer, charges nothing and frees the buyer to subscribe again", async () => {
	// Arrange: no charge under the checkout's key.
	const opened = await openedCheckout(CARDS.mastercard);

	// Act
	const customer = await recovered(opened);

	// Assert: abandoned, no transaction, no webhook, and the duplicate lock is released.
	expect(customer).toMatchObject({ id: opened.customerId, status: "ABANDONED" });
	expect(await transactionsOf(opened.customerId)).toEqual([]);
	expect(webhooksOf(opened.customerId)).toEqual([]);
	const again = await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.mastercard, email: opened.email });
	expect(again.body).toMatchObject({ code: "OK" });
}, 30_000);

/** A coupon of the shop limited to one redemption, and its terms as the checkout reads them. */
async function singleUseCoupon(code: string): Promise<CouponTerms> {
	await admin(app).post(`/accounts/${shop.accountId}/coupons`, { code, percentOff: 10, duration: "once", maxRedemptions: 1 }).expect(201);
	return app.broker.call("accounts.couponFor", { accountId: shop.accountId, code, productId: shop.products.charge });
}

const redeemedOf = async (code: string) =>
	((await admin(app).get(`/accounts/${shop.accountId}/coupons`).expect(200)).body as { code: string; redeemed: number }[]).find(
		c => c.code === code,
	)!.redeemed;

test("When a checkout with a single-use coupon stopped after taking its redemption, before paying, then the sweep gives the redemption back and another buyer can use the code", async () => {
	// Arrange: the redemption taken, then the checkout stops.
	const coupon = await singleUseCoupon("CRASHED");
	const opened = await openedCheckout(CARDS.visa, coupon);
	expect(await redeemedOf("CRASHED")).toBe(1);

	// Act
	const customer = await recovered(opened);

	// Assert: abandoned, and the code is free again.
	expect(customer.status).toBe("ABANDONED");
	expect(await redeemedOf("CRASHED")).toBe(0);
	const other = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: "CRASHED" } });
	expect(other.body).toMatchObject({ code: "OK", discount: { couponId: coupon.couponId, amount: 1 } });
}, 30_000);

test("When a checkout with a single-use coupon stopped after the processor charged the discounted amount, then the sweep records the discount and keeps the redemption", async () => {
	// Arrange: 9.99 less 10 % (1.00), charged under the checkout's key.
	const coupon = await singleUseCoupon("PAIDTHEN");
	const opened = await openedCheckout(CARDS.visa, coupon);
	await chargedBeforeItStopped(opened, 899);

	// Act
	const customer = await recovered(opened);

	// Assert
	expect(customer).toMatchObject({ status: "ACTIVE", coupon: { couponId: coupon.couponId, periodsLeft: 0 } });
	expect(await transactionsOf(opened.customerId)).toEqual([
		expect.objectContaining({
			type: "SUBSCRIPTION_START",
			amount: 8.99,
			discount: { couponId: coupon.couponId, code: "PAIDTHEN", amount: 1 },
		}),
	]);
	expect(await redeemedOf("PAIDTHEN")).toBe(1);
	const other = await submitCheckout(app, shop, { productId: shop.products.charge, extra: { promotionCode: "PAIDTHEN" } });
	expect(other.body.code).toBe("COUPON_USED_UP");
}, 30_000);
