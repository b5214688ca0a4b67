// Adyen's answers as billing reads them. Pure functions, tested as such: Prism serves
// only the examples of Adyen's document, and none of them is refused, timed out or
// asks for a renewal's authentication, so the refusal table is checked against Adyen's
// documented list (https://docs.adyen.com/development-resources/refusal-reasons) and
// billing's categories, and the result codes against
// https://docs.adyen.com/online-payments/payment-result-codes.
import { HttpClientException } from "@adyen/api-library";
import { AdyenUnreachable } from "../../../services/payments/connectors/adyen/client";
import { outcomeOfError, outcomeOfPayment } from "../../../services/payments/connectors/adyen/outcomes";
import { ADYEN_REFUSALS, outcomeOfRefusal } from "../../../services/payments/connectors/adyen/refusals";
import { DeclineCategory } from "../../../shared/contracts/billing";
import { declineCategory } from "../../../shared/decline-reasons";

const { Authentication, Hard, MerchantAccount, Soft } = DeclineCategory;

/** Every refusal reason Adyen documents: its code and text, our reason, and billing's category. */
const DOCUMENTED: [code: string, text: string, reason: string, category: DeclineCategory][] = [
	["2", "Refused", "card_declined", Soft],
	["3", "Referral", "call_issuer", Soft],
	["4", "Acquirer Error", "processing_error", Soft],
	["5", "Blocked Card", "restricted_card", Hard],
	["6", "Expired Card", "expired_card", Hard],
	["7", "Invalid Amount", "invalid_amount", Soft],
	["8", "Invalid Card Number", "unknown_card", Hard],
	["9", "Issuer Unavailable", "issuer_not_available", Soft],
	["10", "Not supported", "transaction_not_permitted", MerchantAccount],
	["11", "3D Not Authenticated", "authentication_failed", Soft],
	["12", "Not enough balance", "insufficient_funds", Soft],
	["14", "Acquirer Fraud", "fraudulent", Hard],
	["15", "Cancelled", "cancelled", Soft],
	["16", "Shopper Cancelled", "cancelled", Soft],
	["17", "Invalid Pin", "invalid_pin", Hard],
	["18", "Pin tries exceeded", "pin_try_exceeded", Hard],
	["19", "Pin validation not possible", "offline_pin_required", Hard],
	["20", "FRAUD", "fraudulent", Hard],
	["21", "Not Submitted", "processing_error", Soft],
	["22", "FRAUD-CANCELLED", "fraudulent", Hard],
	["23", "Transaction Not Permitted", "transaction_not_permitted", MerchantAccount],
	["24", "CVC Declined", "card_verification_failed", Hard],
	["25", "Restricted Card", "restricted_card", Hard],
	["26", "Revocation Of Auth", "revocation_of_authorization", Hard],
	["27", "Declined Non Generic", "card_declined", Soft],
	["28", "Withdrawal amount exceeded", "card_velocity_exceeded", Soft],
	["29", "Withdrawal count exceeded", "withdrawal_count_limit_exceeded", Soft],
	["31", "Issuer Suspected Fraud", "fraudulent", Hard],
	["32", "AVS Declined", "card_verification_failed", Hard],
	["33", "Card requires online pin", "online_or_offline_pin_required", Hard],
	["34", "No checking account available on Card", "invalid_account", Hard],
	["35", "No savings account available on Card", "invalid_account", Hard],
	["36", "Mobile pin required", "online_or_offline_pin_required", Hard],
	["37", "Contactless fallback", "online_or_offline_pin_required", Hard],
	["38", "Authentication required", "authentication_required", Authentication],
	["39", "RReq not received from DS", "authentication_failed", Soft],
	["40", "Current AID is in Penalty Box", "processing_error", Soft],
	["41", "CVM Required Restart Payment", "processing_error", Soft],
	["42", "3DS Authentication Error", "authentication_failed", Soft],
	["43", "Online PIN required", "online_or_offline_pin_required", Hard],
	["44", "Try another interface", "processing_error", Soft],
	["45", "Chip downgrade mode", "processing_error", Soft],
	["46", "Transaction blocked by Adyen to prevent excessive retry fees", "do_not_try_again", Hard],
];

function categoryOf(outcome: { status: "APPROVED" | "DECLINED" | "ERROR"; reason: string | null; hardDecline: boolean }) {
	return declineCategory(outcome);
}

const refused = (refusalReasonCode: string, refusalReason: string) =>
	outcomeOfPayment({ resultCode: "Refused", pspReference: "993617895204576J", refusalReasonCode, refusalReason });

describe("Adyen's refusals", () => {
	test.each(DOCUMENTED)(
		"When Adyen refuses with %s (%s), then the reason is %s and billing calls it %s",
		(code, text, reason, category) => {
			// Act
			const byCode = refused(code, text);
			const byText = outcomeOfRefusal(undefined, text);

			// Assert
			expect(byCode).toMatchObject({ status: "DECLINED", reference: "993617895204576J", reason });
			expect(categoryOf(byCode)).toBe(category);
			expect(byText).toEqual({ reason, hardDecline: byCode.hardDecline });
		},
	);

	test("When the table is read, then it holds exactly the documented codes, and its flag agrees with billing's category for each", () => {
		// Act
		const codes = Object.keys(ADYEN_REFUSALS).sort();

		// Assert
		expect(codes).toEqual(DOCUMENTED.map(([code]) => code).sort());
		for (const [code, refusal] of Object.entries(ADYEN_REFUSALS)) {
			const category = categoryOf({ status: "DECLINED", reason: refusal.reason, hardDecline: false });
			if (category === Hard) expect([code, refusal.hard]).toEqual([code, true]);
			if (category === MerchantAccount) expect([code, refusal.hard]).toEqual([code, false]);
		}
	});

	test("When a refusal's code and text are unknown or missing, then it is a soft card_declined", () => {
		// Act
		const outcomes = [
			outcomeOfRefusal("99", "Something new"),
			outcomeOfRefusal(undefined, undefined),
			outcomeOfRefusal("constructor", null),
		];

		// Assert
		expect(outcomes).toEqual(Array(3).fill({ reason: "card_declined", hardDecline: false }));
	});
});

describe("Adyen's result codes", () => {
	test("When a payment is Authorised, then it is approved under its pspReference with the network's transaction id", () => {
		// Act
		const outcome = outcomeOfPayment({
			resultCode: "Authorised",
			pspReference: "PSP1",
			additionalData: { networkTxReference: "MCC123456789" },
		});

		// Assert
		expect(outcome).toEqual({
			status: "APPROVED",
			reference: "PSP1",
			reason: null,
			hardDecline: false,
			networkTransactionId: "MCC123456789",
		});
	});

	test("When Adyen answers Error or Cancelled, then it is a soft decline, an Error without a known reason a processing_error", () => {
		// Act
		const outcomes = [
			outcomeOfPayment({ resultCode: "Error", pspReference: "P" }),
			outcomeOfPayment({ resultCode: "Error", pspReference: "P", refusalReasonCode: "9", refusalReason: "Issuer Unavailable" }),
			outcomeOfPayment({ resultCode: "Cancelled", pspReference: "P" }),
		];

		// Assert
		expect(outcomes.map(o => [o.status, o.reason, o.hardDecline])).toEqual([
			["DECLINED", "processing_error", false],
			["DECLINED", "issuer_not_available", false],
			["DECLINED", "cancelled", false],
		]);
	});

	test.each(["IdentifyShopper", "ChallengeShopper", "RedirectShopper", "PresentToShopper"])(
		"When Adyen answers %s and no challenge is shown for it, then the payment is declined authentication_required (adyen-challenge-outcomes.test.ts: which is shown)",
		resultCode => {
			// Act
			const outcome = outcomeOfPayment({ resultCode, pspReference: "P" });

			// Assert
			expect(categoryOf(outcome)).toBe(Authentication);
		},
	);

	test.each(["Pending", "Received", "PartiallyAuthorised", "AuthenticationFinished", undefined])(
		"When Adyen answers %s, then the outcome is unknown and keeps the pspReference: settled later, never paid again",
		resultCode => {
			// Act
			const outcome = outcomeOfPayment({ resultCode, pspReference: "P" });

			// Assert
			expect(outcome).toEqual({ status: "ERROR", reference: "P", reason: "outcome_unknown", hardDecline: false });
		},
	);
});

describe("Adyen's failed requests", () => {
	const apiError = (statusCode: number, errorCode?: string) => new HttpClientException({ message: "x", statusCode, errorCode });

	test("When the API key is refused (401, 403), then the MID refused it, except in a lookup, which could not tell", () => {
		// Act
		const paying = [outcomeOfError(apiError(401), null), outcomeOfError(apiError(403), null)];
		const lookingUp = outcomeOfError(apiError(401), "P", true);

		// Assert
		expect(paying.map(categoryOf)).toEqual([MerchantAccount, MerchantAccount]);
		expect(lookingUp).toMatchObject({ status: "ERROR", reason: "merchant_account_refused" });
	});

	test("When Adyen's validation names the card, then it is a hard decline; any other 4xx is our request refused, nothing moved", () => {
		// Act
		const cardNumber = outcomeOfError(apiError(422, "101"), null);
		const returnUrl = outcomeOfError(apiError(422, "14_030"), null);

		// Assert
		expect(cardNumber).toMatchObject({ status: "DECLINED", reason: "unknown_card", hardDecline: true });
		expect(returnUrl).toMatchObject({ status: "ERROR", reason: "invalid_request_14_030", neverSent: true });
	});

	test("When Adyen fails (5xx, 429) or cannot be reached, then money may have moved, unless the connection was refused", () => {
		// Act
		const outcomes = [
			outcomeOfError(apiError(500), null),
			outcomeOfError(apiError(429), null),
			outcomeOfError(new AdyenUnreachable("timed out", false), null),
			outcomeOfError(new AdyenUnreachable("refused", true), null),
		];

		// Assert
		expect(outcomes.map(o => [o.status, o.reason, o.neverSent ?? false])).toEqual([
			["ERROR", "processor_unavailable", false],
			["ERROR", "processor_unavailable", false],
			["ERROR", "processor_unavailable", false],
			["ERROR", "processor_unavailable", true],
		]);
	});

	test("When something other than Adyen's answer fails (our own store), then it is thrown on", () => {
		// Act
		const act = () => outcomeOfError(new Error("database down"), null);

		// Assert
		expect(act).toThrow("database down");
	});
});
