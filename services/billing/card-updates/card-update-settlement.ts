// Step 4 of a card update (card-update.ts), once its payment has an outcome:
// the renewal owed recorded as a transaction (a set-up records none), and,
// approved, the card, its MID and (after a recovery) the schedule written in
// one update with PAYMENT_METHOD_UPDATED (and REACTIVATION) in the outbox,
// while the update holds the customer's renewal lease. Unpaid, nothing
// changes and the lock the update took is let go. Also what the steps share:
// the lease's owner, the payment's key, the card update being made.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { CardUpdateError, CardUpdateOutcome, type CardUpdateResult, type TransactionView } from "../../../shared/contracts/billing";
import { AUTHENTICATION_FAILED_REASON, type PaymentOutcome } from "../../../shared/contracts/payments";
import { addPeriod } from "../../../shared/time";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import { listExpiryWarning } from "../expiry-warnings";
import { customerMove } from "../lifecycle";
import { countOnCap } from "../mid-stats/cap-reservations";
import { outboxEvent, scheduleEvents } from "../outbox/outbox";
import type { CardFields, CustomerDoc } from "../records/customer";
import { noteRecovery } from "../renewals/recovery";
import { type RenewalBill, renewalBill, renewalProductId } from "../renewals/renewal-bill";
import { CustomerStatus, HOLDS_SUBSCRIPTION, TransactionType } from "../states";
import { releaseLock } from "../subscription-lock";
import { recordCharge } from "../transaction-record";
import { toCustomerView, toTransactionView } from "../views";

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
	/** When it is made, in the account's time (account-time.ts). */
	at: Date;
}

/** The renewal a card update pays: its product and what it bills (seats, the customer's credit, a change waiting for it). */
export interface OwedRenewal {
	product: ProductRecord;
	bill: RenewalBill;
}

/** What the renewal owed bills, as the renewal would have; null when its product is gone. */
export async function owedRenewal(deps: BillingDeps, customer: CustomerDoc): Promise<OwedRenewal | null> {
	const product = await deps.productOf(customer.accountId, renewalProductId(customer));
	return product?.renewal ? { product, bill: renewalBill(customer, product) } : null;
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
	{ owed, key, paid }: { owed: OwedRenewal | null; key: string; paid: PaymentOutcome },
): Promise<UpdateResult> {
	const type = customer.periodsBilled === 0 ? TransactionType.SubscriptionStart : TransactionType.Renewal;
	const recorded = owed ? await recordOwed(deps, { ...customer, ...change.card }, owed, { type, key, paid, at: change.at }) : null;
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
	if (!transaction || !owed) return applyCard(deps, customer, change, { networkTransactionId });
	const schedule = resumedSchedule(customer, owed, change.at);
	await deps.renewals.add(customer._id, schedule.nextRenewalTimestamp!);
	const money = { amountMinor: owed.bill.amount, currency: owed.product.currency };
	// Not routed by caps, but a sale on the MID: its cap counts it.
	await countOnCap(deps, { midId: change.card.midId, currency: money.currency, amount: money.amountMinor, at: change.at });
	return applyCard(deps, customer, change, {
		networkTransactionId,
		recovery: { schedule, transaction, owed: money, product: owed.product },
	});
}

/** The renewal owed's transaction: the card's part, and the credit's beside it. */
function recordOwed(
	deps: BillingDeps,
	customer: CustomerDoc,
	{ product, bill }: OwedRenewal,
	{ type, key, paid, at }: { type: TransactionType; key: string; paid: PaymentOutcome; at: Date },
) {
	return recordCharge(deps, {
		customer: { ...customer, productId: bill.productId },
		money: { amountMinor: bill.amount, currency: product.currency, currencyId: product.currencyId },
		type,
		idempotencyKey: key,
		outcome: paid,
		creditApplied: bill.creditUsed,
		discount: bill.discount,
		billed: bill.billed,
		renewalTry: "card_update",
		at,
	});
}

type PaidWithCard = {
	/** The new card's first payment's or set-up's, which later renewals refer to. */
	networkTransactionId: string | null;
	recovery?: {
		schedule: Partial<CustomerDoc>;
		transaction: TransactionView;
		owed: { amountMinor: number; currency: string };
		product: ProductRecord;
	};
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
	await afterCardWritten(deps, customer, updated, { recovery, at: change.at });
	return { outcome, customer: toCustomerView(updated), transaction: recovery?.transaction ?? null };
}

/** A recovery makes a SUSPENDED customer ACTIVE again; otherwise its status stays as it is. */
const REACTIVATE = customerMove(CustomerStatus.Suspended, CustomerStatus.Active);
const STAYS = { filter: { status: { $in: UPDATABLE } }, set: {} };

/** The one update of step 4, while this update holds the lease; null when it no longer does (or the customer is not updatable). */
async function writeCard(
	deps: BillingDeps,
	customer: CustomerDoc,
	{ attemptId, card, held, at }: CardChange,
	{ recovery, networkTransactionId }: PaidWithCard,
	outcome: CardUpdateOutcome,
): Promise<CustomerDoc | null> {
	const status = recovery && customer.status === CustomerStatus.Suspended ? REACTIVATE : STAYS;
	const fields = { ...card, ...recovery?.schedule, ...status.set, networkTransactionId, renewalLease: null, awaitingCardUpdate: null };
	// A suspended customer paid is a subscriber again (reactivated); a new card on another MID moves it between MIDs.
	const { counted, entry } = await countUpdate(deps, customer, fields, { at, product: recovery?.product });
	// The buyer typed the card into the frame, whoever sent them there: both events say so.
	const by = { by: "buyer" as const };
	const events = [
		outboxEvent(deps, "PAYMENT_METHOD_UPDATED", { ...carrying(entry), ...by }),
		...(recovery ? [outboxEvent(deps, "REACTIVATION", by)] : []),
	];
	await scheduleEvents(
		deps,
		events.map(event => ({ kind: "c" as const, docId: customer._id, event })),
	);
	return deps.db.customers
		.findOneAndUpdate(
			{ ...held, ...status.filter },
			{ $set: { ...fields, lastCardUpdate: { attemptId, outcome }, counted }, $push: { outbox: { $each: events } } },
			{ returnDocument: "after" },
		)
		.lean();
}

/** What follows the new card: the recovery counted, the old card's lock let go, the expiry warning and the schedule moved. */
async function afterCardWritten(
	deps: BillingDeps,
	customer: CustomerDoc,
	updated: CustomerDoc,
	{ recovery, at }: { recovery: PaidWithCard["recovery"]; at: Date },
) {
	// Counted by the one call that applied it (two tabs continuing at once both get this far).
	if (recovery)
		await noteRecovery(deps, at, {
			entered: [],
			recovered: [{ customer, amountMinor: recovery.owed.amountMinor, currency: recovery.owed.currency }],
		});
	if (updated.cardFingerprint !== customer.cardFingerprint && HOLDS_SUBSCRIPTION.includes(customer.status))
		await releaseLock(deps, customer);
	// The new card may expire before the next renewal (lists nothing when it does not, or when there is none).
	await listExpiryWarning(deps, updated, at);
	const next = recovery?.schedule.nextRenewalTimestamp;
	if (customer.nextRenewalTimestamp && next) await deps.renewals.remove(customer._id, customer.nextRenewalTimestamp, next);
}

/**
 * After a recovery charge: a customer that was retrying keeps its anchor (the
 * period it was in is paid; the next is due one period after that period's
 * date); a SUSPENDED one starts again from now, as a new first charge would,
 * so months of suspension are not charged at once.
 */
function resumedSchedule(customer: CustomerDoc, { product, bill }: OwedRenewal, now: Date): Partial<CustomerDoc> {
	const renewal = product.renewal!;
	const restart = customer.status === CustomerStatus.Suspended || !customer.billingAnchor;
	const anchor = restart ? now : customer.billingAnchor!;
	const periodsBilled = restart ? 1 : customer.periodsBilled + 1;
	const anchorPeriod = restart ? 0 : (customer.anchorPeriod ?? 0);
	const next = addPeriod(anchor, { every: renewal.every * (periodsBilled - anchorPeriod), unit: renewal.unit });
	// The plan the renewal billed (a waiting change applied, the credit spent); after a restart its period is derived
	// afresh from the new anchor (changes/customer-period.ts).
	const plan = bill.fields && restart && bill.fields.period ? { ...bill.fields, period: null } : (bill.fields ?? {});
	return {
		...plan,
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
