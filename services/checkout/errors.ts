// The checkout's errors answered as HTTP errors. A checkout that was read but
// refused answers 200 with a code of the spec instead (checkout-answers.ts).
import type { ErrorTable } from "../../shared/action";
import { ApiErrorType } from "../../shared/errors";

export enum CheckoutError {
	/** Card data that does not decrypt or does not hold a card: the SDK's 400 INVALID_REQUEST with the fields. */
	InvalidCheckout = "INVALID_CHECKOUT",
	InvalidCardUpdate = "INVALID_CARD_UPDATE",
	DemoOff = "DEMO_OFF",
}

/** What the API answers for each error; the invalid requests' fields go in the answer's details. */
export const CHECKOUT_ERRORS: ErrorTable<CheckoutError> = {
	[CheckoutError.InvalidCheckout]: { type: ApiErrorType.InvalidCheckout, message: "Invalid checkout request" },
	[CheckoutError.InvalidCardUpdate]: { type: ApiErrorType.InvalidCheckout, message: "Invalid card update request" },
	[CheckoutError.DemoOff]: { type: ApiErrorType.NotFound, message: "The demo is off (DEMO=0) or has no demo account" },
};
