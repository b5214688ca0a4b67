// Step 4 of a card update (card-update.ts), once its payment has an outcome:
// the renewal owed recorded as a transaction (a set-up records none), and,
// approved, the card, its MID and (after a recovery) the schedule written in
// one update with PAYMENT_METHOD_UPDATED (and REACTIVATION) in the outbox,
// while the update holds the customer's renewal lease. Unpaid, nothing
// changes and the lock the update took is let go. Also what the steps share:
// the lease's owner, the payment's key, the change being made.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { CardUpdateError, CardUpdateOutcome, type CardUpdateResult, type TransactionView } from "../../../shared/contracts/billing";
import { AUTHENTICATION_FAILED_REASON, type PaymentOutcome } from "../../../shared/contracts/payments";
import { addPeriod } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import type { CardFields, CustomerDoc } from "../documents/customer";
import { customerMove } from "../lifecycle";
import { outboxEvent, scheduleEvents } from "../outbox/outbox";
import { billedGross, planBilled } from "../pricing/billed";
import { CustomerStatus, HOLDS_SUBSCRIPTION, TransactionType } from "../states";
import { releaseLock } from "../subscription-lock";
import { recordTransaction } from "../transaction-record";
import { toCustomerView, toTransactionView } from "../views";
import { listExpiryWarning } from "./card-expiry";
import { noteRecovery } from "./recovery";

/** Customers whose card can be replaced: a subscription that is live, or suspended by its renewals. */
export const UPDATABLE = [CustomerStatus.Active, CustomerStatus.Suspended, CustomerStatus.Paused];

export type UpdateResult = CardUpdateResult | CardUpdateError;

export const ownerOf = (attemptId: string) => `card-update:${attemptId}`;
export const heldBy = (customerId: number, attemptId: string) => ({ _id: customerId, "renewalLease.owner": ownerOf(attemptId) });
/** The update's payment's key, one per attempt: the renewal owed, or the new card's set-up for later charges. */
export const paymentKey = (customerId: number, attemptId: string, owes: boolean) =>
	`${owes ? "recovery" : "card-setup"}:${customerId}:${attemptId}`;

/** The answer while the buyer takes the issuer's challenge at `challengeUrl`. */
export const awaitingBuyer = (customer: CustomerDoc, challengeUrl: string): CardUpdateResult => ({
	outcome: CardUpdateOutcome.AwaitingBuyer,
	customer: toCustomerView(customer),
	transaction: null,
	challengeUrl,
});

export interface CardChange {
	attemptId: string;
	card: CardFields;
	newLock: string | null;
	/** The customer while this update holds its renewal lease. */
	held: object;
}

/** The lock an update took for the new card, let go when the card does not become the customer's. */
export async function letLockGo(deps: BillingDeps, customer: CustomerDoc, newLock: string | null): Promise<void> {
	if (newLock) await deps.db.subscriptionLocks.deleteOne({ _id: newLock, customerId: customer._id });
}

/**
 * Settles the update by its payment: the renewal owed (recorded as a transaction) or the card's set-up (no money, no
 * transaction). Approved, the card becomes the customer's, and after a renewal owed the customer is ACTIVE again.
 */
export async function settlePayment(
	deps: BillingDeps,
	customer: CustomerDoc,
	change: CardChange,
	{ product: owed, owes, key, paid }: { product: ProductRecord; owes: boolean; key: string; paid: PaymentOutcome },
): Promise<UpdateResult> {
	const type = customer.periodsBilled === 0 ? TransactionType.SubscriptionStart : TransactionType.Renewal;
	const billed = planBilled(owed, 1, customer.nextRenewalTimestamp ?? deps.now(), null);
	const money = { ...owed, amountMinor: billedGross(billed) };
	const recorded = owes ? await recordTransaction(deps, { ...customer, ...change.card }, money, type, key, paid, billed) : null;
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
export async function applyCard(deps: BillingDeps, customer: CustomerDoc, change: CardChange, paid: PaidWithCard): Promise<UpdateResult> {
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
	if (updated.cardFingerprint !== customer.cardFingerprint && HOLDS_SUBSCRIPTION.includes(customer.status))
		await releaseLock(deps, customer);
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
	const anchorPeriod = restart ? 0 : (customer.anchorPeriod ?? 0);
	const next = addPeriod(anchor, { every: renewal.every * (periodsBilled - anchorPeriod), unit: renewal.unit });
	return {
		renewalActive: true,
		attempts: 0,
		firstDeclinedAt: null,
		billingAnchor: anchor,
		anchorPeriod,
		periodsBilled,
		lastTimeBilled: now,
		nextRenewalTimestamp: next,
	};
}
