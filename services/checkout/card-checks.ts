// The card steps a checkout and a card update share: decrypting the card
// fields, then (spec steps 2 and 3) a MID of the product's group that takes
// the brand, the BIN blacklist and the account's blocked buyers, the local
// checks and the processor's zero-amount verification on that MID.
import { randomBytes } from "node:crypto";
import { isFailure } from "../../shared/call";
import type { MerchantAccountView } from "../../shared/contracts/accounts";
import { type CapReservation, DeclineCategory } from "../../shared/contracts/billing";
import { declineCategory } from "../../shared/decline-reasons";
import type { CardContext } from "./account-cache";
import { releaseReservation } from "./cap-reservations";
import { type CardBrand, cardBrand, cardFingerprint, decryptDigits, passesLocalChecks } from "./card-data";
import { answer, type CheckoutAnswer, CheckoutCode, UNVERIFIED } from "./checkout-answers";
import type { CheckoutDeps } from "./deps";
import type { Sale } from "./mid-routing";

export type FieldProblem = { field: string; message: string };

/** The card as the buyer typed it, decrypted. */
export interface CardFields {
	pan: string;
	cvc: string;
	expiry: string;
}

/** The card number and CVC, or what is wrong with their encryption. */
export async function decryptCard(
	deps: CheckoutDeps,
	input: { encryptedCardNumber: string; encryptedCvc: string },
): Promise<{ pan: string; cvc: string } | { invalid: FieldProblem[] }> {
	const now = deps.now();
	const [pan, cvc] = await Promise.all([
		decryptDigits(deps.keys, input.encryptedCardNumber, now, 19),
		decryptDigits(deps.keys, input.encryptedCvc, now, 4),
	]);
	if (pan !== null && cvc !== null) return { pan, cvc };
	return {
		invalid: [
			...(pan === null
				? [{ field: "encryptedCardNumber", message: "encryptedCardNumber is not a card number encrypted to the current key" }]
				: []),
			...(cvc === null ? [{ field: "encryptedCvc", message: "encryptedCvc is not a CVC encrypted to the current key" }] : []),
		],
	};
}

export interface CheckedCard {
	mid: MerchantAccountView;
	/** The MID cap's reservation of the charge (cap-reservations.ts); null when none. */
	reservation: CapReservation | null;
	attemptId: string;
	/** What billing keeps of the card: its token, keyed fingerprint, BIN, last four digits, brand and expiry. */
	record: { cardToken: string; fingerprint: string; bin: string; last4: string; brand: CardBrand; expiry: string };
}

/** One read by key: the card by its fingerprint, and the email when there is one. */
function isBlocked(deps: CheckoutDeps, buyer: { accountId: number; email: string | null }, fingerprint: string): Promise<boolean> {
	const email = buyer.email ? { email: buyer.email } : {};
	return deps.call("accounts.isBuyerBlocked", { accountId: buyer.accountId, fingerprint, ...email });
}

/** The card as screened before any processor is asked: its brand's eligible MIDs and its keyed fingerprint. */
export interface ScreenedCard {
	eligible: MerchantAccountView[];
	brand: CardBrand;
	fingerprint: string;
}

/** A card the MID `declinedOn` refused (refusedByMid): the checkout moves on to the group's next MID (docs/recovery.md#cascading-to-another-mid). */
export interface DeclinedOn {
	declinedOn: number;
	answer: CheckoutAnswer;
}

/**
 * A decline that is the MID's (its acquirer, its key, its risk rules), not the card's: another MID may approve it. A soft
 * decline is the issuer's answer about the card, which any MID would ask again: the buyer hears of it at once.
 */
export function refusedByMid(category: DeclineCategory | null): boolean {
	return category === DeclineCategory.MerchantAccount;
}

/** Steps 2 and 3: the MID, the blacklists, the local checks and the verification; the card's token, or the answer that ends it. */
export async function checkCard(
	deps: CheckoutDeps,
	context: CardContext,
	card: CardFields,
	buyer: { accountId: number; email: string | null },
	attemptPrefix: "co" | "cu",
	saleOf: ((attemptId: string) => Sale | null) | null,
): Promise<CheckedCard | CheckoutAnswer> {
	const screened = await screenCard(deps, context, card, buyer);
	if ("code" in screened) return screened;
	const verified = await verifyOnMid(deps, screened, card, attemptPrefix, saleOf);
	return "declinedOn" in verified ? verified.answer : verified;
}

/** Before any processor: a MID for the brand, the BIN blacklist and blocked buyers, the card's local checks. */
export async function screenCard(
	deps: CheckoutDeps,
	context: CardContext,
	card: CardFields,
	/** Whose card: the account, and the buyer's email if known (null: the card alone is looked up among blocked buyers). */
	buyer: { accountId: number; email: string | null },
): Promise<ScreenedCard | CheckoutAnswer> {
	// A MID that accepts the brand. A number of no known brand is not a card.
	const brand = cardBrand(card.pan);
	if (!brand) return answer(CheckoutCode.CreditCardValidation);
	const eligible = context.merchantAccounts.filter(m => m.active && m.cardTypes.includes(brand));
	if (eligible.length === 0) return answer(CheckoutCode.NoMerchantAccount);

	// Blocked BIN or buyer before any processor call or cap; then the card itself.
	if (context.binBlacklisted) return answer(CheckoutCode.BinBlacklist);
	const fingerprint = cardFingerprint(deps.fingerprintKey, card.pan);
	// A blocked card or email gets the spec's code for a card the merchant refuses, which does not say which was recognised.
	if (context.blocksBuyers && (await isBlocked(deps, buyer, fingerprint))) return answer(CheckoutCode.BinBlacklist);
	if (!passesLocalChecks(card.pan, card.cvc, card.expiry, deps.now())) return answer(CheckoutCode.CreditCardValidation);
	return { eligible, brand, fingerprint };
}

/** The card verified on a MID with room for the sale, one not `tried` yet; its token, or the answer that ends this try. */
export async function verifyOnMid(
	deps: CheckoutDeps,
	screened: ScreenedCard,
	card: CardFields,
	attemptPrefix: "co" | "cu",
	/** What the checkout will charge now under the attempt, which a capped MID must have room for; null: nothing now (a trial, a card update). */
	saleOf: ((attemptId: string) => Sale | null) | null,
	tried: ReadonlySet<number> = new Set(),
): Promise<CheckedCard | CheckoutAnswer | DeclinedOn> {
	const attemptId = `${attemptPrefix}_${randomBytes(12).toString("base64url")}`;
	const routed = await deps.mids.pick(
		screened.eligible.filter(m => !tried.has(m.id)),
		saleOf?.(attemptId) ?? null,
	);
	if (!routed) return answer(CheckoutCode.NoMerchantAccount);
	const { mid, reservation } = routed;
	// The card number goes to the payments service alone, which vaults it and verifies it on the MID's processor.
	const verified = await deps
		.call("payments.saveCard", { midId: mid.id, attemptId, card: { pan: card.pan, expiry: card.expiry, cvc: card.cvc } })
		.catch(async (err: Error) => {
			await releaseReservation(deps, reservation);
			throw err;
		});
	if (isFailure(verified)) {
		await releaseReservation(deps, reservation);
		const unverified = UNVERIFIED[verified.error];
		const declined = "declineReason" in verified && {
			status: "DECLINED" as const,
			reason: verified.declineReason,
			hardDecline: verified.hardDecline,
		};
		return declined && refusedByMid(declineCategory(declined)) ? { declinedOn: mid.id, answer: unverified } : unverified;
	}
	const record = {
		cardToken: verified.cardToken,
		fingerprint: screened.fingerprint,
		bin: card.pan.slice(0, 6),
		last4: card.pan.slice(-4),
		brand: screened.brand,
		expiry: card.expiry,
	};
	return { mid, reservation, attemptId, record };
}
