// A customer's new card, from a card update session (docs/recovery.md#card-update).
// The checkout service has verified the card; here it becomes the customer's:
//   1. The customer's renewal lease is taken, so no renewal runs meanwhile (one
//      in flight is waited for): an update and a renewal never both charge.
//   2. The duplicate-subscription lock moves to the new card's fingerprint.
//   3. The new card's payment, the buyer present: the renewal owed (retrying,
//      or SUSPENDED after declines), or else the card's set-up for the renewals
//      to come (amount 0), which later renewals refer to. The issuer may ask
//      for a challenge (3-D Secure): the update then waits for it, holding the
//      lease (continueCardUpdate). Declined: nothing changes.
//   4. The card, its MID and (after a recovery) the schedule are written in one
//      update with PAYMENT_METHOD_UPDATED (and REACTIVATION) in the outbox.
// Steps 1 to 3 are here; step 4, and what the steps share, is in
// card-update-settlement.ts; an update paused for a challenge is settled in
// card-update-challenge.ts.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { CardUpdateError, type CardUpdateInput, CardUpdateOutcome, type CardUpdateTarget } from "../../../shared/contracts/billing";
import { leaseFree, newLease } from "../../../shared/persistence";
import { withRetries } from "../../../shared/processor-retries";
import type { BillingDeps } from "../deps";
import type { AwaitingCardUpdate, CardFields, CustomerDoc } from "../records/customer";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus } from "../states";
import { claimLock, lockKey } from "../subscription-lock";
import { settleIfOver } from "./card-update-challenge";
import {
	applyCard,
	awaitingBuyer,
	type CardChange,
	heldBy,
	letLockGo,
	type OwedRenewal,
	owedRenewal,
	ownerOf,
	paymentKey,
	settlePayment,
	UPDATABLE,
	type UpdateResult,
} from "./card-update-settlement";

/** How long an update holds the customer's renewal: longer than a charge with its retries takes. */
const LEASE_MS = 60_000;
/** Claims tried while renewals of the customer keep taking the lease first. */
const CLAIM_TRIES = 3;

export async function cardUpdateTarget(
	deps: BillingDeps,
	input: { accountId: number; customerId: number },
): Promise<CardUpdateTarget | CardUpdateError> {
	const customer = await deps.db.customers.findById(input.customerId).lean();
	if (!customer || customer.accountId !== input.accountId) return CardUpdateError.UnknownCustomer;
	if (!UPDATABLE.includes(customer.status)) return CardUpdateError.NotUpdatable;
	return { customerId: customer._id, productId: customer.productId, environment: customer.environment, email: customer.email };
}

/** The renewal a customer owes: retrying after a decline, or suspended after the last. */
const owesRenewal = (customer: CustomerDoc) =>
	customer.status === CustomerStatus.Suspended || customer.attempts > 0 || (customer.refusedMids?.length ?? 0) > 0;

/** Takes the customer's renewal lease for this update; a renewal in flight is waited for. */
async function claimForUpdate(deps: BillingDeps, input: CardUpdateInput, owner: string): Promise<CustomerDoc | null> {
	for (let tries = 0; tries < CLAIM_TRIES; tries++) {
		const now = deps.now();
		const claimed = await deps.db.customers
			.findOneAndUpdate(
				{ _id: input.customerId, accountId: input.accountId, ...leaseFree("renewalLease", now) },
				{ $set: { renewalLease: newLease(owner, now, LEASE_MS) } },
				{ returnDocument: "after" },
			)
			.lean();
		if (claimed) return claimed;
		// An earlier update waits for its buyer's challenge: busy while it is open, settled first once it is over.
		const paused = (await deps.db.customers.findById(input.customerId).lean())?.awaitingCardUpdate;
		if (paused && !(await settleIfOver(deps, input.customerId, paused))) return null;
		if (!paused) await waitForRenewalInFlight(deps, input.customerId);
	}
	return null;
}

/**
 * How long after its challenge's end a paused update still holds the customer's renewal: the recovery sweep settles
 * an update whose buyer never came back within its grace period, so no renewal charges the old card meanwhile.
 */
const AFTER_CHALLENGE_MS = 15 * 60_000;

export async function updateCard(deps: BillingDeps, input: CardUpdateInput): Promise<UpdateResult> {
	const customer = await claimForUpdate(deps, input, ownerOf(input.attemptId));
	if (!customer) return CardUpdateError.Busy;
	const held = heldBy(customer._id, input.attemptId);
	let result: UpdateResult = CardUpdateError.NotUpdatable;
	try {
		result = await updateHeldCustomer(deps, customer, input, held);
		return result;
	} finally {
		// A payment waiting for the buyer's challenge keeps the lease until it is settled (continueCardUpdate).
		if (!isAwaitingBuyer(result)) await deps.db.customers.updateOne(held, { $set: { renewalLease: null } });
	}
}

const isAwaitingBuyer = (result: UpdateResult) => typeof result === "object" && result.outcome === CardUpdateOutcome.AwaitingBuyer;

/** Steps 2 to 4, while this update holds the customer's renewal lease. */
async function updateHeldCustomer(deps: BillingDeps, customer: CustomerDoc, input: CardUpdateInput, held: object): Promise<UpdateResult> {
	if (!UPDATABLE.includes(customer.status)) return CardUpdateError.NotUpdatable;
	const product = await deps.productOf(customer.accountId, customer.productId);
	const newLock = await takeNewLock(deps, customer, input, product);
	if (newLock === false) return CardUpdateError.AlreadySubscribed;
	const at = await deps.clocks.now(customer.accountId);
	const change: CardChange = { attemptId: input.attemptId, card: cardOf(input), newLock, held, at };
	// Nothing will be charged later (a one-off product, or one gone): the card only changes.
	if (!product?.renewal) return applyCard(deps, customer, change, { networkTransactionId: null });
	const owed = owesRenewal(customer) ? await owedRenewal(deps, customer) : null;
	const owes = owed !== null;
	const key = paymentKey(customer._id, input.attemptId, owes);
	const paid = await payWithNewCard(deps, input, change, { product, owed, key });
	if (paid.status !== "AWAITING_BUYER") return settlePayment(deps, customer, change, { owed, key, paid });
	const until = new Date(input.challengeUntil);
	return pauseForChallenge(
		deps,
		customer,
		change,
		{ attemptId: input.attemptId, sessionId: input.sessionId, card: change.card, newLock, owes, until },
		paid.challengeUrl,
	);
}

/** The lock of the new card, when the update needs one (null if not); false when a live subscription holds it. */
async function takeNewLock(
	deps: BillingDeps,
	customer: CustomerDoc,
	input: CardUpdateInput,
	product: ProductRecord | null,
): Promise<string | null | false> {
	const sameCard = input.card.fingerprint === customer.cardFingerprint;
	// A SUSPENDED customer let its lock go: coming back, it takes one again, even for the same card.
	const needsLock = !sameCard || customer.status === CustomerStatus.Suspended;
	if (!needsLock || product?.allowMultipleSubscriptions) return null;
	const key = lockKey({
		accountId: customer.accountId,
		product: { id: customer.productId },
		buyer: { email: customer.email },
		card: { fingerprint: input.card.fingerprint },
	});
	return (await claimLock(deps, key, customer._id)) ? key : false;
}

function cardOf(input: CardUpdateInput): CardFields {
	return {
		cardToken: input.card.cardToken,
		cardFingerprint: input.card.fingerprint,
		cardBin: input.card.bin,
		cardLast4: input.card.last4,
		cardType: input.card.brand,
		cardExpiredTime: input.card.expiry,
		midId: input.mid.id,
		midName: input.mid.name,
		refusedMids: [],
	};
}

/**
 * The buyer is here: the renewal owed, or else the card's set-up for the renewals to come (amount 0), is a
 * customer-initiated payment the issuer may want authenticated, and the one later renewals refer to.
 */
function payWithNewCard(
	deps: BillingDeps,
	input: CardUpdateInput,
	{ card, at }: Pick<CardChange, "card" | "at">,
	{ product, owed, key }: { product: ProductRecord; owed: OwedRenewal | null; key: string },
) {
	return withRetries(() =>
		deps.payments.firstPayment({
			idempotencyKey: key,
			cardToken: card.cardToken,
			amount: owed ? owed.bill.amount : 0,
			currency: (owed?.product ?? product).currency,
			midId: card.midId,
			kind: owed ? "charge" : "setup",
			challengeUntil: input.challengeUntil,
			authenticate: product.authentication ?? "WHEN_REQUIRED",
			at,
		}),
	);
}

/** The issuer asked for a challenge: the update waits for the buyer, keeping the lease past the challenge's end. */
async function pauseForChallenge(
	deps: BillingDeps,
	customer: CustomerDoc,
	change: CardChange,
	awaiting: AwaitingCardUpdate,
	challengeUrl: string,
): Promise<UpdateResult> {
	// Settled by the recovery sweep if the frame never comes back (checkout-recovery.ts).
	await deps.checkouts.add(customer._id, awaiting.until);
	const kept = await deps.db.customers.updateOne(
		{ ...change.held, status: { $in: UPDATABLE } },
		{ $set: { awaitingCardUpdate: awaiting, "renewalLease.until": new Date(awaiting.until.getTime() + AFTER_CHALLENGE_MS) } },
	);
	// Unsubscribed meanwhile: the challenge is never shown, so the buyer cannot take it, and nothing moves.
	if (kept.modifiedCount !== 1) {
		await letLockGo(deps, customer, change.newLock);
		return CardUpdateError.NotUpdatable;
	}
	return awaitingBuyer(customer, challengeUrl);
}
