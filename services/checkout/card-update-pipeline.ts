// A card update from the hosted frame (docs/recovery.md#card-update), in the
// checkout's order without the buyer's fields and the product choice:
//   1. the card update session, and the customer it is for
//   2. a MID of the product's group that takes the brand
//   3. BIN blacklist, local card checks, a zero-amount verification on that MID
//   4. the session consumed, then billing makes the card the customer's (and
//      charges the renewal owed, for a customer in recovery)
// Every outcome is a code; nothing here throws for a business reason.
import { randomBytes } from "node:crypto";
import { isFailure } from "../../shared/call";
import { CardUpdateError, CardUpdateOutcome } from "../../shared/contracts/billing";
import { cardBrand, cardFingerprint, decryptDigits, passesLocalChecks } from "./card-data";
import { answer, CheckoutCode, SESSION_CODES, UNVERIFIED } from "./checkout-pipeline";
import type { CheckoutDeps } from "./deps";

export interface CardUpdateInput {
	sessionId: string;
	landingDomain: string;
	encryptedCardNumber: string;
	encryptedCvc: string;
	cardExpiry: string;
}

export enum CardUpdateCode {
	/** The customer's card cannot change any more: unsubscribed. */
	CustomerNotUpdatable = "CUSTOMER_NOT_UPDATABLE",
	/** A renewal of the customer was being charged; nothing changed. */
	TryAgain = "TRY_AGAIN",
}

export interface CardUpdateAnswer {
	code: CheckoutCode | CardUpdateCode;
	message: string;
	customerId?: number;
	/** True when the renewal the customer owed was charged on the new card (ACTIVE again). */
	recovered?: boolean;
}

const MESSAGES: Record<CardUpdateCode, string> = {
	[CardUpdateCode.CustomerNotUpdatable]: "This subscription has ended; its card cannot be updated",
	[CardUpdateCode.TryAgain]: "A payment of this subscription is in progress; please try again in a minute",
};

const updateAnswer = (code: CardUpdateCode): CardUpdateAnswer => ({ code, message: MESSAGES[code] });

const REFUSED: Record<CardUpdateError, CardUpdateAnswer> = {
	[CardUpdateError.UnknownCustomer]: updateAnswer(CardUpdateCode.CustomerNotUpdatable),
	[CardUpdateError.NotUpdatable]: updateAnswer(CardUpdateCode.CustomerNotUpdatable),
	[CardUpdateError.AlreadySubscribed]: answer(CheckoutCode.AlreadySubscribed),
	[CardUpdateError.Busy]: updateAnswer(CardUpdateCode.TryAgain),
};

export async function submitCardUpdate(
	deps: CheckoutDeps,
	input: CardUpdateInput,
): Promise<CardUpdateAnswer | { invalid: { field: string; message: string }[] }> {
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

	// 1. The session and its customer.
	const session = await deps.call("sessions.checkForCheckout", {
		sessionId: input.sessionId,
		landingDomain: input.landingDomain,
		purpose: "cardUpdate",
	});
	if (isFailure(session)) return answer(SESSION_CODES[session.error]);
	const target = await deps.call("billing.cardUpdateTarget", { accountId: session.accountId, customerId: session.customerId! });
	if (isFailure(target)) return REFUSED[target.error];
	const context = await deps.call("accounts.checkoutContext", {
		accountId: session.accountId,
		productId: target.productId,
		cardPrefix: pan.slice(0, 8),
	});
	if (!context?.product) return updateAnswer(CardUpdateCode.CustomerNotUpdatable);

	// 2. A MID of the product's group that takes the brand.
	const brand = cardBrand(pan);
	if (!brand) return answer(CheckoutCode.CreditCardValidation);
	const eligible = context.merchantAccounts.filter(m => m.active && m.cardTypes.includes(brand));
	if (eligible.length === 0) return answer(CheckoutCode.NoMerchantAccount);
	const mid = deps.pickMerchantAccount(eligible);

	// 3. Blocked BIN, the card itself, then a zero-amount verification.
	if (context.binBlacklisted) return answer(CheckoutCode.BinBlacklist);
	if (!passesLocalChecks(pan, cvc, input.cardExpiry, now)) return answer(CheckoutCode.CreditCardValidation);
	const attemptId = `cu_${randomBytes(12).toString("base64url")}`;
	const verified = await deps.call("billing.verifyCard", {
		environment: target.environment,
		midId: mid.id,
		attemptId,
		card: { pan, expiry: input.cardExpiry, cvc },
	});
	if (isFailure(verified)) return UNVERIFIED[verified.error];

	// 4. One session, one update; then the card becomes the customer's.
	const consumed = await deps.call("sessions.consume", { sessionId: input.sessionId, attemptId });
	if (isFailure(consumed)) return answer(SESSION_CODES[consumed.error]);
	const updated = await deps.call("billing.updateCard", {
		accountId: session.accountId,
		customerId: target.customerId,
		attemptId,
		cvc,
		card: {
			cardToken: verified.cardToken,
			fingerprint: cardFingerprint(deps.fingerprintKey, pan),
			bin: pan.slice(0, 6),
			last4: pan.slice(-4),
			brand,
			expiry: input.cardExpiry,
		},
		mid: { id: mid.id, name: mid.name },
	});
	if (!isFailure(updated) && [CardUpdateOutcome.Updated, CardUpdateOutcome.Recovered].includes(updated.outcome)) {
		return { ...answer(CheckoutCode.Ok, target.customerId), recovered: updated.outcome === CardUpdateOutcome.Recovered };
	}
	// Nothing changed: the buyer may try another card with the same session.
	await deps.call("sessions.release", { sessionId: input.sessionId, attemptId });
	if (isFailure(updated)) return REFUSED[updated.error];
	return answer(updated.outcome === CardUpdateOutcome.RecoveryDeclined ? CheckoutCode.PaymentDeclined : CheckoutCode.ProcessingError);
}
