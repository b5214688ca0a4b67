// What the buyer reads for each answer of POST /api/checkout, and whether
// trying again in this frame can help. `final` answers close the form: the
// session is spent or the checkout itself is misconfigured, so only the
// merchant's page (a new session) can go on. The others leave the form open
// to correct the details or use another card.
const OUTCOMES = {
	OK: { text: "Payment complete. Thank you!", final: true, success: true },
	CREDITCARD_VALIDATION: { text: "Your card could not be verified. Check the card details or use another card." },
	BIN_BLACKLIST: { text: "This card cannot be used here. Please use another card." },
	ALREADY_SUBSCRIBED: { text: "You already have an active subscription to this product with this email and card." },
	NO_MERCHANT_ACCOUNT: { text: "This type of card is not accepted here. Please use another card." },
	PAYMENT_DECLINED: { text: "Your payment was declined. Please use another card or contact your bank." },
	PROCESSING_ERROR: { text: "We could not process your payment right now. Please try again in a moment." },
	AUTHENTICATION_FAILED: { text: "Your bank could not confirm this payment, so nothing was charged. Please try again or use another card." },
	INVALID_REQUEST: { text: "Some details were not accepted. Please check them and try again." },
	SESSION_NOT_FOUND: { text: "This checkout is not valid. Please reload the page and try again.", final: true },
	SESSION_EXPIRED: { text: "This checkout has expired. Please reload the page to start again.", final: true },
	SESSION_USED: { text: "This checkout has already been used. Please reload the page to start again.", final: true },
	DOMAIN_MISMATCH: { text: "This checkout is not set up for this website. Please contact the merchant.", final: true },
	PRODUCT_NOT_FOUND: { text: "This product is not available. Please contact the merchant.", final: true },
	PRODUCT_INACTIVE: { text: "This product is no longer available.", final: true },
	// A promotion code the service refused (docs/coupons.md): correct it, or clear it to pay without.
	COUPON_NOT_FOUND: { text: "This promotion code does not exist. Check it, or clear it to pay without." },
	COUPON_INACTIVE: { text: "This promotion code is no longer valid. Clear it to pay without." },
	COUPON_EXPIRED: { text: "This promotion code has expired. Clear it to pay without." },
	COUPON_USED_UP: { text: "This promotion code has been used up. Clear it to pay without." },
	COUPON_NOT_FOR_PRODUCT: { text: "This promotion code does not apply to this product. Clear it to pay without." },
	COUPON_WRONG_CURRENCY: { text: "This promotion code does not apply to this price. Clear it to pay without." },
	// A card update's own (POST /api/card-update).
	CUSTOMER_NOT_UPDATABLE: { text: "This subscription has ended; its card cannot be updated.", final: true },
	TRY_AGAIN: { text: "A payment of this subscription is in progress. Please try again in a minute." },
	// Not codes of the service: the frame's own, for when no business answer arrived.
	NETWORK_ERROR: { text: "We could not reach the payment service. Check your connection and try again." },
	SERVICE_UNAVAILABLE: { text: "The payment service is not available right now. Please try again in a moment." },
};

/** A card update's success reads differently from a payment's. */
const UPDATED = { text: "Your card is updated. Thank you!", final: true, success: true };

/** { text, final, success } for a code; an unknown code shows the service's message when it sent one. */
export function outcomeFor(code, serviceMessage, update = false) {
	const known = update && code === "OK" ? UPDATED : Object.hasOwn(OUTCOMES, code) ? OUTCOMES[code] : null;
	return {
		text: known?.text ?? (serviceMessage || "Something went wrong. Please try again."),
		final: known?.final === true,
		success: known?.success === true,
	};
}
