// The checkout, in the spec's processing order (section 1), after the buyer's
// fields and additionalData are checked (buyer-input.ts):
//   1. session and product checks
//   2. merchant account (MID) selection by card brand
//   3. BIN blacklist, then card validation (local checks and a zero-amount verification)
//   4. duplicate subscription check
//   5. charge, hold or schedule by product type (the session is consumed just before)
//   6. answer {code: OK, customerId}; billing emits the TRANSACTION and CONVERSION events
// Every outcome is a code; nothing here throws for a business reason.
import { randomBytes } from "node:crypto";
import { isFailure } from "../../shared/call";
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import { CheckoutStepError, FirstPaymentOutcome, VerifyCardError } from "../../shared/contracts/billing";
import { SessionCheckoutError } from "../../shared/contracts/sessions";
import { buyerInputProblems } from "./buyer-input";
import { type CardBrand, cardBrand, cardFingerprint, decryptDigits, passesLocalChecks } from "./card-data";
import type { CheckoutDeps } from "./deps";

export enum CheckoutCode {
	Ok = "OK",
	SessionNotFound = "SESSION_NOT_FOUND",
	SessionExpired = "SESSION_EXPIRED",
	SessionUsed = "SESSION_USED",
	DomainMismatch = "DOMAIN_MISMATCH",
	ProductNotFound = "PRODUCT_NOT_FOUND",
	ProductInactive = "PRODUCT_INACTIVE",
	NoMerchantAccount = "NO_MERCHANT_ACCOUNT",
	BinBlacklist = "BIN_BLACKLIST",
	CreditCardValidation = "CREDITCARD_VALIDATION",
	AlreadySubscribed = "ALREADY_SUBSCRIBED",
	PaymentDeclined = "PAYMENT_DECLINED",
	ProcessingError = "PROCESSING_ERROR",
}

export const CHECKOUT_MESSAGES: Record<CheckoutCode, string> = {
	[CheckoutCode.Ok]: "Payment accepted",
	[CheckoutCode.SessionNotFound]: "This checkout session does not exist",
	[CheckoutCode.SessionExpired]: "This checkout session has expired; reload the page to start again",
	[CheckoutCode.SessionUsed]: "This checkout session has already been used",
	[CheckoutCode.DomainMismatch]: "This checkout session belongs to another site",
	[CheckoutCode.ProductNotFound]: "This product does not exist",
	[CheckoutCode.ProductInactive]: "This product is not available",
	[CheckoutCode.NoMerchantAccount]: "This card type is not accepted",
	[CheckoutCode.BinBlacklist]: "This card cannot be used here",
	[CheckoutCode.CreditCardValidation]: "The card could not be verified; check its details or use another card",
	[CheckoutCode.AlreadySubscribed]: "This email and card already have this subscription",
	[CheckoutCode.PaymentDeclined]: "The payment was declined; use another card",
	[CheckoutCode.ProcessingError]: "The payment could not be processed; nothing was charged, please try again",
};

export interface CheckoutInput {
	sessionId: string;
	productId: number;
	email: string;
	name: string;
	lastName?: string;
	landingDomain: string;
	additionalData?: Record<string, unknown>;
	encryptedCardNumber: string;
	encryptedCvc: string;
	cardExpiry: string;
}

export interface CheckoutAnswer {
	code: CheckoutCode;
	message: string;
	customerId?: number;
}

export interface InvalidCheckout {
	invalid: { field: string; message: string }[];
}

export const answer = (code: CheckoutCode, customerId?: number): CheckoutAnswer =>
	customerId === undefined ? { code, message: CHECKOUT_MESSAGES[code] } : { code, message: CHECKOUT_MESSAGES[code], customerId };

const NO_PROCESSOR: CheckoutAnswer = {
	code: CheckoutCode.ProcessingError,
	message: "No payment processor is configured for this production account",
};

export const SESSION_CODES: Record<SessionCheckoutError, CheckoutCode> = {
	[SessionCheckoutError.NotFound]: CheckoutCode.SessionNotFound,
	[SessionCheckoutError.Expired]: CheckoutCode.SessionExpired,
	[SessionCheckoutError.Used]: CheckoutCode.SessionUsed,
	[SessionCheckoutError.DomainMismatch]: CheckoutCode.DomainMismatch,
};

export const UNVERIFIED: Record<VerifyCardError, CheckoutAnswer> = {
	[VerifyCardError.NoProcessor]: NO_PROCESSOR,
	[VerifyCardError.CardNotVerified]: answer(CheckoutCode.CreditCardValidation),
	[VerifyCardError.ProcessorError]: answer(CheckoutCode.ProcessingError),
};

/** Every way a first payment ends but ACTIVE, after which the session is released for another try. */
const UNPAID: Record<Exclude<FirstPaymentOutcome, FirstPaymentOutcome.Active> | CheckoutStepError, CheckoutAnswer> = {
	[FirstPaymentOutcome.Declined]: answer(CheckoutCode.PaymentDeclined),
	[FirstPaymentOutcome.NoProcessor]: NO_PROCESSOR,
	[FirstPaymentOutcome.ProcessorError]: answer(CheckoutCode.ProcessingError),
	[CheckoutStepError.WrongState]: answer(CheckoutCode.ProcessingError),
};

/** Round robin over the eligible MIDs, per checkout node. */
export function roundRobin(): (eligible: MerchantAccountView[]) => MerchantAccountView {
	let turn = 0;
	return eligible => eligible[turn++ % eligible.length];
}

export async function submitCheckout(deps: CheckoutDeps, input: CheckoutInput): Promise<CheckoutAnswer | InvalidCheckout> {
	// Nothing that cannot be stored, or that holds card data in plaintext, goes any further.
	const refused = buyerInputProblems(input);
	if (refused.length) return { invalid: refused };
	const now = deps.now();
	const [pan, cvc] = await Promise.all([
		decryptDigits(deps.keys, input.encryptedCardNumber, now, 19),
		decryptDigits(deps.keys, input.encryptedCvc, now, 4),
	]);
	const invalid = [
		...(pan === null
			? [{ field: "encryptedCardNumber", message: "encryptedCardNumber is not a card number encrypted to the current key" }]
			: []),
		...(cvc === null ? [{ field: "encryptedCvc", message: "encryptedCvc is not a CVC encrypted to the current key" }] : []),
	];
	if (pan === null || cvc === null) return { invalid };

	// 1. Session and product.
	const session = await deps.call("sessions.checkForCheckout", { sessionId: input.sessionId, landingDomain: input.landingDomain });
	if (isFailure(session)) return answer(SESSION_CODES[session.error]);
	const context = await deps.call("accounts.checkoutContext", {
		accountId: session.accountId,
		productId: input.productId,
		cardPrefix: pan.slice(0, 8),
	});
	if (!context?.product) return answer(CheckoutCode.ProductNotFound);
	if (!context.product.active) return answer(CheckoutCode.ProductInactive);
	const product = context.product;

	// 2. A MID that accepts the brand. A number of no known brand is not a card.
	const brand: CardBrand | null = cardBrand(pan);
	if (!brand) return answer(CheckoutCode.CreditCardValidation);
	const eligible = context.merchantAccounts.filter(m => m.active && m.cardTypes.includes(brand));
	if (eligible.length === 0) return answer(CheckoutCode.NoMerchantAccount);
	const mid = deps.pickMerchantAccount(eligible);

	// 3. Blocked BIN before any processor call; then the card itself.
	if (context.binBlacklisted) return answer(CheckoutCode.BinBlacklist);
	if (!passesLocalChecks(pan, cvc, input.cardExpiry, now)) return answer(CheckoutCode.CreditCardValidation);
	const attemptId = `co_${randomBytes(12).toString("base64url")}`;
	const verified = await deps.call("billing.verifyCard", {
		environment: context.environment,
		midId: mid.id,
		attemptId,
		card: { pan, expiry: input.cardExpiry, cvc },
	});
	if (isFailure(verified)) return UNVERIFIED[verified.error];

	// 4. One live subscription per (product, email, card) unless the product allows more.
	const opened = await deps.call("billing.openSubscription", {
		accountId: session.accountId,
		environment: context.environment,
		product: { id: product.id, allowMultipleSubscriptions: product.allowMultipleSubscriptions },
		buyer: { email: input.email.trim().toLowerCase(), name: input.name, lastName: input.lastName ?? "" },
		card: {
			cardToken: verified.cardToken,
			fingerprint: cardFingerprint(deps.fingerprintKey, pan),
			bin: pan.slice(0, 6),
			last4: pan.slice(-4),
			brand,
			expiry: input.cardExpiry,
		},
		mid: { id: mid.id, name: mid.name },
		sessionId: input.sessionId.toLowerCase(),
		additionalData: input.additionalData ?? null,
	});
	if (isFailure(opened)) return answer(CheckoutCode.AlreadySubscribed);

	// 5. The session is consumed just before money moves, so one session pays once.
	const consumed = await deps.call("sessions.consume", { sessionId: input.sessionId, attemptId });
	if (isFailure(consumed)) {
		await deps.call("billing.abandonSubscription", { customerId: opened.customerId });
		return answer(SESSION_CODES[consumed.error]);
	}
	const paid = await deps.call("billing.firstPayment", {
		customerId: opened.customerId,
		environment: context.environment,
		attemptId,
		cvc,
		product: {
			billing: product.billing,
			amountMinor: product.amountMinor,
			currency: product.currency,
			currencyId: product.currencyId,
			trialDays: product.trialDays,
			renewal: product.renewal,
		},
	});
	if (!isFailure(paid) && paid.outcome === FirstPaymentOutcome.Active) return answer(CheckoutCode.Ok, paid.customer.id);

	// The payment failed: the buyer may try again with the same session.
	await deps.call("sessions.release", { sessionId: input.sessionId, attemptId });
	return UNPAID[isFailure(paid) ? paid.error : (paid.outcome as Exclude<FirstPaymentOutcome, FirstPaymentOutcome.Active>)];
}
