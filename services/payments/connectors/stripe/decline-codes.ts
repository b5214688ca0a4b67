// What a Stripe decline means to us: the one table from Stripe's decline codes
// (https://docs.stripe.com/declines/codes) and the error codes of its card
// errors to our reason names and whether the decline is hard. Billing decides
// the category from the reason and the flag (shared/decline-reasons.ts):
// HARD stops retries, MERCHANT_ACCOUNT moves to another MID, the rest is SOFT.
// Where we already have a name for the same thing (unknown_card,
// card_verification_failed, transaction_not_permitted) Stripe's code is
// renamed to it, so both processors' declines read alike; elsewhere the reason
// is Stripe's own code.

export interface StripeDecline {
	/** Our reason for the decline. */
	reason: string;
	/** Retrying the card as it is cannot succeed. */
	hard: boolean;
}

const soft = (reason: string): StripeDecline => ({ reason, hard: false });
const hard = (reason: string): StripeDecline => ({ reason, hard: true });
/** Refused by this MID's kind of business (its merchant category, country, acquirer), not by the card everywhere: MERCHANT_ACCOUNT, so another MID is tried. */
const notPermittedHere: StripeDecline = soft("transaction_not_permitted");

/** Stripe's code → our reason and hardness. A code missing here is soft, under Stripe's name. */
export const STRIPE_DECLINES: Readonly<Record<string, StripeDecline>> = Object.freeze({
	// The issuer may approve a later attempt: a limit resets, the issuer answers again, the buyer authenticates.
	approve_with_id: soft("approve_with_id"),
	authentication_required: soft("authentication_required"),
	call_issuer: soft("call_issuer"),
	card_declined: soft("card_declined"),
	card_decline_rate_limit_exceeded: soft("card_decline_rate_limit_exceeded"),
	card_velocity_exceeded: soft("card_velocity_exceeded"),
	do_not_honor: soft("do_not_honor"),
	duplicate_transaction: soft("duplicate_transaction"),
	generic_decline: soft("generic_decline"),
	insufficient_funds: soft("insufficient_funds"),
	invalid_amount: soft("invalid_amount"),
	issuer_not_available: soft("issuer_not_available"),
	no_action_taken: soft("no_action_taken"),
	payment_intent_authentication_failure: soft("payment_intent_authentication_failure"),
	processing_error: soft("processing_error"),
	reenter_transaction: soft("reenter_transaction"),
	security_violation: soft("security_violation"),
	setup_intent_authentication_failure: soft("setup_intent_authentication_failure"),
	try_again_later: soft("try_again_later"),
	withdrawal_count_limit_exceeded: soft("withdrawal_count_limit_exceeded"),

	// The issuer allows the card, but not this kind of payment: another MID may be allowed.
	card_not_supported: notPermittedHere,
	not_permitted: notPermittedHere,
	service_not_allowed: notPermittedHere,
	transaction_not_allowed: notPermittedHere,

	// The card as we hold it is wrong or gone.
	expired_card: hard("expired_card"),
	incorrect_number: hard("unknown_card"),
	invalid_number: hard("unknown_card"),
	incorrect_cvc: hard("card_verification_failed"),
	invalid_cvc: hard("card_verification_failed"),
	incorrect_zip: hard("card_verification_failed"),
	invalid_expiry_month: hard("invalid_expiry_month"),
	invalid_expiry_year: hard("invalid_expiry_year"),
	invalid_account: hard("invalid_account"),
	new_account_information_available: hard("new_account_information_available"),
	lost_card: hard("lost_card"),
	stolen_card: hard("stolen_card"),
	pickup_card: hard("pickup_card"),
	restricted_card: hard("restricted_card"),
	currency_not_supported: hard("currency_not_supported"),
	testmode_decline: hard("testmode_decline"),
	// A PIN is for card readers: a card that wants one is never charged without the buyer's card in hand.
	incorrect_pin: hard("incorrect_pin"),
	invalid_pin: hard("invalid_pin"),
	offline_pin_required: hard("offline_pin_required"),
	online_or_offline_pin_required: hard("online_or_offline_pin_required"),
	pin_try_exceeded: hard("pin_try_exceeded"),

	// The issuer or the buyer said never again (the networks forbid retrying these); fraud too.
	do_not_try_again: hard("do_not_try_again"),
	fraudulent: hard("fraudulent"),
	revocation_of_all_authorizations: hard("revocation_of_all_authorizations"),
	revocation_of_authorization: hard("revocation_of_authorization"),
	stop_payment_order: hard("stop_payment_order"),
	// Our own block list on this MID's Stripe account: a block we set is not routed around through another MID.
	merchant_blacklist: hard("merchant_blacklist"),
});

/** Our reason and hardness for Stripe's `decline_code` (else its `code`); no code at all is a plain card_declined. */
export function outcomeOfDecline(code: string | null | undefined): { reason: string; hardDecline: boolean } {
	if (!code) code = "card_declined";
	// hasOwn: a code such as "constructor" is not a decline of ours.
	if (!Object.hasOwn(STRIPE_DECLINES, code)) return { reason: code, hardDecline: false };
	const known = STRIPE_DECLINES[code];
	return { reason: known.reason, hardDecline: known.hard };
}
