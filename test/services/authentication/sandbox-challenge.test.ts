// 3-D Secure in the sandbox, over HTTP: the checkout pauses for the issuer's
// challenge (answering the frame CHALLENGE), the tester's choice on the
// sandbox's challenge page, and the frame's continuation (docs/authentication.md).
// Every test has its own shop: the renewals come from its test clock, the
// account's now, which only moves forward and dates every later checkout.
import { MongoClient } from "mongodb";
import { databaseNameFor } from "../../../shared/db.mixin";
import {
	CARDS,
	cardUpdateSession,
	checkoutBody,
	createShop,
	newSession,
	type Shop,
	submitCardUpdate,
	submitCheckout,
} from "../../factories/checkout";
import { admin, bearer } from "../../factories/merchant";
import { clockToRenewalOf } from "../../factories/test-clock";
import { setWallClock } from "../../factories/wall-clock";
import { startApp, type TestApp } from "../../setup/app";
import { eventually } from "../notifications/webhook-events";

/** A customer's state as an outage or an older version left it, written straight into billing's database. */
async function withBillingDb(work: (db: import("mongodb").Db) => Promise<unknown>) {
	const client = await MongoClient.connect(process.env.MONGO_URL!);
	try {
		await work(client.db(databaseNameFor("billing", process.env.MONGO_URL!)));
	} finally {
		await client.close();
	}
}

let app: TestApp;
let shop: Shop;

beforeAll(async () => {
	// The checkout recovery sweeps every 300 ms: a challenge still open must survive its sweeps.
	app = await startApp({ env: { REQUEST_TIMEOUT_MS: "3000", REFUND_RECOVERY_GRACE_MS: "4000", REFUND_RECOVERY_INTERVAL_MS: "300" } });
});
beforeEach(async () => {
	shop = await createShop(app);
});
afterAll(() => app.stop());
afterEach(() => jest.useRealTimers());

const renewalsRun = (...customerIds: number[]) => clockToRenewalOf(app, shop, ...customerIds);

const transactionsOf = async (customerId: number) =>
	(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body as {
		type: string;
		status: string;
		declineReason: string | null;
		authentication: { version: string | null; outcome: string; eci: string | null } | null;
		id: number;
		declineCategory: string | null;
	}[];
const customersByEmail = async (email: string) =>
	(
		await admin(app)
			.get(`/accounts/${shop.accountId}/customers?email=${encodeURIComponent(email)}`)
			.expect(200)
	).body as { id: number; status: string }[];
const continueCheckout = (sessionId: string) =>
	app.http().post("/api/checkout/continue").send({ sessionId, landingDomain: "shop.example.com" });
const sessionStatus = async (sessionId: string) =>
	(await app.http().get(`/api/session?sessionId=${sessionId}`).set(bearer(shop)).expect(200)).body.status as string;
const choose = (challengeUrl: string, result: string) =>
	app
		.http()
		.post(`/api/sandbox/challenges/${new URL(challengeUrl, "http://x").searchParams.get("challenge")}`)
		.send({ result });

/** A checkout of a CHARGE product with the challenge card, stopped at its challenge. */
async function challenged() {
	const sessionId = await newSession(app, shop);
	const body = await checkoutBody(app, shop, { productId: shop.products.charge, sessionId, card: CARDS.challenge });
	const res = await app.http().post("/api/checkout").send(body).expect(200);
	return { sessionId, email: body.email as string, answer: res.body as { code: string; challengeUrl: string } };
}

describe("A challenge the buyer completes", () => {
	test("When the issuer asks for a challenge, then the frame is answered CHALLENGE with the sandbox's page, and nothing is charged yet", async () => {
		// Act
		const { sessionId, email, answer } = await challenged();

		// Assert
		expect(answer).toEqual({
			code: "CHALLENGE",
			message: expect.any(String),
			challengeUrl: expect.stringMatching(
				new RegExp(`^/checkout/challenge\\.html\\?challenge=sbx3ds_[0-9a-f]{32}&sessionId=${sessionId}$`),
			),
		});
		const [customer] = await customersByEmail(email);
		expect(customer.status).toBe("PENDING");
		expect(await transactionsOf(customer.id)).toEqual([]);
	});

	test("When the challenge page is served, then only the frame's origin and the session's site may embed it", async () => {
		const { answer } = await challenged();

		const page = await app.http().get(answer.challengeUrl).expect(200);

		expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'self' shop.example.com:*");
		expect(page.text).toContain("Complete authentication");
	});

	test("When the buyer completes the challenge, then the payment goes on: OK, one approved charge, and the same answer for a repeat", async () => {
		// Arrange
		const { sessionId, email, answer } = await challenged();

		// Act
		const chosen = await choose(answer.challengeUrl, "complete");
		const first = await continueCheckout(sessionId);
		const again = await continueCheckout(sessionId);

		// Assert
		expect(chosen.body).toEqual({ accepted: true });
		const [customer] = await customersByEmail(email);
		expect(first.body).toEqual({ code: "OK", message: expect.any(String), customerId: customer.id });
		expect(again.body).toEqual(first.body);
		expect(customer.status).toBe("ACTIVE");
		expect(await transactionsOf(customer.id)).toMatchObject([
			{ type: "SUBSCRIPTION_START", status: "APPROVED", authentication: { version: "2.2.0", outcome: "CHALLENGED", eci: "05" } },
		]);
	});

	test("When two tabs continue the same completed challenge at once, then both answer OK and the buyer is charged once", async () => {
		const { sessionId, email, answer } = await challenged();
		await choose(answer.challengeUrl, "complete");

		const both = await Promise.all([continueCheckout(sessionId), continueCheckout(sessionId)]);

		const [customer] = await customersByEmail(email);
		expect(both.map(r => r.body.code)).toEqual(["OK", "OK"]);
		expect(await transactionsOf(customer.id)).toHaveLength(1);
	});

	test("When the frame continues before the buyer has chosen, then it is answered CHALLENGE again, and a second choice changes nothing", async () => {
		const { sessionId, email, answer } = await challenged();

		const early = await continueCheckout(sessionId);
		const first = await choose(answer.challengeUrl, "fail");
		const second = await choose(answer.challengeUrl, "complete");
		const done = await continueCheckout(sessionId);

		expect(early.body).toMatchObject({ code: "CHALLENGE", challengeUrl: answer.challengeUrl });
		expect([first.body, second.body]).toEqual([{ accepted: true }, { accepted: false }]);
		expect(done.body.code).toBe("AUTHENTICATION_FAILED");
		expect((await customersByEmail(email))[0].status).toBe("DECLINED");
	});
});

describe("A challenge the buyer fails or abandons", () => {
	test("When the buyer fails the challenge, then AUTHENTICATION_FAILED, nothing is charged, and the session is free for another card", async () => {
		// Arrange
		const { sessionId, email, answer } = await challenged();

		// Act
		await choose(answer.challengeUrl, "fail");
		const failed = await continueCheckout(sessionId);
		const retry = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId, card: CARDS.visa, email });

		// Assert
		expect(failed.body).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.any(String) });
		const [declined, retried] = (await customersByEmail(email)).sort((a, b) => a.id - b.id);
		expect(declined.status).toBe("DECLINED");
		expect(await transactionsOf(declined.id)).toMatchObject([
			{
				type: "SUBSCRIPTION_START",
				status: "DECLINED",
				declineReason: "authentication_failed",
				authentication: { version: "2.2.0", outcome: "FAILED", eci: "07" },
			},
		]);
		expect(retry.body).toMatchObject({ code: "OK", customerId: retried.id });
	});

	test("When the buyer fails the challenge and the frame continues again (a second tab, a reload), then the repeat answers AUTHENTICATION_FAILED too", async () => {
		const { sessionId, answer } = await challenged();
		await choose(answer.challengeUrl, "fail");

		const first = await continueCheckout(sessionId);
		const again = await continueCheckout(sessionId);

		expect(first.body).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.any(String) });
		expect(again.body).toEqual(first.body);
		expect(await sessionStatus(sessionId)).toBe("VALID");
	});

	test("When the session ends before the buyer finishes the challenge, then nothing is charged, the customer is ABANDONED, the session reads EXPIRED, and a late choice is refused", async () => {
		// Arrange
		const { sessionId, email, answer } = await challenged();
		setWallClock(Date.now() + 5 * 60 * 1000 + 1);

		// Act
		const late = await choose(answer.challengeUrl, "complete");
		const continued = await continueCheckout(sessionId);
		const again = await continueCheckout(sessionId);

		// Assert
		expect(late.body).toEqual({ accepted: false });
		expect([continued.body.code, again.body.code]).toEqual(["SESSION_EXPIRED", "SESSION_EXPIRED"]);
		const [customer] = await customersByEmail(email);
		expect(customer.status).toBe("ABANDONED");
		expect(await transactionsOf(customer.id)).toEqual([]);
		expect(await sessionStatus(sessionId)).toBe("EXPIRED");
	});
});

test("When the buyer leaves during the challenge and nothing more is asked, then the checkout recovery makes the customer ABANDONED once the session has ended, nothing is charged, and the session reads EXPIRED", async () => {
	// Arrange: the challenge outlives several recovery sweeps while its session is open.
	const { sessionId, email, answer } = await challenged();
	await new Promise(resolve => setTimeout(resolve, 5000));
	const [during] = await customersByEmail(email);

	// Act: the session's 5 minutes pass.
	setWallClock(Date.now() + 5 * 60 * 1000 + 1);

	// Assert
	expect(during.status).toBe("PENDING");
	const customer = await eventually(async () => {
		const [found] = await customersByEmail(email);
		expect(found.status).toBe("ABANDONED");
		return found;
	}, 20_000);
	expect(await transactionsOf(customer.id)).toEqual([]);
	expect((await choose(answer.challengeUrl, "complete")).body).toEqual({ accepted: false });
	expect(await sessionStatus(sessionId)).toBe("EXPIRED");
});

describe("Authentication without a challenge", () => {
	test.each([
		["frictionless", CARDS.frictionless, { version: "2.2.0", outcome: "FRICTIONLESS", eci: "05" }],
		["not enrolled", CARDS.notEnrolled, { version: "2.2.0", outcome: "ATTEMPTED", eci: "06" }],
		[
			"authentication service unavailable (the payment goes on unauthenticated)",
			CARDS.authenticationUnavailable,
			{ version: null, outcome: "UNAVAILABLE", eci: "07" },
		],
		["not asked for authentication", CARDS.visa, { version: null, outcome: "NOT_REQUIRED", eci: null }],
	])(
		"When the card is %s, then the checkout answers OK at once and the charge records its authentication",
		async (_, card, authentication) => {
			const res = await submitCheckout(app, shop, { productId: shop.products.charge, card });

			expect(res.body).toMatchObject({ code: "OK" });
			expect(await transactionsOf(res.body.customerId)).toMatchObject([{ status: "APPROVED", authentication }]);
		},
	);

	test("When a renewal is charged, then it records no authentication (merchant-initiated), and the first charge's TRANSACTION event carries its own", async () => {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.frictionless })).body;

		await renewalsRun(customerId);

		const [first, renewal] = await transactionsOf(customerId);
		expect([first.authentication?.outcome, renewal.authentication]).toEqual(["FRICTIONLESS", null]);
		const events = await eventually(async () => {
			const found = (await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data as {
				type: string;
				data: { transaction?: { type: string; authentication: unknown } };
			}[];
			expect(found.filter(e => e.type === "TRANSACTION")).toHaveLength(2);
			return found;
		}, 15_000);
		expect(events.find(e => e.data.transaction?.type === "SUBSCRIPTION_START")?.data.transaction?.authentication).toEqual(
			first.authentication,
		);
	});

	test("When the product is PREAUTHORIZE and the buyer completes the challenge, then the hold is placed", async () => {
		const sessionId = await newSession(app, shop);
		const body = await checkoutBody(app, shop, { productId: shop.products.preauthorize, sessionId, card: CARDS.challenge });
		const challenge = (await app.http().post("/api/checkout").send(body)).body;

		await choose(challenge.challengeUrl, "complete");
		const done = await continueCheckout(sessionId);

		expect(challenge.code).toBe("CHALLENGE");
		expect(done.body.code).toBe("OK");
		expect((await transactionsOf(done.body.customerId)).map(t => [t.type, t.status])).toEqual([["PREAUTHORIZATION", "APPROVED"]]);
	});
});

test("When a continue names a session with no payment in progress, then the session's code", async () => {
	const sessionId = await newSession(app, shop);

	const res = await continueCheckout(sessionId);
	const unknown = await continueCheckout("6f1c1d2e-9a4b-4c1d-8e2f-3a4b5c6d7e8f");

	expect([res.body.code, unknown.body.code]).toEqual(["SESSION_NOT_FOUND", "SESSION_NOT_FOUND"]);
});

test("When a continue names a session that paid without a challenge, then SESSION_NOT_FOUND, and the session stays USED", async () => {
	const sessionId = await newSession(app, shop);
	const paid = await submitCheckout(app, shop, { productId: shop.products.charge, sessionId });

	const res = await continueCheckout(sessionId);

	expect(paid.body.code).toBe("OK");
	expect(res.body.code).toBe("SESSION_NOT_FOUND");
	expect(await sessionStatus(sessionId)).toBe("USED");
});

describe("The product's policy", () => {
	test("When a product authenticates ALWAYS, then a card the issuer would not ask about is authenticated (frictionless in the sandbox), and the product says so", async () => {
		// Arrange
		const created = await admin(app)
			.post(`/accounts/${shop.accountId}/products`, {
				name: "Always authenticated",
				amount: 9.99,
				currency: "EUR",
				billing: "CHARGE",
				renewal: { every: 1, unit: "month" },
				merchantAccountGroup: "default",
				authentication: "ALWAYS",
			})
			.expect(201);

		// Act
		const res = await submitCheckout(app, shop, { productId: created.body.id, card: CARDS.visa });

		// Assert
		expect(created.body.authentication).toBe("ALWAYS");
		expect(res.body).toMatchObject({ code: "OK" });
		expect(await transactionsOf(res.body.customerId)).toMatchObject([
			{ status: "APPROVED", authentication: { version: "2.2.0", outcome: "FRICTIONLESS", eci: "05" } },
		]);
	});

	test("When a product is made without a policy, then it authenticates WHEN_REQUIRED; a policy that is not one of the two is refused", async () => {
		const products = (await admin(app).get(`/accounts/${shop.accountId}/products`).expect(200)).body as {
			id: number;
			authentication: string;
		}[];
		const refused = await admin(app).patch(`/accounts/${shop.accountId}/products/${shop.products.charge}`, { authentication: "SOMETIMES" });

		expect(products.find(p => p.id === shop.products.charge)?.authentication).toBe("WHEN_REQUIRED");
		expect(refused.status).toBe(400);
	});
});

describe("Renewals", () => {
	test("When the issuer refuses a renewal for want of authentication, then it is an AUTHENTICATION decline, the customer is in recovery, the merchant gets AUTHENTICATION_REQUIRED naming it, and the buyer's card update pays what is owed", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.renewalsNeedAuthentication }))
			.body;

		// Act: the renewal, then the buyer's new card.
		await renewalsRun(customerId);
		const [, refused] = await transactionsOf(customerId);
		const inRecovery = (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;
		const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;
		const updated = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });

		// Assert
		expect(refused).toMatchObject({
			type: "RENEWAL",
			status: "DECLINED",
			declineReason: "authentication_required",
			declineCategory: "AUTHENTICATION",
		});
		expect(inRecovery).toMatchObject({ status: "ACTIVE", attempts: 1 });
		const event = await eventually(async () => {
			const found = (await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data.find(
				(e: { type: string }) => e.type === "AUTHENTICATION_REQUIRED",
			);
			expect(found).toBeDefined();
			return found;
		}, 15_000);
		expect(event).toMatchObject({ transaction_id: refused.id, data: { customer: { id: customerId }, transaction: { id: refused.id } } });
		expect(updated.body).toMatchObject({ code: "OK", recovered: true });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
			["RENEWAL", "APPROVED"],
		]);
	});
});

describe("A card update's challenge on the renewal owed", () => {
	const continueUpdate = (sessionId: string) =>
		app.http().post("/api/card-update/continue").send({ sessionId, landingDomain: "shop.example.com" });
	const customerOf = async (customerId: number) => (await app.http().get(`/api/customer/${customerId}`).set(bearer(shop)).expect(200)).body;

	/** The new card's expiry: the customer's card is the new one once it shows. */
	const NEW_EXPIRY = "1130";
	const OLD_CARD = { cardExpiredTime: expect.not.stringContaining("30") };

	/** A customer whose renewal the issuer refused for want of authentication, and its card update stopped at the challenge. */
	async function updateChallenged() {
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.renewalsNeedAuthentication }))
			.body;
		await renewalsRun(customerId);
		const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;
		const res = await submitCardUpdate(app, sessionId, { card: CARDS.challenge, expiry: NEW_EXPIRY });
		return { customerId, sessionId, answer: res.body as { code: string; challengeUrl: string } };
	}

	test("When the issuer asks the buyer to authenticate the renewal owed, then the frame is answered CHALLENGE, nothing is charged, and the customer keeps its card", async () => {
		const { customerId, answer } = await updateChallenged();

		expect(answer).toMatchObject({
			code: "CHALLENGE",
			challengeUrl: expect.stringMatching(/^\/checkout\/challenge\.html\?challenge=sbx3ds_/),
		});
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
		]);
		expect(await customerOf(customerId)).toMatchObject({ status: "ACTIVE", attempts: 1, ...OLD_CARD });
	});

	test("When the buyer completes it and two tabs continue at once, then both answer OK recovered, the renewal owed is charged once, authenticated, and the card is the new one", async () => {
		// Arrange
		const { customerId, sessionId, answer } = await updateChallenged();
		await choose(answer.challengeUrl, "complete");

		// Act
		const answers = await Promise.all([continueUpdate(sessionId), continueUpdate(sessionId)]);
		const again = await continueUpdate(sessionId);

		// Assert
		for (const res of [...answers, again]) expect(res.body).toMatchObject({ code: "OK", customerId, recovered: true });
		const transactions = await transactionsOf(customerId);
		expect(transactions.map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
			["RENEWAL", "APPROVED"],
		]);
		expect(transactions[2].authentication).toEqual({ version: "2.2.0", outcome: "CHALLENGED", eci: "05" });
		expect(await customerOf(customerId)).toMatchObject({ status: "ACTIVE", attempts: 0, cardExpiredTime: expect.stringContaining("30") });
		const events = await eventually(async () => {
			const found = (await app.http().get(`/api/events?customerId=${customerId}&limit=100`).set(bearer(shop)).expect(200)).body.data as {
				type: string;
			}[];
			expect(found.map(e => e.type)).toEqual(expect.arrayContaining(["PAYMENT_METHOD_UPDATED", "REACTIVATION"]));
			return found;
		}, 15_000);
		expect(events.filter(e => e.type === "REACTIVATION")).toHaveLength(1);
	});

	test("When the buyer fails it, then AUTHENTICATION_FAILED, nothing is charged, the customer keeps its card, and the session takes another card", async () => {
		// Arrange
		const { customerId, sessionId, answer } = await updateChallenged();

		// Act
		await choose(answer.challengeUrl, "fail");
		const failed = await continueUpdate(sessionId);
		const retry = await submitCardUpdate(app, sessionId, { card: CARDS.mastercard });

		// Assert
		expect(failed.body).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.any(String) });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status, t.declineReason])).toEqual([
			["SUBSCRIPTION_START", "APPROVED", null],
			["RENEWAL", "DECLINED", "authentication_required"],
			["RENEWAL", "DECLINED", "authentication_failed"],
			["RENEWAL", "APPROVED", null],
		]);
		expect(retry.body).toMatchObject({ code: "OK", recovered: true });
		expect(await customerOf(customerId)).toMatchObject({ attempts: 0, cardType: "mastercard" });
	});

	test("When the buyer fails it and the frame continues again (a second tab, a reload), then the repeat answers AUTHENTICATION_FAILED too", async () => {
		const { sessionId, answer } = await updateChallenged();
		await choose(answer.challengeUrl, "fail");

		const first = await continueUpdate(sessionId);
		const again = await continueUpdate(sessionId);

		expect(first.body).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.any(String) });
		expect(again.body).toEqual(first.body);
		expect(await sessionStatus(sessionId)).toBe("VALID");
	});

	test("When the buyer leaves during it, then once the session has ended the recovery settles the update: nothing charged, nothing changed, the session reads EXPIRED, and a late choice is refused", async () => {
		// Arrange
		const { customerId, sessionId, answer } = await updateChallenged();

		// Act: the session's 5 minutes, and the recovery's grace, pass.
		setWallClock(Date.now() + 5 * 60 * 1000 + 5000);

		// Assert
		await eventually(async () => {
			expect((await continueUpdate(sessionId)).body.code).toBe("SESSION_EXPIRED");
		}, 20_000);
		expect((await choose(answer.challengeUrl, "complete")).body).toEqual({ accepted: false });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
		]);
		expect(await customerOf(customerId)).toMatchObject({ status: "ACTIVE", attempts: 1, ...OLD_CARD });
		expect(await sessionStatus(sessionId)).toBe("EXPIRED");
	});

	test("When the merchant unsubscribes a customer whose card update waits for the challenge, then it is refused while the challenge is open; once the session has ended the update is settled first (nothing charged, the session reads EXPIRED) and the customer is UNSUBSCRIBED", async () => {
		// Arrange
		const { customerId, sessionId, answer } = await updateChallenged();
		const unsubscribe = () => app.http().post(`/api/unsubscribe/${customerId}`).set(bearer(shop)).expect(200);

		// Act
		const during = await unsubscribe();
		setWallClock(Date.now() + 5 * 60 * 1000 + 1000);
		const after = await unsubscribe();

		// Assert
		expect(during.body).toEqual({
			success: false,
			message: `Customer ${customerId} has a card update in progress; try again in a few minutes`,
		});
		expect(after.body).toEqual({ success: true, message: `Customer ${customerId} unsubscribed` });
		// Settled without its frame: the session is released by the settlement itself.
		expect(await sessionStatus(sessionId)).toBe("EXPIRED");
		expect(await customerOf(customerId)).toMatchObject({ status: "UNSUBSCRIBED", ...OLD_CARD });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
		]);
		expect((await continueUpdate(sessionId)).body.code).toBe("SESSION_EXPIRED");
		expect((await choose(answer.challengeUrl, "complete")).body).toEqual({ accepted: false });
	});

	test("When the buyer starts another card update while one waits for its challenge, then TRY_AGAIN while that challenge is open; once its session has ended, the new update settles it first (nothing charged) and goes on", async () => {
		// Arrange
		const { customerId } = await updateChallenged();
		const again = async () => {
			const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;
			return (await submitCardUpdate(app, sessionId, { card: CARDS.mastercard })).body;
		};

		// Act
		const during = await again();
		setWallClock(Date.now() + 5 * 60 * 1000 + 1000);
		const after = await again();

		// Assert
		expect(during.code).toBe("TRY_AGAIN");
		expect(after).toMatchObject({ code: "OK", recovered: true });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "DECLINED"],
			["RENEWAL", "APPROVED"],
		]);
		expect(await customerOf(customerId)).toMatchObject({ status: "ACTIVE", attempts: 0, cardType: "mastercard" });
	});

	test("When the customer owes nothing, then the new card is set up for the renewals to come: the issuer may ask for a challenge, and once it is completed the card changes, nothing is charged, and the next renewal goes through", async () => {
		// Arrange
		const { customerId } = (await submitCheckout(app, shop, { productId: shop.products.charge })).body;
		const sessionId = (await cardUpdateSession(app, shop, customerId).expect(200)).text;

		// Act
		const asked = (await submitCardUpdate(app, sessionId, { card: CARDS.challenge, expiry: NEW_EXPIRY })).body;
		const unchanged = await customerOf(customerId);
		await choose(asked.challengeUrl, "complete");
		const updated = await continueUpdate(sessionId);
		await renewalsRun(customerId);

		// Assert
		expect(asked.code).toBe("CHALLENGE");
		expect(unchanged).toMatchObject(OLD_CARD);
		expect(updated.body).toMatchObject({ code: "OK", recovered: false });
		expect(await customerOf(customerId)).toMatchObject({ cardExpiredTime: expect.stringContaining("30") });
		expect((await transactionsOf(customerId)).map(t => [t.type, t.status])).toEqual([
			["SUBSCRIPTION_START", "APPROVED"],
			["RENEWAL", "APPROVED"],
		]);
	});
});

describe("A SCHEDULE product: the card set up at checkout for the charge after the trial", () => {
	/** A SCHEDULE checkout with the challenge card, stopped at its challenge. */
	async function scheduleChallenged() {
		const sessionId = await newSession(app, shop);
		const body = await checkoutBody(app, shop, { productId: shop.products.schedule, sessionId, card: CARDS.challenge });
		const res = await app.http().post("/api/checkout").send(body).expect(200);
		return { sessionId, email: body.email as string, answer: res.body as { code: string; challengeUrl: string } };
	}

	test("When the issuer asks for a challenge and the buyer completes it, then OK with nothing charged, and the charge after the trial goes through without the buyer", async () => {
		// Arrange
		const { sessionId, email, answer } = await scheduleChallenged();
		const [during] = await customersByEmail(email);

		// Act
		await choose(answer.challengeUrl, "complete");
		const done = await continueCheckout(sessionId);
		await renewalsRun(during.id);

		// Assert
		expect(answer.code).toBe("CHALLENGE");
		expect(during.status).toBe("PENDING");
		expect(done.body).toMatchObject({ code: "OK", customerId: during.id });
		expect((await transactionsOf(during.id)).map(t => [t.type, t.status, t.authentication])).toEqual([
			["SUBSCRIPTION_START", "APPROVED", null],
		]);
	});

	test("When the buyer fails it, then AUTHENTICATION_FAILED, the customer is DECLINED, and nothing is recorded or charged", async () => {
		const { sessionId, email, answer } = await scheduleChallenged();

		await choose(answer.challengeUrl, "fail");
		const failed = await continueCheckout(sessionId);

		expect(failed.body).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.any(String) });
		const [customer] = await customersByEmail(email);
		expect(customer.status).toBe("DECLINED");
		expect(await transactionsOf(customer.id)).toEqual([]);
	});
});

describe("The network's reference of the first payment", () => {
	test("When a 3-D Secure card's renewal refers to its first payment, then the issuer approves it; without the reference (a customer from before it was kept) it is refused authentication_required", async () => {
		// Arrange: two customers of the frictionless card; the second one's reference is gone, as for customers from before.
		const [kept, lost] = await Promise.all(
			[1, 2].map(
				async () => (await submitCheckout(app, shop, { productId: shop.products.charge, card: CARDS.frictionless })).body.customerId,
			),
		);
		await withBillingDb(db => db.collection("customers").updateOne({ _id: lost }, { $set: { networkTransactionId: null } }));

		// Act
		await renewalsRun(kept, lost);

		// Assert
		const renewalOf = async (customerId: number) => (await transactionsOf(customerId)).find(t => t.type === "RENEWAL");
		expect(await renewalOf(kept)).toMatchObject({ status: "APPROVED" });
		expect(await renewalOf(lost)).toMatchObject({
			status: "DECLINED",
			declineReason: "authentication_required",
			declineCategory: "AUTHENTICATION",
		});
	});
});
