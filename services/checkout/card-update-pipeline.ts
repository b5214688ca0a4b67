// A card update from the hosted frame (docs/recovery.md#card-update), in the
// checkout's order without the buyer's fields and the product choice:
//   1. the card update session, and the customer it is for
//   2. a MID of the product's group that takes the brand
//   3. BIN blacklist and blocked buyers, local card checks, a zero-amount verification on that MID
//   4. the session consumed, then billing makes the card the customer's (and
//      charges the renewal owed, for a customer in recovery)
// Every outcome is a code; nothing here throws for a business reason.
import { isFailure } from "../../shared/call";
import { CardUpdateError, CardUpdateOutcome, type CardUpdateResult } from "../../shared/contracts/billing";
import { checkCard, decryptCard } from "./card-checks";
import { answer, CheckoutCode, challengeFor, SESSION_CODES } from "./checkout-answers";
import type { CheckoutDeps } from "./deps";

export interface CardUpdateRequest {
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
	/** CHALLENGE: the page the frame shows. */
	challengeUrl?: string;
}

const MESSAGES: Record<CardUpdateCode, string> = {
	[CardUpdateCode.CustomerNotUpdatable]: "This subscription has ended; its card cannot be updated",
	[CardUpdateCode.TryAgain]: "A payment of this subscription is in progress; please try again in a minute",
};

const updateAnswer = (code: CardUpdateCode): CardUpdateAnswer => ({ code, message: MESSAGES[code] });

/** OK says what happened: an update that charged nothing is no payment. */
const UPDATED_MESSAGES = {
	[CardUpdateOutcome.Updated]: "Card updated",
	[CardUpdateOutcome.Recovered]: "Card updated; the payment owed was accepted",
};

const REFUSED: Record<CardUpdateError, CardUpdateAnswer> = {
	[CardUpdateError.UnknownCustomer]: updateAnswer(CardUpdateCode.CustomerNotUpdatable),
	[CardUpdateError.NotUpdatable]: updateAnswer(CardUpdateCode.CustomerNotUpdatable),
	[CardUpdateError.AlreadySubscribed]: answer(CheckoutCode.AlreadySubscribed),
	[CardUpdateError.Busy]: updateAnswer(CardUpdateCode.TryAgain),
	[CardUpdateError.NotPaused]: answer(CheckoutCode.SessionNotFound),
};

export async function submitCardUpdate(
	deps: CheckoutDeps,
	input: CardUpdateRequest,
): Promise<CardUpdateAnswer | { invalid: { field: string; message: string }[] }> {
	const decrypted = await decryptCard(deps, input);
	if ("invalid" in decrypted) return decrypted;
	const { pan, cvc } = decrypted;

	// 1. The session and its customer.
	const session = await deps.call("sessions.checkForCheckout", {
		sessionId: input.sessionId,
		landingDomain: input.landingDomain,
		purpose: "cardUpdate",
	});
	if (isFailure(session)) return answer(SESSION_CODES[session.error]);
	const target = await deps.call("billing.cardUpdateTarget", { accountId: session.accountId, customerId: session.customerId! });
	if (isFailure(target)) return REFUSED[target.error];
	const context = await deps.accounts.checkoutContext({
		accountId: session.accountId,
		productId: target.productId,
		cardPrefix: pan.slice(0, 8),
	});
	if (!context?.product) return updateAnswer(CardUpdateCode.CustomerNotUpdatable);

	// 2. and 3. A MID of the product's group for the brand, the BIN blacklist and blocked buyers, then the card itself.
	// A card update's payment of a renewal owed is not routed by caps: it stays on the MID the card is verified on.
	const buyer = { accountId: session.accountId, email: target.email };
	const checked = await checkCard(deps, context, { pan, cvc, expiry: input.cardExpiry }, buyer, "cu", null);
	if ("code" in checked) return checked;
	const { mid, attemptId } = checked;

	// 4. One session, one update; then the card becomes the customer's.
	const consumed = await deps.call("sessions.consume", { sessionId: input.sessionId, attemptId, customerId: target.customerId });
	if (isFailure(consumed)) return answer(SESSION_CODES[consumed.error]);
	const updated = await deps.call("billing.updateCard", {
		accountId: session.accountId,
		customerId: target.customerId,
		attemptId,
		card: checked.record,
		mid: { id: mid.id, name: mid.name },
		sessionId: consumed.sessionId,
		challengeUntil: consumed.expiresAt,
	});
	return answerCardUpdate(deps, { sessionId: input.sessionId, attemptId, customerId: target.customerId }, updated);
}

/**
 * The frame's call once the buyer's challenge on the renewal owed ended (docs/authentication.md): the update goes on
 * from where it paused, and answers as the update would have. Repeated (a second tab, a reload), it answers the same.
 */
export async function continueCardUpdate(
	deps: CheckoutDeps,
	input: { sessionId: string; landingDomain: string },
): Promise<CardUpdateAnswer> {
	const inProgress = await deps.call("sessions.paymentInProgress", { ...input, purpose: "cardUpdate" });
	if (isFailure(inProgress)) return answer(SESSION_CODES[inProgress.error]);
	const { attemptId, customerId } = inProgress;
	const updated = await deps.call("billing.continueCardUpdate", { customerId, attemptId });
	// The session's last update had no challenge (it ended at once): nothing to continue, nothing released.
	if (isFailure(updated) && updated.error === CardUpdateError.NotPaused) return REFUSED[updated.error];
	return answerCardUpdate(deps, { sessionId: input.sessionId, attemptId, customerId }, updated);
}

/** What an update (or its continuation) answers; one that changed nothing releases the session for another card. */
async function answerCardUpdate(
	deps: CheckoutDeps,
	session: { sessionId: string; attemptId: string; customerId: number },
	updated: CardUpdateResult | { error: CardUpdateError },
): Promise<CardUpdateAnswer> {
	if (!isFailure(updated)) {
		if (updated.outcome === CardUpdateOutcome.Updated || updated.outcome === CardUpdateOutcome.Recovered) {
			const message = UPDATED_MESSAGES[updated.outcome];
			return { code: CheckoutCode.Ok, message, customerId: session.customerId, recovered: updated.outcome === CardUpdateOutcome.Recovered };
		}
		if (updated.outcome === CardUpdateOutcome.AwaitingBuyer) return challengeFor(updated.challengeUrl ?? "", session.sessionId);
	}
	// Nothing changed: the buyer may try another card with the same session.
	await deps.call("sessions.release", { sessionId: session.sessionId, attemptId: session.attemptId });
	if (isFailure(updated)) return REFUSED[updated.error];
	return answer(UNCHANGED[updated.outcome as keyof typeof UNCHANGED]);
}

const UNCHANGED = {
	[CardUpdateOutcome.RecoveryDeclined]: CheckoutCode.PaymentDeclined,
	[CardUpdateOutcome.RecoveryFailed]: CheckoutCode.ProcessingError,
	[CardUpdateOutcome.AuthenticationFailed]: CheckoutCode.AuthenticationFailed,
	// The challenge's time ran out: the session has expired with it (released, it reads EXPIRED, not USED).
	[CardUpdateOutcome.Abandoned]: CheckoutCode.SessionExpired,
};
