// 3-D Secure on an Adyen MID (docs/authentication.md): the checkout over HTTP, the
// buyer's return through the gateway's real route, and the payments service's
// actions, with the connector talking to Prism serving Adyen's Checkout API document
// (validating every request) through the recorder (test/factories/prism-recorder.ts).
// v71's document has no 3-D Secure answer for /payments: its one RedirectShopper
// example, iDEAL's GET redirect to Adyen's page (without a pspReference), stands in
// for the issuer's page here, asked for with `Prefer: example=ideal`; which card
// answers are a challenge is tested as pure functions (adyen-challenge-outcomes.test.ts).
// /payments/details answers the document's example after a redirect (Authorised),
// /cancels its "received".
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { hmacValidator } from "@adyen/api-library";
import { type PrismServer, prismViolations } from "../../../dev/adyen-servers";
import type { PaymentsActions } from "../../../shared/contracts/payments";
import { projectRoot } from "../../../shared/paths";
import { ADYEN_KEYS, type AdyenApp, startAdyenApp } from "../../factories/adyen-app";
import { CARDS, checkoutBody, createShop, newSession, type Shop } from "../../factories/checkout";
import { admin } from "../../factories/merchant";
import type { PrismExchange, PrismRecorder } from "../../factories/prism-recorder";
import type { TestApp } from "../../setup/app";

jest.setTimeout(90_000);

const BUYER_BASE = "https://pay.example.com";
const MERCHANT_ACCOUNT = "ShopComChallenges";
/** The redirectResult of the document's /payments/details example, as Adyen appends it to the return URL. */
const REDIRECT_RESULT = "X6XtfGC3!Y...";
const FRAME_RETURN = "/checkout/challenge-return.html";
/** The documented AUTHORISATION notification, as the library ships it. */
const EXAMPLE = JSON.parse(readFileSync(path.join(projectRoot, "node_modules/@adyen/api-library/tools/hmac/payload.json"), "utf8"))
	.notificationItems[0].NotificationRequestItem as Record<string, unknown> & { additionalData: Record<string, string> };

describe("3-D Secure on an Adyen MID", () => {
	let started: AdyenApp;
	let prism: PrismServer;
	let recorder: PrismRecorder;
	let app: TestApp;
	let shop: Shop;

	beforeAll(async () => {
		started = await startAdyenApp({ PUBLIC_BASE_URL: BUYER_BASE });
		({ prism, recorder, app } = started);
		shop = await createShop(app, { processor: { type: "adyen", ...ADYEN_KEYS, merchantAccount: MERCHANT_ACCOUNT } });
	}, 120_000);
	afterAll(() => started?.stop());
	afterEach(() => {
		// Every request our connector sent was valid against Adyen's document.
		expect(prismViolations(prism.log())).toEqual([]);
		recorder.prefer = () => undefined;
	});

	const since = (count: number, path: string): PrismExchange[] => recorder.exchanges.slice(count).filter(e => e.path === path);
	const call = <A extends keyof PaymentsActions>(action: A, params: PaymentsActions[A]["params"]) =>
		app.broker.call(action, params) as Promise<PaymentsActions[A]["result"]>;
	const continueCheckout = async (sessionId: string) =>
		(await app.http().post("/api/checkout/continue").send({ sessionId, landingDomain: "shop.example.com" }).expect(200)).body;
	const transactionsOf = async (customerId: number) =>
		(await admin(app).get(`/accounts/${shop.accountId}/customers/${customerId}/transactions`).expect(200)).body;
	/** The buyer's browser back from Adyen's page, at the payment's return path. */
	const returnTo = (returnPath: string, query = `redirectResult=${encodeURIComponent(REDIRECT_RESULT)}`) =>
		app.http().get(query ? `${returnPath}?${query}` : returnPath);
	/** Adyen asks the buyer to go to its page for every payment but the card's verification. */
	const askTheBuyer = () => {
		recorder.prefer = (p, body) => (p === "/payments" && !String(body.reference).endsWith(":verify") ? "example=ideal" : undefined);
	};

	/** A checkout whose first payment Adyen answered with its page for the buyer: the frame's answer and the /payments request. */
	async function challenged(productId = shop.products.charge) {
		askTheBuyer();
		const before = recorder.exchanges.length;
		const sessionId = await newSession(app, shop);
		const answer = (
			await app
				.http()
				.post("/api/checkout")
				.send(await checkoutBody(app, shop, { productId, sessionId }))
				.expect(200)
		).body;
		recorder.prefer = () => undefined;
		const payment = since(before, "/payments").at(-1)!;
		return { sessionId, answer, payment, returnPath: new URL(String(payment.body.returnUrl)).pathname };
	}

	/** A first payment made through the payments service's actions, waiting for the buyer until `challengeMs` from now. */
	async function awaitingBuyer(challengeMs: number) {
		const midId = shop.mids[0];
		const attemptId = randomBytes(12).toString("base64url");
		const saved = await call("payments.saveCard", { midId, attemptId, card: { pan: CARDS.visa, expiry: "1230", cvc: "123" } });
		const cardToken = (saved as { cardToken: string }).cardToken;
		askTheBuyer();
		const before = recorder.exchanges.length;
		const key = `${attemptId}:charge`;
		const until = Date.now() + challengeMs;
		const params = { idempotencyKey: key, midId, cardToken, amount: 999, currency: "EUR" };
		const asked = await call("payments.firstPayment", { ...params, kind: "charge", challengeUntil: new Date(until).toISOString() });
		recorder.prefer = () => undefined;
		const returnUrl = String(since(before, "/payments")[0].body.returnUrl);
		return { key, asked, until, cardToken, returnPath: new URL(returnUrl).pathname };
	}
	const pastThe = (until: number) => new Promise(resolve => setTimeout(resolve, Math.max(0, until - Date.now()) + 250));

	/** Adyen's AUTHORISATION notification of a payment, signed with the MID's HMAC key, sent to the MID's endpoint. */
	function notifyAuthorisation(merchantReference: string, pspReference: string, success: boolean, reason = "") {
		const item = {
			...EXAMPLE,
			eventCode: "AUTHORISATION",
			merchantAccountCode: MERCHANT_ACCOUNT,
			merchantReference,
			pspReference,
			eventDate: new Date().toISOString(),
			success: String(success),
			reason,
			amount: { currency: "EUR", value: 999 },
			additionalData: { ...EXAMPLE.additionalData },
		} as Record<string, unknown> & { additionalData: Record<string, string> };
		delete item.additionalData.hmacSignature;
		item.additionalData.hmacSignature = new hmacValidator().calculateHmac(item as never, ADYEN_KEYS.hmacKey);
		const body = { live: "false", notificationItems: [{ NotificationRequestItem: item }] };
		return app
			.http()
			.post(`/api/processors/adyen/${shop.mids[0]}/notifications`)
			.set("Content-Type", "application/json")
			.send(JSON.stringify(body))
			.expect(200);
	}

	test("When Adyen sends the buyer of a CHARGE product to its page, then the frame shows it; the page's return is kept and sent into the frame; the continue pays it by /payments/details, CHALLENGED", async () => {
		// Arrange
		const { sessionId, answer, payment, returnPath } = await challenged();
		const before = recorder.exchanges.length;
		const waiting = await continueCheckout(sessionId);

		// Act
		const back = await returnTo(returnPath);
		const done = await continueCheckout(sessionId);
		const again = await continueCheckout(sessionId);

		// Assert
		const issuerPage = (payment.answer.action as { url: string }).url;
		expect(answer).toMatchObject({ code: "CHALLENGE", challengeUrl: issuerPage });
		expect(payment.body.returnUrl).toMatch(/^https:\/\/pay\.example\.com\/api\/processors\/adyen\/returns\/[A-Za-z0-9_-]{43}$/);
		expect(payment.body).not.toHaveProperty("authenticationData");
		expect(waiting).toMatchObject({ code: "CHALLENGE", challengeUrl: issuerPage });
		expect([back.status, back.headers.location, back.headers["cache-control"], back.text]).toEqual([303, FRAME_RETURN, "no-store", ""]);
		expect(done).toMatchObject({ code: "OK", customerId: expect.any(Number) });
		expect(again).toMatchObject({ code: "OK", customerId: done.customerId });
		const details = since(before, "/payments/details");
		expect(details.map(e => [e.status, e.body])).toEqual([[200, { details: { redirectResult: REDIRECT_RESULT } }]]);
		expect(details[0].headers["idempotency-key"]).toMatch(/^[0-9a-f]{64}$/);
		expect(details[0].headers["idempotency-key"]).not.toBe(payment.headers["idempotency-key"]);
		expect(await transactionsOf(done.customerId)).toEqual([
			expect.objectContaining({
				type: "SUBSCRIPTION_START",
				status: "APPROVED",
				processorReference: "V4HZ4RBFJGXXGN82",
				authentication: { version: null, outcome: "CHALLENGED", eci: null },
			}),
		]);
	});

	test("When the return is a HEAD, has no redirectResult or a malformed or too long one (over 5,000 characters), or names no challenge, then it is sent into the frame all the same and keeps nothing; the first GET with one is kept, a second never replaces it", async () => {
		// Arrange
		const { sessionId, returnPath } = await challenged();
		const before = recorder.exchanges.length;

		// Act
		const keptNothing = [
			await app.http().head(`${returnPath}?redirectResult=sent-as-a-HEAD`),
			await returnTo(returnPath, ""),
			await returnTo(returnPath, `redirectResult=${encodeURIComponent("has spaces")}`),
			await returnTo(returnPath, "redirectResult=%01control"),
			await returnTo(returnPath, "redirectResult=one&redirectResult=two"),
			await returnTo(returnPath, `redirectResult=${"R".repeat(5001)}`),
			await returnTo(`/api/processors/adyen/returns/${"A".repeat(43)}`),
			await returnTo("/api/processors/adyen/returns/not-a-token"),
		];
		const stillWaiting = await continueCheckout(sessionId);
		const first = await returnTo(returnPath, "redirectResult=the-first");
		const second = await returnTo(returnPath, "redirectResult=the-second");
		const done = await continueCheckout(sessionId);
		const otherMethods = [
			await app.http().post(`${returnPath}?redirectResult=x`),
			await app.http().put(returnPath),
			await app.http().delete(returnPath),
		];

		// Assert
		expect([...keptNothing, first, second].map(res => [res.status, res.headers.location])).toEqual(Array(10).fill([303, FRAME_RETURN]));
		expect(stillWaiting).toMatchObject({ code: "CHALLENGE" });
		expect(done).toMatchObject({ code: "OK" });
		expect(since(before, "/payments/details").map(e => e.body)).toEqual([{ details: { redirectResult: "the-first" } }]);
		expect(otherMethods.map(res => [res.status, res.headers.allow])).toEqual(Array(3).fill([405, "GET, HEAD"]));
	});

	test("When Adyen's AUTHORISATION notification comes before the buyer's return, then the continue is settled by it without /payments/details: authorised is OK and CHALLENGED, refused 3D Not Authenticated is AUTHENTICATION_FAILED", async () => {
		// Arrange
		const paid = await challenged();
		const refused = await challenged();
		const before = recorder.exchanges.length;
		await notifyAuthorisation(String(paid.payment.body.reference), "NOTIFIED00000001", true);
		await notifyAuthorisation(String(refused.payment.body.reference), "NOTIFIED00000002", false, "3D Not Authenticated");

		// Act
		const done = await continueCheckout(paid.sessionId);
		const failed = await continueCheckout(refused.sessionId);

		// Assert
		expect(done).toMatchObject({ code: "OK" });
		expect(failed).toMatchObject({ code: "AUTHENTICATION_FAILED" });
		expect(await transactionsOf(done.customerId)).toEqual([
			expect.objectContaining({
				status: "APPROVED",
				processorReference: "NOTIFIED00000001",
				authentication: expect.objectContaining({ outcome: "CHALLENGED" }),
			}),
		]);
		expect(since(before, "/payments/details")).toEqual([]);
	});

	test("When the buyer never comes back and the challenge's time is over, then a lookup cancels the payment at Adyen by our reference and finds nothing moved: the key is free again", async () => {
		// Arrange
		const { key, asked, until } = await awaitingBuyer(1500);
		await pastThe(until);
		const before = recorder.exchanges.length;

		// Act
		const found = await call("payments.lookup", { idempotencyKey: key });
		const again = await call("payments.lookup", { idempotencyKey: key });

		// Assert
		expect(asked).toMatchObject({ status: "AWAITING_BUYER", challengeUrl: expect.stringMatching(/^https:\/\/test\.adyen\.com\//) });
		expect([found, again]).toEqual([null, null]);
		const cancels = since(before, "/cancels");
		expect(cancels.map(e => [e.status, e.body, e.answer.status])).toEqual([
			[201, { merchantAccount: MERCHANT_ACCOUNT, paymentReference: key }, "received"],
		]);
		expect(cancels[0].headers["idempotency-key"]).toMatch(/^[0-9a-f]{64}$/);
		expect(since(before, "/payments/details")).toEqual([]);
	});

	test("When the buyer came back but the payment is asked after the challenge's time, then it is read with the redirectResult the return kept: approved, CHALLENGED, nothing cancelled", async () => {
		// Arrange
		const { key, until, returnPath } = await awaitingBuyer(1500);
		await returnTo(returnPath).expect(303);
		await pastThe(until);
		const before = recorder.exchanges.length;

		// Act
		const outcome = await call("payments.afterChallenge", { idempotencyKey: key });

		// Assert
		expect(outcome).toMatchObject({
			status: "APPROVED",
			processorReference: "V4HZ4RBFJGXXGN82",
			authentication: { outcome: "CHALLENGED" },
		});
		expect(since(before, "/payments/details").map(e => e.body)).toEqual([{ details: { redirectResult: REDIRECT_RESULT } }]);
		expect(since(before, "/cancels")).toEqual([]);
	});

	test("When Adyen fails the /payments/details request (500), then the outcome is unknown and the buyer still awaited; asked again, the same Idempotency-Key gets the payment approved", async () => {
		// Arrange
		const { key, returnPath } = await awaitingBuyer(60_000);
		await returnTo(returnPath).expect(303);
		const before = recorder.exchanges.length;
		recorder.prefer = p => (p === "/payments/details" ? "code=500" : undefined);

		// Act
		const unknown = await call("payments.afterChallenge", { idempotencyKey: key });
		recorder.prefer = () => undefined;
		const read = await call("payments.afterChallenge", { idempotencyKey: key });

		// Assert
		expect(unknown).toMatchObject({ status: "ERROR", reason: "outcome_unknown" });
		expect(read).toMatchObject({ status: "APPROVED", authentication: { outcome: "CHALLENGED" } });
		const details = since(before, "/payments/details");
		expect(details.map(e => e.status)).toEqual([500, 200]);
		expect(details[1].headers["idempotency-key"]).toBe(details[0].headers["idempotency-key"]);
	});

	test("When Adyen asks for the buyer on a merchant's charge (a renewal) or a card's verification, then it is declined authentication_required and no challenge is kept for its return", async () => {
		// Arrange
		const { cardToken } = await awaitingBuyer(60_000);
		const midId = shop.mids[0];
		recorder.prefer = p => (p === "/payments" ? "example=ideal" : undefined);
		const before = recorder.exchanges.length;

		// Act
		const renewal = await call("payments.charge", {
			idempotencyKey: `renewal:${randomBytes(6).toString("hex")}`,
			midId,
			cardToken,
			amount: 999,
			currency: "EUR",
			initiator: "merchant",
		});
		const verification = await call("payments.saveCard", {
			midId,
			attemptId: randomBytes(12).toString("base64url"),
			card: { pan: CARDS.mastercard, expiry: "1230", cvc: "123" },
		});
		recorder.prefer = () => undefined;
		const tokens = since(before, "/payments").map(e => String(e.body.returnUrl).split("/").at(-1)!);
		const kept = await Promise.all(tokens.map(token => call("payments.adyenReturn", { token, redirectResult: REDIRECT_RESULT })));

		// Assert
		expect(renewal).toMatchObject({ status: "DECLINED", reason: "authentication_required" });
		expect(verification).toMatchObject({ error: "CARD_NOT_VERIFIED" });
		expect(kept).toEqual([{ kept: false }, { kept: false }]);
	});
});
