// Stripe's decline codes as billing reads them. A pure function, tested as one: neither test
// server produces these codes (localstripe declines only with card_declined and no
// decline_code; stripe-mock never declines), so the table is checked against Stripe's
// documented list (https://docs.stripe.com/declines/codes) and billing's categories.

import { outcomeOfDecline, STRIPE_DECLINES } from "../../../services/payments/connectors/stripe/decline-codes";
import { DeclineCategory } from "../../../shared/contracts/billing";
import { declineCategory } from "../../../shared/decline-reasons";

const { Authentication, Hard, MerchantAccount, Soft } = DeclineCategory;

/** Every decline code Stripe documents, with our reason for it and billing's category. */
const DOCUMENTED: [code: string, reason: string, category: DeclineCategory][] = [
	["authentication_required", "authentication_required", Authentication],
	["approve_with_id", "approve_with_id", Soft],
	["call_issuer", "call_issuer", Soft],
	["card_not_supported", "transaction_not_permitted", MerchantAccount],
	["card_velocity_exceeded", "card_velocity_exceeded", Soft],
	["currency_not_supported", "currency_not_supported", Hard],
	["do_not_honor", "do_not_honor", Soft],
	["do_not_try_again", "do_not_try_again", Hard],
	["duplicate_transaction", "duplicate_transaction", Soft],
	["expired_card", "expired_card", Hard],
	["fraudulent", "fraudulent", Hard],
	["generic_decline", "generic_decline", Soft],
	["incorrect_number", "unknown_card", Hard],
	["incorrect_cvc", "card_verification_failed", Hard],
	["incorrect_pin", "incorrect_pin", Hard],
	["incorrect_zip", "card_verification_failed", Hard],
	["insufficient_funds", "insufficient_funds", Soft],
	["invalid_account", "invalid_account", Hard],
	["invalid_amount", "invalid_amount", Soft],
	["invalid_cvc", "card_verification_failed", Hard],
	["invalid_expiry_month", "invalid_expiry_month", Hard],
	["invalid_expiry_year", "invalid_expiry_year", Hard],
	["invalid_number", "unknown_card", Hard],
	["invalid_pin", "invalid_pin", Hard],
	["issuer_not_available", "issuer_not_available", Soft],
	["lost_card", "lost_card", Hard],
	["merchant_blacklist", "merchant_blacklist", Hard],
	["new_account_information_available", "new_account_information_available", Hard],
	["no_action_taken", "no_action_taken", Soft],
	["not_permitted", "transaction_not_permitted", MerchantAccount],
	["offline_pin_required", "offline_pin_required", Hard],
	["online_or_offline_pin_required", "online_or_offline_pin_required", Hard],
	["pickup_card", "pickup_card", Hard],
	["pin_try_exceeded", "pin_try_exceeded", Hard],
	["processing_error", "processing_error", Soft],
	["reenter_transaction", "reenter_transaction", Soft],
	["restricted_card", "restricted_card", Hard],
	["revocation_of_all_authorizations", "revocation_of_all_authorizations", Hard],
	["revocation_of_authorization", "revocation_of_authorization", Hard],
	["security_violation", "security_violation", Soft],
	["service_not_allowed", "transaction_not_permitted", MerchantAccount],
	["stolen_card", "stolen_card", Hard],
	["stop_payment_order", "stop_payment_order", Hard],
	["testmode_decline", "testmode_decline", Hard],
	["transaction_not_allowed", "transaction_not_permitted", MerchantAccount],
	["try_again_later", "try_again_later", Soft],
	["withdrawal_count_limit_exceeded", "withdrawal_count_limit_exceeded", Soft],
];

/** Billing's category of a decline with this reason and hardness. */
function categoryOf(outcome: { reason: string; hardDecline: boolean }): DeclineCategory | null {
	return declineCategory({ status: "DECLINED", ...outcome });
}

describe("outcomeOfDecline", () => {
	test.each(DOCUMENTED)("When Stripe declines with %s, then the reason is %s and billing calls it %s", (code, reason, category) => {
		// Act
		const outcome = outcomeOfDecline(code);

		// Assert
		expect(outcome.reason).toBe(reason);
		expect(categoryOf(outcome)).toBe(category);
	});

	test("When the table is read, then it covers every documented code, and its flag agrees with billing's category for each entry", () => {
		// Act
		const entries = Object.entries(STRIPE_DECLINES);

		// Assert
		expect(Object.keys(STRIPE_DECLINES)).toEqual(expect.arrayContaining(DOCUMENTED.map(([code]) => code)));
		for (const [code, decline] of entries) {
			// A reason billing already calls HARD is flagged hard; a MERCHANT_ACCOUNT one never is (the flag would win).
			const category = categoryOf({ reason: decline.reason, hardDecline: false });
			if (category === Hard) expect([code, decline.hard]).toEqual([code, true]);
			if (category === MerchantAccount) expect([code, decline.hard]).toEqual([code, false]);
		}
	});

	test("When a card error has no decline code and no code, then it is a soft card_declined (localstripe's only decline)", () => {
		// Act
		const outcomes = [outcomeOfDecline(undefined), outcomeOfDecline(null), outcomeOfDecline("card_declined")];

		// Assert
		expect(outcomes).toEqual(Array(3).fill({ reason: "card_declined", hardDecline: false }));
	});

	test("When Stripe sends a code the table does not know, then it is soft under Stripe's name", () => {
		// Act
		const outcomes = [outcomeOfDecline("a_code_stripe_adds_later"), outcomeOfDecline("constructor")];

		// Assert
		expect(outcomes).toEqual([
			{ reason: "a_code_stripe_adds_later", hardDecline: false },
			{ reason: "constructor", hardDecline: false },
		]);
		expect(categoryOf(outcomes[0])).toBe(Soft);
	});

	test("When Stripe's card-error codes that are not decline codes come, then a failed authentication and a rate limit are soft", () => {
		// Act
		const outcomes = [
			"payment_intent_authentication_failure",
			"setup_intent_authentication_failure",
			"card_decline_rate_limit_exceeded",
		].map(outcomeOfDecline);

		// Assert
		expect(outcomes.map(categoryOf)).toEqual([Soft, Soft, Soft]);
	});
});
