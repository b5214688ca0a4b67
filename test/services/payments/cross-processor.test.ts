// One MID group on two processors: a MID on Adyen (Prism serving Adyen's Checkout
// API document, through the recorder) and a MID on Stripe (stripe-mock, Stripe's
// own mock checking every request against Stripe's OpenAPI document), on one
// sandbox account. The card is in our own vault, so a renewal moves between them
// whatever their processor: Adyen refusing the MID (its documented 401, picked
// with Prism's `Prefer: code=401`) moves it to the Stripe MID an hour later, and
// a Stripe MID taken out of routing (inactive) moves it to Adyen, which is sent
// the card from our vault (with the network's transaction id of its first
// payment when there is one: stripe-mock's fixtures have none, so
// adyen-requests.test.ts shows it on the request itself). At checkout, Adyen
// refusing the MID moves the checkout on to the Stripe MID at once. The buyer
// is charged once per period, and each MID's health counts its own sales and declines.
// Stripe refusing the MID is stripe-mock answering every payment with the
// decline code of a payment the MID may not take (its documented fixtures, one
// changed): it moves a checkout and a trial's first charge to the Adyen MID.
// stripe-mock cannot refuse a sandbox MID's test key (it refuses live keys only,
// which a sandbox MID cannot hold): Stripe's 401 as a MID refusal is tested in
// stripe-connector.test.ts, and the move on it is the same as on any MID refusal.
import { type PrismServer, prismViolations } from "../../../dev/adyen-servers";
import { type StripeServer, startStripeMock } from "../../../dev/stripe-servers";
import { ADYEN_KEYS, type AdyenApp, startAdyenApp } from "../../factories/adyen-app";
import { createShop, type Shop, submitCheckout } from "../../factories/checkout";
import { admin, bearer, DAY_MS } from "../../factories/merchant";
import type { PrismRecorder } from "../../factories/prism-recorder";
import type { TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

jest.setTimeout(120_000);

const ADYEN = { type: "adyen", apiKey: ADYEN_KEYS.apiKey, merchantAccount: "ShopComCascade" };
const STRIPE = { type: "stripe", secretKey: `sk_test_${Date.now().toString(36)}cascade` };

interface Transaction {
	type: string;
	status: string;
	midId: number;
	processorReference: string | null;
	declineReason: string | null;
}

interface MidHealth {
	midId: number;
	last30Days: { sales: number; declined: number };
}

// The suite's app, its Prism and recorder (each describe starts its own, with its own stripe-mock).
let prism: PrismServer;
let recorder: PrismRecorder;
let app: TestApp;

/** A shop whose first MID is on `first` and second on `second`, with a customer subscribed to `product` on the first. */
async function subscribedOnFirst(
	first: object,
	second: object,
	product: keyof Shop["products"] = "charge",
): Promise<Shop & { first: number; second: number; customerId: number }> {
	const shop = await createShop(app, { processor: first });
	const [firstMid, secondMid] = shop.mids;
	const mids = (body: object) => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${secondMid}`, body).expect(200);
	// The checkout goes to the first MID (the second takes none), then both take sales again.
	await mids({ processor: second, weight: 0 });
	const { customerId } = (await submitCheckout(app, shop, { productId: shop.products[product] })).body;
	await mids({ weight: 1 });
	return { ...shop, first: firstMid, second: secondMid, customerId };
}
const transactionsOf = async (shop: Shop, customerId: number): Promise<Transaction[]> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
/** Each MID's sales and declines over the 30 days to the account's now (the renewals, not the checkout 32 days before), once counted. */
const healthOf = (shop: Shop & { first: number; second: number }, expected: number[][]) =>
	eventually(async () => {
		const health = (await admin(app).get(`/accounts/${shop.accountId}/merchant-account-health`).expect(200)).body as MidHealth[];
		const of = (midId: number) => health.find(h => h.midId === midId)?.last30Days;
		expect([of(shop.first), of(shop.second)].map(m => m && [m.sales, m.declined])).toEqual(expected);
	}, 15_000);
const clockTo = (shop: Shop, ms: number) =>
	admin(app)
		.post(`/accounts/${shop.accountId}/clock`, { advanceTo: new Date(Date.now() + ms).toISOString() })
		.expect(200);
const adyenPayments = (from: number) => recorder.exchanges.slice(from).filter(e => e.path === "/payments");
const customersOf = async (shop: Shop): Promise<Array<{ id: number; status: string }>> =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers`).expect(200)).body;

/** An app whose Adyen MIDs go to Prism and Stripe MIDs to stripe-mock, started with these options. */
function withApps(stripeOptions: Parameters<typeof startStripeMock>[0]) {
	let started: AdyenApp;
	let stripeMock: StripeServer;
	beforeAll(async () => {
		stripeMock = await startStripeMock(stripeOptions);
		started = await startAdyenApp({ STRIPE_API_BASE: stripeMock.url });
		({ prism, recorder, app } = started);
	}, 120_000);
	afterAll(async () => {
		await started?.stop();
		await stripeMock?.stop();
	});
	afterEach(() => {
		recorder.prefer = () => undefined;
	});
}

describe("A MID group on Adyen and Stripe", () => {
	withApps({ intentsSucceed: true });

	test.each([
		["its card's verification and its payment", () => "code=401"],
		[
			"its payment (the verification, amount 0, approved)",
			(body: Record<string, unknown>) => ((body.amount as { value: number }).value > 0 ? "code=401" : undefined),
		],
	])("When Adyen refuses the MID at checkout (401) on %s, then the checkout is paid once on the group's Stripe MID", async (_, refusal) => {
		// Arrange: the Adyen MID takes the checkouts first; its API key is revoked at Adyen.
		const shop = await createShop(app, { processor: ADYEN });
		const [adyenMid, stripeMid] = shop.mids;
		await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${adyenMid}`, { weight: 1000 }).expect(200);
		await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${stripeMid}`, { processor: STRIPE }).expect(200);
		recorder.prefer = (path, body) => (path === "/payments" && body.merchantAccount === ADYEN.merchantAccount ? refusal(body) : undefined);
		const before = recorder.exchanges.length;

		// Act
		const answer = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;

		// Assert: paid on Stripe; a refusal at the payment left its declined try with the merchant, as a buyer's own retry does.
		expect(answer).toMatchObject({ code: "OK", customerId: expect.any(Number) });
		const paid = await transactionsOf(shop, answer.customerId);
		expect(paid.map(t => [t.type, t.status, t.midId])).toEqual([["SUBSCRIPTION_START", "APPROVED", stripeMid]]);
		expect(paid[0].processorReference).toMatch(/^pi_/);
		const refusedAt = adyenPayments(before).map(e => [
			(e.body.amount as { value: number }).value > 0 ? "payment" : "verification",
			e.status,
		]);
		const refusedPayment = refusedAt.some(([step]) => step === "payment");
		expect(refusedAt).toEqual(
			refusedPayment
				? [
						["verification", 200],
						["payment", 401],
					]
				: [["verification", 401]],
		);
		const others = (await customersOf(shop)).filter(c => c.id !== answer.customerId);
		if (refusedPayment) {
			expect(others).toHaveLength(1);
			const declined = await transactionsOf(shop, others[0].id);
			expect(declined.map(t => [t.status, t.declineReason, t.midId])).toEqual([["DECLINED", "merchant_account_refused", adyenMid]]);
		} else expect(others).toEqual([]);
		expect(prismViolations(prism.log())).toEqual([]);
		await healthOf({ ...shop, first: adyenMid, second: stripeMid }, [
			[0, refusedPayment ? 1 : 0],
			[1, 0],
		]);
	});

	test("When every MID of a group of four refuses at checkout, then the checkout stops after three MIDs and nothing is charged", async () => {
		// Arrange: four Adyen MIDs on one merchant account whose API key is revoked.
		const shop = await createShop(app, { processor: ADYEN });
		for (const name of ["MID C", "MID D"])
			await admin(app)
				.post(`/accounts/${shop.accountId}/merchant-accounts`, { name, group: "default", cardTypes: ["visa"], processor: ADYEN })
				.expect(201);
		recorder.prefer = path => (path === "/payments" ? "code=401" : undefined);
		const before = recorder.exchanges.length;

		// Act
		const answer = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;

		// Assert: each try a verification the MID refused; no customer was opened.
		expect(answer.code).toBe("CREDITCARD_VALIDATION");
		expect(adyenPayments(before).map(e => [(e.body.amount as { value: number }).value, e.status])).toEqual([
			[0, 401],
			[0, 401],
			[0, 401],
		]);
		expect(await customersOf(shop)).toEqual([]);
	});

	test("When Adyen refuses the MID at a renewal (401), then an hour later the renewal is charged once on the group's Stripe MID, and each MID's health counts its own", async () => {
		// Arrange: subscribed on Adyen.
		const shop = await subscribedOnFirst(ADYEN, STRIPE);
		const { customerId } = shop;
		expect((await transactionsOf(shop, customerId)).map(t => t.midId)).toEqual([shop.first]);
		// The API key is revoked at Adyen: every request of that merchant account answers Adyen's documented 401.
		recorder.prefer = (_, body) => (body.merchantAccount === ADYEN.merchantAccount ? "code=401" : undefined);
		const before = recorder.exchanges.length;

		// Act: the renewal falls due and is refused; an hour later (the clock runs it) it is tried on the next MID.
		await clockTo(shop, 32 * DAY_MS);

		// Assert
		const renewals = (await transactionsOf(shop, customerId)).filter(t => t.type === "RENEWAL");
		expect(renewals.map(t => [t.status, t.declineReason, t.midId])).toEqual([
			["DECLINED", "merchant_account_refused", shop.first],
			["APPROVED", null, shop.second],
		]);
		expect(renewals[1].processorReference).toMatch(/^pi_/);
		expect(adyenPayments(before).map(e => e.status)).toEqual([401]);
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		expect(customer).toMatchObject({ status: "ACTIVE" });
		await healthOf(shop, [
			[0, 1],
			[1, 0],
		]);
	});

	test("When the group's Stripe MID leaves routing, then the renewal is charged once on the Adyen MID, sent the card from our vault (not stored at that merchant account), merchant-initiated", async () => {
		// Arrange: subscribed on Stripe; then its MID is deactivated.
		const shop = await subscribedOnFirst(STRIPE, ADYEN);
		const { customerId } = shop;
		const [first] = await transactionsOf(shop, customerId);
		expect([first.midId, first.processorReference]).toEqual([shop.first, expect.stringMatching(/^pi_/)]);
		await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${shop.first}`, { active: false }).expect(200);
		const before = recorder.exchanges.length;

		// Act
		await clockTo(shop, 32 * DAY_MS);

		// Assert
		const renewals = (await transactionsOf(shop, customerId)).filter(t => t.type === "RENEWAL");
		expect(renewals.map(t => [t.status, t.declineReason, t.midId])).toEqual([["APPROVED", null, shop.second]]);
		const sent = adyenPayments(before);
		expect(sent).toHaveLength(1);
		expect(sent[0].body).toMatchObject({
			merchantAccount: ADYEN.merchantAccount,
			shopperInteraction: "ContAuth",
			recurringProcessingModel: "Subscription",
			paymentMethod: { type: "scheme", number: expect.stringMatching(/^\d{15,16}$/) },
		});
		expect(sent[0].body).not.toHaveProperty("paymentMethod.cvc");
		expect(prismViolations(prism.log())).toEqual([]);
		await healthOf(shop, [
			[0, 0],
			[1, 0],
		]);
	});
});

// Stripe refusing the MID: stripe-mock answering every payment as Stripe answers one the MID may not take (a declined
// PaymentIntent whose decline code is transaction_not_allowed: transaction_not_permitted, MERCHANT_ACCOUNT); its
// set-ups (a trial's card saved for later) succeed.
describe("A MID group whose Stripe MID refuses payments", () => {
	withApps({ paymentsDecline: "transaction_not_allowed" });

	test("When the Stripe MID refuses the checkout's payment, then the checkout is paid once on the group's Adyen MID, and the refused try stays with the merchant", async () => {
		// Arrange: the Stripe MID takes the checkouts first.
		const shop = await createShop(app, { processor: STRIPE });
		const [stripeMid, adyenMid] = shop.mids;
		await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${stripeMid}`, { weight: 1000 }).expect(200);
		await admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${adyenMid}`, { processor: ADYEN }).expect(200);
		const before = recorder.exchanges.length;

		// Act
		const answer = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;

		// Assert
		expect(answer).toMatchObject({ code: "OK", customerId: expect.any(Number) });
		const paid = await transactionsOf(shop, answer.customerId);
		expect(paid.map(t => [t.type, t.status, t.midId])).toEqual([["SUBSCRIPTION_START", "APPROVED", adyenMid]]);
		// The card verified at Adyen (amount 0, its CVC), then paid there, the buyer present.
		expect(adyenPayments(before).map(e => [(e.body.amount as { value: number }).value, e.body.shopperInteraction, e.status])).toEqual([
			[0, "Ecommerce", 200],
			[999, "Ecommerce", 200],
		]);
		const others = (await customersOf(shop)).filter(c => c.id !== answer.customerId);
		expect(others).toHaveLength(1);
		const refused = await transactionsOf(shop, others[0].id);
		expect(refused.map(t => [t.status, t.declineReason, t.midId])).toEqual([["DECLINED", "transaction_not_permitted", stripeMid]]);
		expect(prismViolations(prism.log())).toEqual([]);
		await healthOf({ ...shop, first: stripeMid, second: adyenMid }, [
			[0, 1],
			[1, 0],
		]);
	});

	test("When the Stripe MID refuses the charge a trial ends with, then an hour later it is charged once on the group's Adyen MID, merchant-initiated with the card from our vault", async () => {
		// Arrange: subscribed on Stripe with a trial (its card set up there, nothing charged yet).
		const shop = await subscribedOnFirst(STRIPE, ADYEN, "schedule");
		const { customerId } = shop;
		expect(await transactionsOf(shop, customerId)).toEqual([]);
		const before = recorder.exchanges.length;

		// Act: the trial ends, its charge (the renewal cycle's) is refused by the Stripe MID, and tried an hour later on the next MID.
		await clockTo(shop, 16 * DAY_MS);

		// Assert
		const charges = await transactionsOf(shop, customerId);
		expect(charges.map(t => [t.type, t.status, t.declineReason, t.midId])).toEqual([
			["SUBSCRIPTION_START", "DECLINED", "transaction_not_permitted", shop.first],
			["SUBSCRIPTION_START", "APPROVED", null, shop.second],
		]);
		const sent = adyenPayments(before);
		expect(sent.map(e => e.body.shopperInteraction)).toEqual(["ContAuth"]);
		expect(sent[0].body).not.toHaveProperty("paymentMethod.cvc");
		const customer = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		expect(customer).toMatchObject({ status: "ACTIVE" });
		expect(prismViolations(prism.log())).toEqual([]);
		await healthOf(shop, [
			[0, 1],
			[1, 0],
		]);
	});
});
