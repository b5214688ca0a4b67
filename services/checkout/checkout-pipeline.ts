// The checkout, in the spec's processing order (section 1), after the buyer's
// fields and additionalData are checked (buyer-input.ts):
//   1. session and product checks
//   2. merchant account (MID) selection by card brand
//   3. BIN blacklist and blocked buyers, then card validation (local checks and a zero-amount verification)
//   4. duplicate subscription check
//   5. charge, hold or schedule by product type (the session is consumed just before); a MID that refuses
//      the verification or the payment moves the checkout on to the group's next MID, steps 3 to 5 again
//   6. answer {code: OK, customerId}; billing emits the TRANSACTION and CONVERSION events
// Every outcome is a code; nothing here throws for a business reason.
import { isFailure } from "../../shared/call";
import type { CouponTerms, Environment, ProductRecord } from "../../shared/contracts/accounts";
import { CheckoutStepError, FirstPaymentOutcome, type FirstPaymentResult } from "../../shared/contracts/billing";
import { buyerInputProblems } from "./buyer-input";
import { checkoutSale, paymentProduct, releaseReservation } from "./cap-reservations";
import {
	type CardFields,
	type CheckedCard,
	type DeclinedOn,
	decryptCard,
	refusedByMid,
	type ScreenedCard,
	screenCard,
	verifyOnMid,
} from "./card-checks";
import {
	answer,
	type CheckoutAnswer,
	CheckoutCode,
	challengeFor,
	type InvalidCheckout,
	NO_PROCESSOR,
	SESSION_CODES,
} from "./checkout-answers";
import { checkoutCoupon, redeemFor } from "./checkout-coupon";
import type { CheckoutDeps } from "./deps";

export interface CheckoutInput {
	sessionId: string;
	productId: number;
	email: string;
	name: string;
	lastName?: string;
	landingDomain: string;
	additionalData?: Record<string, unknown>;
	/** Typed by the buyer in the frame's promotion code field (docs/coupons.md). */
	promotionCode?: string;
	encryptedCardNumber: string;
	encryptedCvc: string;
	cardExpiry: string;
}

/** The most MIDs one checkout tries, the first included: each try asks the issuer again. */
const CASCADE_MIDS = 3;

/** Every way a first payment ends unpaid, after which the session is released for another try. */
const UNPAID: Record<
	Exclude<FirstPaymentOutcome, FirstPaymentOutcome.Active | FirstPaymentOutcome.AwaitingBuyer> | CheckoutStepError,
	CheckoutAnswer
> = {
	[FirstPaymentOutcome.Declined]: answer(CheckoutCode.PaymentDeclined),
	[FirstPaymentOutcome.NoProcessor]: NO_PROCESSOR,
	[FirstPaymentOutcome.ProcessorError]: answer(CheckoutCode.ProcessingError),
	[FirstPaymentOutcome.AuthenticationFailed]: answer(CheckoutCode.AuthenticationFailed),
	// The challenge's time ran out: the session has expired with it (released, it reads EXPIRED, not USED).
	[FirstPaymentOutcome.Abandoned]: answer(CheckoutCode.SessionExpired),
	[CheckoutStepError.WrongState]: answer(CheckoutCode.ProcessingError),
};

/** What a first payment (or its continuation after a challenge) answers; an unpaid one releases the session. */
async function answerFirstPayment(
	deps: CheckoutDeps,
	session: { sessionId: string; attemptId: string },
	paid: FirstPaymentResult | { error: CheckoutStepError },
): Promise<CheckoutAnswer> {
	if (!isFailure(paid)) {
		if (paid.outcome === FirstPaymentOutcome.Active) {
			const discount = paid.transaction?.discount;
			return { ...answer(CheckoutCode.Ok, paid.customer.id), ...(discount ? { discount } : {}) };
		}
		if (paid.outcome === FirstPaymentOutcome.AwaitingBuyer) return challengeFor(paid.challengeUrl ?? "", session.sessionId);
	}
	// Unpaid: the buyer may try again with the same session while it lasts.
	await deps.call("sessions.release", session);
	return UNPAID[isFailure(paid) ? paid.error : (paid.outcome as keyof typeof UNPAID)];
}

export async function submitCheckout(deps: CheckoutDeps, input: CheckoutInput): Promise<CheckoutAnswer | InvalidCheckout> {
	// Nothing that cannot be stored, or that holds card data in plaintext, goes any further.
	const refused = buyerInputProblems(input);
	if (refused.length) return { invalid: refused };
	const decrypted = await decryptCard(deps, input);
	if ("invalid" in decrypted) return decrypted;
	const { pan, cvc } = decrypted;

	// 1. Session and product.
	const session = await deps.call("sessions.checkForCheckout", { sessionId: input.sessionId, landingDomain: input.landingDomain });
	if (isFailure(session)) return answer(SESSION_CODES[session.error]);
	const context = await deps.accounts.checkoutContext({
		accountId: session.accountId,
		productId: input.productId,
		cardPrefix: pan.slice(0, 8),
	});
	if (!context?.product) return answer(CheckoutCode.ProductNotFound);
	if (!context.product.active) return answer(CheckoutCode.ProductInactive);
	const product = context.product;
	const coupon = await checkoutCoupon(deps, { ...input, accountId: session.accountId }, session.coupon);
	if ("refused" in coupon) return coupon.refused;

	// 2. and 3. A MID for the brand, the BIN blacklist and blocked buyers, then the card on a MID (its cap reserved for the charge).
	const buyer = { accountId: session.accountId, email: input.email };
	const card = { pan, cvc, expiry: input.cardExpiry };
	const screened = await screenCard(deps, context, card, buyer);
	if ("code" in screened) return screened;
	const sold = { accountId: session.accountId, environment: context.environment, product, coupon: coupon.terms };
	return payOnTheGroup(deps, input, sold, screened, card);
}

type Sold = { accountId: number; environment: Environment; product: ProductRecord; coupon: CouponTerms | null };

/**
 * Steps 3 (the verification) to 5 on the group's MIDs in turn: a MID's refusal moves the checkout on to the next one (docs/recovery.md#cascading-to-another-mid), each try a new attempt, at most CASCADE_MIDS of them.
 */
async function payOnTheGroup(
	deps: CheckoutDeps,
	input: CheckoutInput,
	sold: Sold,
	screened: ScreenedCard,
	card: CardFields,
): Promise<CheckoutAnswer> {
	const sale = (attemptId: string) => checkoutSale(deps, sold.product, sold.coupon, attemptId);
	const tried = new Set<number>();
	let declined: CheckoutAnswer | null = null;
	while (tried.size < CASCADE_MIDS) {
		const checked = await verifyOnMid(deps, screened, card, "co", sale, tried);
		const tryAnswer = "declinedOn" in checked || "code" in checked ? checked : await payChecked(deps, input, sold, checked);
		// No MID left to try: the buyer hears of the last decline.
		if (!("declinedOn" in tryAnswer)) return declined && tryAnswer.code === CheckoutCode.NoMerchantAccount ? declined : tryAnswer;
		tried.add(tryAnswer.declinedOn);
		declined = tryAnswer.answer;
	}
	return declined ?? answer(CheckoutCode.PaymentDeclined);
}

/** Steps 4 and 5 on a card verified on a MID; the cap's reservation is given back unless its customer took it. */
async function payChecked(
	deps: CheckoutDeps,
	input: CheckoutInput,
	sold: Sold,
	checked: CheckedCard,
): Promise<CheckoutAnswer | DeclinedOn> {
	let opened = false;
	try {
		return await payOn(deps, input, sold, checked, () => {
			opened = true;
		});
	} finally {
		// Until its customer is opened with it, the cap's reservation is the checkout's to give back (cap-reservations.ts).
		if (!opened) await releaseReservation(deps, checked.reservation);
	}
}

/** Steps 4 and 5 on the checked card: the duplicate check, then the first payment. */
async function payOn(
	deps: CheckoutDeps,
	input: CheckoutInput,
	session: { accountId: number; environment: Environment; product: ProductRecord; coupon: CouponTerms | null },
	checked: CheckedCard,
	onOpened: () => void,
): Promise<CheckoutAnswer | DeclinedOn> {
	const { mid, attemptId } = checked;
	const { product } = session;
	const context = { environment: session.environment };

	// 4. One live subscription per (product, email, card) unless the product allows more.
	const opened = await deps.call("billing.openSubscription", {
		accountId: session.accountId,
		attemptId,
		environment: context.environment,
		product: { id: product.id, allowMultipleSubscriptions: product.allowMultipleSubscriptions },
		buyer: { email: input.email.trim().toLowerCase(), name: input.name, lastName: input.lastName ?? "" },
		card: checked.record,
		mid: { id: mid.id, name: mid.name },
		sessionId: input.sessionId.toLowerCase(),
		additionalData: input.additionalData ?? null,
		coupon: session.coupon,
		capReservation: checked.reservation,
	});
	if (isFailure(opened)) return answer(CheckoutCode.AlreadySubscribed);
	onOpened();
	const refused = await redeemFor(deps, session.coupon, { accountId: session.accountId, customerId: opened.customerId });
	if (refused) return refused;

	// 5. The session is consumed just before money moves, so one session pays once.
	const consumed = await deps.call("sessions.consume", { sessionId: input.sessionId, attemptId, customerId: opened.customerId });
	if (isFailure(consumed)) {
		await deps.call("billing.abandonSubscription", { customerId: opened.customerId });
		return answer(SESSION_CODES[consumed.error]);
	}
	const paid = await deps.call("billing.firstPayment", {
		customerId: opened.customerId,
		environment: context.environment,
		attemptId,
		challengeUntil: consumed.expiresAt,
		product: paymentProduct(product),
	});
	const answered = await answerFirstPayment(deps, { sessionId: input.sessionId, attemptId }, paid);
	const decline = isFailure(paid) || paid.outcome !== FirstPaymentOutcome.Declined ? null : paid.transaction;
	return decline && refusedByMid(decline.declineCategory) ? { declinedOn: mid.id, answer: answered } : answered;
}

/**
 * The frame's call once the buyer's challenge ended (docs/authentication.md): the payment goes on from where the
 * checkout left it, and answers as the checkout would have. Repeated (a second tab, a reload), it answers the same.
 */
export async function continueCheckout(deps: CheckoutDeps, input: { sessionId: string; landingDomain: string }): Promise<CheckoutAnswer> {
	const inProgress = await deps.call("sessions.paymentInProgress", input);
	if (isFailure(inProgress)) return answer(SESSION_CODES[inProgress.error]);
	const paid = await deps.call("billing.continueFirstPayment", { customerId: inProgress.customerId, attemptId: inProgress.attemptId });
	// The session's last payment had no challenge (it paid or was declined at once): nothing to continue, nothing released.
	if (isFailure(paid)) return answer(CheckoutCode.SessionNotFound);
	return answerFirstPayment(deps, { sessionId: input.sessionId, attemptId: inProgress.attemptId }, paid);
}
