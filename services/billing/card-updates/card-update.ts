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
import type { ProductRecord } from "../../../shared/contracts/accounts";
import {
	CardUpdateError,
	type CardUpdateInput,
	CardUpdateOutcome,
	type CardUpdateResult,
	type CardUpdateTarget,
	type TransactionView,
} from "../../../shared/contracts/billing";
import { AUTHENTICATION_FAILED_REASON } from "../../../shared/contracts/payments";
import { leaseFree, newLease } from "../../../shared/persistence";
import { withRetries } from "../../../shared/processor-retries";
import { addPeriod } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { AwaitingCardUpdate, CardFields, CustomerDoc } from "../documents/customer";
import { customerMove } from "../lifecycle";
import { outboxEvent, scheduleEvents } from "../outbox/outbox";
import type { ProcessorOutcome } from "../payments";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus, TransactionType } from "../states";
import { claimLock, lockKey, releaseLock } from "../subscription-lock";
import { recordTransaction } from "../transaction-record";
import { toCustomerView, toTransactionView } from "../views";
import { listExpiryWarning } from "./card-expiry";
import { noteRecovery } from "./recovery";

/** Customers whose card can be replaced: a subscription that is live, or suspended by its renewals. */
const UPDATABLE = [CustomerStatus.Active, CustomerStatus.Suspended];
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

type UpdateResult = CardUpdateResult | CardUpdateError;

const ownerOf = (attemptId: string) => `card-update:${attemptId}`;
const heldBy = (customerId: number, attemptId: string) => ({ _id: customerId, "renewalLease.owner": ownerOf(attemptId) });
/** The update's payment's key, one per attempt: the renewal owed, or the new card's set-up for later charges. */
const paymentKey = (customerId: number, attemptId: string, owes: boolean) =>
	`${owes ? "recovery" : "card-setup"}:${customerId}:${attemptId}`;
/**
 * How long after its challenge's end a paused update still holds the customer's renewal: the recovery sweep settles
 * an update whose buyer never came back within its grace period, so no renewal charges the old card meanwhile.
 */
const AFTER_CHALLENGE_MS = 15 * 60_000;

/** The answer while the buyer takes the issuer's challenge at `challengeUrl`. */
const awaitingBuyer = (customer: CustomerDoc, challengeUrl: string): CardUpdateResult => ({
	outcome: CardUpdateOutcome.AwaitingBuyer,
	customer: toCustomerView(customer),
	transaction: null,
	challengeUrl,
});

interface CardChange {
	attemptId: string;
	card: CardFields;
	newLock: string | null;
	/** The customer while this update holds its renewal lease. */
	held: object;
}

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
	const change: CardChange = { attemptId: input.attemptId, card: cardOf(input), newLock, held };
	// Nothing will be charged later (a one-off product, or one gone): the card only changes.
	if (!product?.renewal) return applyCard(deps, customer, change, { networkTransactionId: null });
	const owes = owesRenewal(customer);
	const key = paymentKey(customer._id, input.attemptId, owes);
	const paid = await payWithNewCard(deps, input, change.card, { product, owes, key });
	if (paid.status !== "AWAITING_BUYER") return settlePayment(deps, customer, change, { product, owes, key, paid });
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
	card: CardFields,
	{ product, owes, key }: { product: ProductRecord; owes: boolean; key: string },
) {
	return withRetries(() =>
		deps.payments.firstPayment({
			idempotencyKey: key,
			cardToken: card.cardToken,
			amount: owes ? product.amountMinor : 0,
			currency: product.currency,
			midId: card.midId,
			kind: owes ? "charge" : "setup",
			challengeUntil: input.challengeUntil,
			authenticate: product.authentication ?? "WHEN_REQUIRED",
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

/**
 * A card update after the buyer's challenge on the renewal owed: settled by what the gateway recorded, as the update
 * would have been. Nothing moved before the challenge's time ran out: ABANDONED, nothing changed. A repeat (a second
 * tab, a reload, the recovery sweep) finds the update settled and changes nothing again.
 */
export async function continueCardUpdate(deps: BillingDeps, input: { customerId: number; attemptId: string }): Promise<UpdateResult> {
	const customer = await deps.db.customers.findById(input.customerId).lean();
	if (!customer) return CardUpdateError.NotUpdatable;
	const awaiting = customer.awaitingCardUpdate;
	if (awaiting?.attemptId !== input.attemptId) {
		// Settled already (a second tab, the recovery sweep): the same answer again.
		const last = customer.lastCardUpdate;
		return last?.attemptId === input.attemptId
			? { outcome: last.outcome, customer: toCustomerView(customer), transaction: null }
			: CardUpdateError.NotPaused;
	}
	const key = paymentKey(customer._id, input.attemptId, awaiting.owes);
	const paid = await withRetries(() => deps.payments.afterChallenge(key));
	if (paid?.status === "AWAITING_BUYER") return awaitingBuyer(customer, paid.challengeUrl);
	const change = {
		attemptId: input.attemptId,
		card: awaiting.card,
		newLock: awaiting.newLock,
		held: heldBy(customer._id, input.attemptId),
	};
	let result: UpdateResult = CardUpdateError.NotUpdatable;
	try {
		if (paid === null) {
			await letLockGo(deps, customer, change.newLock);
			result = { outcome: CardUpdateOutcome.Abandoned, customer: toCustomerView(customer), transaction: null };
			return result;
		}
		const product = await deps.productOf(customer.accountId, customer.productId);
		if (product) result = await settlePayment(deps, customer, change, { product, owes: awaiting.owes, key, paid });
		return result;
	} finally {
		// Unpaid (an approved one was written with the card): what it came to is kept for a repeat. The pause ends even
		// if the lease was lost meanwhile (a long outage), so nothing waits for it for ever.
		const lastCardUpdate = typeof result === "object" ? { attemptId: input.attemptId, outcome: result.outcome } : null;
		await deps.db.customers.updateOne(
			{ _id: customer._id, "awaitingCardUpdate.attemptId": input.attemptId },
			{ $set: { awaitingCardUpdate: null, lastCardUpdate } },
		);
		await deps.db.customers.updateOne(change.held, { $set: { renewalLease: null } });
	}
}

/**
 * An update paused for its buyer's challenge, met by another change of the customer (an unsubscribe, a second
 * update): false while the challenge is open (the buyer may still pay); once it is over, settled now, and true.
 */
export async function settleIfOver(deps: BillingDeps, customerId: number, paused: AwaitingCardUpdate): Promise<boolean> {
	if (new Date(paused.until).getTime() > deps.now().getTime()) return false;
	await settleWithoutBuyer(deps, customerId, paused).catch(() => null);
	return true;
}

/** What a paused update settled without its frame may come to and still hold its session. */
const SESSION_KEPT = [CardUpdateOutcome.Updated, CardUpdateOutcome.Recovered, CardUpdateOutcome.AwaitingBuyer];

/**
 * A paused update settled with no frame to answer (the recovery sweep, another change of the customer): unpaid, its
 * session is released as the frame's continuation would have released it, so it reads EXPIRED, never USED.
 */
export async function settleWithoutBuyer(deps: BillingDeps, customerId: number, paused: AwaitingCardUpdate): Promise<UpdateResult> {
	const settled = await continueCardUpdate(deps, { customerId, attemptId: paused.attemptId });
	if (typeof settled === "object" && !SESSION_KEPT.includes(settled.outcome))
		await deps.releaseSession({ sessionId: paused.sessionId, attemptId: paused.attemptId });
	return settled;
}

/** The lock an update took for the new card, let go when the card does not become the customer's. */
async function letLockGo(deps: BillingDeps, customer: CustomerDoc, newLock: string | null): Promise<void> {
	if (newLock) await deps.db.subscriptionLocks.deleteOne({ _id: newLock, customerId: customer._id });
}

/**
 * Settles the update by its payment: the renewal owed (recorded as a transaction) or the card's set-up (no money, no
 * transaction). Approved, the card becomes the customer's, and after a renewal owed the customer is ACTIVE again.
 */
async function settlePayment(
	deps: BillingDeps,
	customer: CustomerDoc,
	change: CardChange,
	{ product: owed, owes, key, paid }: { product: ProductRecord; owes: boolean; key: string; paid: ProcessorOutcome },
): Promise<UpdateResult> {
	const type = customer.periodsBilled === 0 ? TransactionType.SubscriptionStart : TransactionType.Renewal;
	const recorded = owes ? await recordTransaction(deps, { ...customer, ...change.card }, owed, type, key, paid) : null;
	const transaction = recorded && toTransactionView(recorded);
	const networkTransactionId = paid.networkTransactionId ?? null;
	if (paid.status !== "APPROVED") {
		// Nothing changes: the lock this update took is let go (a SUSPENDED customer holds none).
		await letLockGo(deps, customer, change.newLock);
		const outcome =
			paid.reason === AUTHENTICATION_FAILED_REASON
				? CardUpdateOutcome.AuthenticationFailed
				: paid.status === "DECLINED"
					? CardUpdateOutcome.RecoveryDeclined
					: CardUpdateOutcome.RecoveryFailed;
		return { outcome, customer: toCustomerView(customer), transaction };
	}
	// The card set up (a set-up records no transaction): it only changes.
	if (!transaction) return applyCard(deps, customer, change, { networkTransactionId });
	const schedule = resumedSchedule(deps, customer, owed);
	await deps.renewals.add(customer._id, schedule.nextRenewalTimestamp!);
	return applyCard(deps, customer, change, { networkTransactionId, recovery: { schedule, transaction, owed } });
}

type PaidWithCard = {
	/** The new card's first payment's or set-up's, which later renewals refer to. */
	networkTransactionId: string | null;
	recovery?: { schedule: Partial<CustomerDoc>; transaction: TransactionView; owed: ProductRecord };
};

/** The card (and after a recovery the schedule) in one update, with PAYMENT_METHOD_UPDATED (and REACTIVATION). */
async function applyCard(deps: BillingDeps, customer: CustomerDoc, change: CardChange, paid: PaidWithCard): Promise<UpdateResult> {
	const { recovery } = paid;
	const outcome = recovery ? CardUpdateOutcome.Recovered : CardUpdateOutcome.Updated;
	const updated = await writeCard(deps, customer, change, paid, outcome);
	if (!updated) {
		// Applied by another call of the same update (a second tab), or unsubscribed meanwhile (an unsubscribe waits for
		// the lease, so only before it was taken): nothing to change.
		const now = await deps.db.customers.findById(customer._id).lean();
		const last = now?.lastCardUpdate;
		return now && last?.attemptId === change.attemptId
			? { outcome: last.outcome, customer: toCustomerView(now), transaction: recovery?.transaction ?? null }
			: CardUpdateError.NotUpdatable;
	}
	await afterCardWritten(deps, customer, updated, recovery);
	return { outcome, customer: toCustomerView(updated), transaction: recovery?.transaction ?? null };
}

/** A recovery makes a SUSPENDED customer ACTIVE again; otherwise its status stays as it is. */
const REACTIVATE = customerMove(CustomerStatus.Suspended, CustomerStatus.Active);
const STAYS = { filter: { status: { $in: UPDATABLE } }, set: {} };

/** The one update of step 4, while this update holds the lease; null when it no longer does (or the customer is not updatable). */
async function writeCard(
	deps: BillingDeps,
	customer: CustomerDoc,
	{ attemptId, card, held }: CardChange,
	{ recovery, networkTransactionId }: PaidWithCard,
	outcome: CardUpdateOutcome,
): Promise<CustomerDoc | null> {
	const status = recovery && customer.status === CustomerStatus.Suspended ? REACTIVATE : STAYS;
	const events = [outboxEvent(deps, "PAYMENT_METHOD_UPDATED"), ...(recovery ? [outboxEvent(deps, "REACTIVATION")] : [])];
	await scheduleEvents(
		deps,
		events.map(event => ({ kind: "c" as const, docId: customer._id, event })),
	);
	const changes = { ...card, ...recovery?.schedule, ...status.set, networkTransactionId, renewalLease: null, awaitingCardUpdate: null };
	return deps.db.customers
		.findOneAndUpdate(
			{ ...held, ...status.filter },
			{ $set: { ...changes, lastCardUpdate: { attemptId, outcome } }, $push: { outbox: { $each: events } } },
			{ returnDocument: "after" },
		)
		.lean();
}

/** What follows the card's change: the recovery counted, the old card's lock let go, the expiry warning and the schedule moved. */
async function afterCardWritten(deps: BillingDeps, customer: CustomerDoc, updated: CustomerDoc, recovery: PaidWithCard["recovery"]) {
	// Counted by the one call that applied it (two tabs continuing at once both get this far).
	if (recovery)
		await noteRecovery(deps, deps.now(), {
			entered: [],
			recovered: [{ customer, amountMinor: recovery.owed.amountMinor, currency: recovery.owed.currency }],
		});
	if (updated.cardFingerprint !== customer.cardFingerprint && customer.status === CustomerStatus.Active) await releaseLock(deps, customer);
	// The new card may expire before the next renewal (lists nothing when it does not, or when there is none).
	await listExpiryWarning(deps, updated);
	const next = recovery?.schedule.nextRenewalTimestamp;
	if (customer.nextRenewalTimestamp && next) await deps.renewals.remove(customer._id, customer.nextRenewalTimestamp, next);
}

/**
 * After a recovery charge: a customer that was retrying keeps its anchor (the
 * period it was in is paid; the next is due one period after that period's
 * date); a SUSPENDED one starts again from now, as a new first charge would,
 * so months of suspension are not charged at once.
 */
function resumedSchedule(deps: BillingDeps, customer: CustomerDoc, product: ProductRecord): Partial<CustomerDoc> {
	const now = deps.now();
	const renewal = product.renewal!;
	const restart = customer.status === CustomerStatus.Suspended || !customer.billingAnchor;
	const anchor = restart ? now : customer.billingAnchor!;
	const periodsBilled = restart ? 1 : customer.periodsBilled + 1;
	const next = addPeriod(anchor, { every: renewal.every * periodsBilled, unit: renewal.unit });
	return {
		renewalActive: true,
		attempts: 0,
		firstDeclinedAt: null,
		billingAnchor: anchor,
		periodsBilled,
		lastTimeBilled: now,
		nextRenewalTimestamp: next,
	};
}
