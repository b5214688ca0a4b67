// One MID group on two processors: a MID on Adyen (Prism serving Adyen's Checkout
// API document, through the recorder) and a MID on Stripe (stripe-mock, Stripe's
// own mock checking every request against Stripe's OpenAPI document), on one
// sandbox account. The card is in our own vault, so a renewal moves between them
// whatever their processor: Adyen refusing the MID (its documented 401, picked
// with Prism's `Prefer: code=401`) moves it to the Stripe MID an hour later, and
// a Stripe MID taken out of routing (inactive) moves it to Adyen, which is sent
// the card from our vault (with the network's transaction id of its first
// payment when there is one: stripe-mock's fixtures have none, so
// adyen-requests.test.ts shows it on the request itself). The buyer is
// charged once per period, and each MID's health counts its own sales and declines.
// stripe-mock cannot refuse a sandbox MID's test key (it refuses live keys only,
// which a sandbox MID cannot hold): Stripe's 401 as a MID refusal is tested in
// stripe-connector.test.ts, and billing's move on it is the same for every processor.
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

describe("A MID group on Adyen and Stripe", () => {
	let started: AdyenApp;
	let prism: PrismServer;
	let recorder: PrismRecorder;
	let stripeMock: StripeServer;
	let app: TestApp;

	beforeAll(async () => {
		stripeMock = await startStripeMock({ intentsSucceed: true });
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

	/** A shop whose first MID is on `first` and second on `second`, with a customer subscribed on the first. */
	async function subscribedOnFirst(first: object, second: object): Promise<Shop & { first: number; second: number; customerId: number }> {
		const shop = await createShop(app, { processor: first });
		const [firstMid, secondMid] = shop.mids;
		const mids = (body: object) => admin(app).patch(`/accounts/${shop.accountId}/merchant-accounts/${secondMid}`, body).expect(200);
		// The checkout goes to the first MID (the second takes none), then both take sales again.
		await mids({ processor: second, weight: 0 });
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
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
