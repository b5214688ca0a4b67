// Adyen's 3-D Secure answers as the connector reads them. Pure functions, tested as
// such: Adyen's Checkout API document (v71, served by Prism) has no 3-D Secure answer
// for /payments and no refused /payments/details, so which answer is a challenge the
// card frame can show, and what a payment came to after it, are checked against
// Adyen's documented answers (https://docs.adyen.com/online-payments/3d-secure/redirect-3ds2,
// https://docs.adyen.com/online-payments/payment-result-codes,
// https://docs.adyen.com/development-resources/refusal-reasons). adyen-challenges.test.ts
// runs the flow on Prism.

import { returnTokenOf } from "../../../services/payments/connectors/adyen/client";
import { challengeUrlOf, outcomeAfterChallenge, outcomeOfPayment } from "../../../services/payments/connectors/adyen/outcomes";
import { paymentRequest } from "../../../services/payments/connectors/adyen/payments";
import { ADYEN_RETURN_TOKEN_PATTERN } from "../../../shared/contracts/payments";
import { adyenOperation, PURE_APIS } from "../../factories/adyen-app";

const ISSUER_PAGE = "https://checkoutshopper-test.adyen.com/checkoutshopper/threeDS/redirect?MD=M2RzZXJ2ZXI";

/** A card payment's answer when the issuer wants the buyer (Adyen's redirect 3-D Secure page). */
const redirect = (method: string, url = ISSUER_PAGE) => ({
	resultCode: "RedirectShopper",
	pspReference: "993617895204576J",
	action: { type: "redirect", method, url, paymentMethodType: "scheme" },
});

describe("Which answer of Adyen is a challenge the card frame shows", () => {
	test("When Adyen answers RedirectShopper with a GET redirect to its https page, then that page is the challenge", () => {
		// Act
		const url = challengeUrlOf(redirect("GET"));

		// Assert
		expect(url).toBe(ISSUER_PAGE);
	});

	test.each([
		["a POST redirect", redirect("POST")],
		["a GET redirect to a page that is not https", redirect("GET", "http://checkoutshopper-test.adyen.com/threeDS")],
		["a GET redirect to no page", { ...redirect("GET"), action: { type: "redirect", method: "GET" } }],
		["IdentifyShopper (native 3-D Secure)", { resultCode: "IdentifyShopper", action: { type: "threeDS2", subtype: "fingerprint" } }],
		["ChallengeShopper (native 3-D Secure)", { resultCode: "ChallengeShopper", action: { type: "threeDS2", subtype: "challenge" } }],
		["PresentToShopper", { resultCode: "PresentToShopper", action: { type: "voucher" } }],
		["RedirectShopper without an action", { resultCode: "RedirectShopper" }],
	])("When Adyen answers %s, then no challenge is shown and the payment is declined authentication_required", (_, answer) => {
		// Act
		const url = challengeUrlOf(answer);
		const outcome = outcomeOfPayment(answer);

		// Assert
		expect(url).toBeNull();
		expect(outcome).toMatchObject({ status: "DECLINED", reason: "authentication_required", hardDecline: false });
	});

	test("When the buyer pays, then the request asks for no native 3-D Secure and names the payment's return route", () => {
		// Arrange
		const apis = PURE_APIS;
		const op = adyenOperation("Qm9vbTQyLXRoZS1hdHRlbXB0:charge", "4212345678901237");
		const returnUrl = `https://pay.example.com/api/processors/adyen/returns/${returnTokenOf(3, op.idempotencyKey)}`;

		// Act
		const request = paymentRequest(apis, op, { initiator: "customer", hold: false, challenge: true }, null, returnUrl);

		// Assert
		expect(request.returnUrl).toBe(returnUrl);
		expect(JSON.stringify(request)).not.toMatch(/nativeThreeDS|threeDSRequestData|channel/);
	});
});

describe("What a payment came to after its challenge", () => {
	test("When Adyen answers Authorised, then it is approved under its pspReference, the buyer CHALLENGED", () => {
		// Act
		const outcome = outcomeAfterChallenge({ resultCode: "Authorised", pspReference: "V4HZ4RBFJGXXGN82" });

		// Assert
		expect(outcome).toMatchObject({
			status: "APPROVED",
			reference: "V4HZ4RBFJGXXGN82",
			authentication: { version: null, outcome: "CHALLENGED", eci: null },
		});
	});

	test("When Adyen refuses it 11 (3D Not Authenticated), by code or by its text alone (a notification's), then authentication_failed, the buyer FAILED", () => {
		// Act
		const outcomes = [
			outcomeAfterChallenge({ resultCode: "Refused", pspReference: "P", refusalReasonCode: "11", refusalReason: "3D Not Authenticated" }),
			outcomeAfterChallenge({ resultCode: "Refused", pspReference: "P", refusalReason: "3D Not Authenticated" }),
		];

		// Assert
		for (const outcome of outcomes)
			expect(outcome).toMatchObject({
				status: "DECLINED",
				reason: "authentication_failed",
				hardDecline: false,
				authentication: { outcome: "FAILED" },
			});
	});

	test("When Adyen refuses it for another reason, then the refusal table decides, with no authentication record", () => {
		// Act
		const outcomes = [
			outcomeAfterChallenge({ resultCode: "Refused", pspReference: "P", refusalReasonCode: "12", refusalReason: "Not enough balance" }),
			outcomeAfterChallenge({ resultCode: "Refused", pspReference: "P", refusalReasonCode: "6", refusalReason: "Expired Card" }),
			outcomeAfterChallenge({
				resultCode: "Refused",
				pspReference: "P",
				refusalReasonCode: "42",
				refusalReason: "3DS Authentication Error",
			}),
		];

		// Assert
		expect(outcomes.map(o => [o.status, o.reason, o.hardDecline, o.authentication])).toEqual([
			["DECLINED", "insufficient_funds", false, null],
			["DECLINED", "expired_card", true, null],
			["DECLINED", "authentication_failed", false, null],
		]);
	});

	test("When Adyen's answer does not decide it (Pending, Received), then the outcome is unknown: settled by the notification, never paid again", () => {
		// Act
		const outcomes = [
			outcomeAfterChallenge({ resultCode: "Pending", pspReference: "P" }),
			outcomeAfterChallenge({ resultCode: "Received" }),
		];

		// Assert
		expect(outcomes.map(o => [o.status, o.reason, "authentication" in o])).toEqual([
			["ERROR", "outcome_unknown", false],
			["ERROR", "outcome_unknown", false],
		]);
	});
});

describe("A payment's return token", () => {
	test("When a token is made, then it is 43 base64url characters, the same for the same MID and key, and another for another MID or key", () => {
		// Act
		const token = returnTokenOf(3, "attempt:charge");

		// Assert
		expect(token).toMatch(new RegExp(ADYEN_RETURN_TOKEN_PATTERN));
		expect(returnTokenOf(3, "attempt:charge")).toBe(token);
		expect(new Set([token, returnTokenOf(4, "attempt:charge"), returnTokenOf(3, "attempt:setup")]).size).toBe(3);
	});
});
