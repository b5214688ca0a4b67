// A customer's new card, from a card update session (docs/recovery.md#card-update).
// The checkout service has verified the card; here it becomes the customer's:
//   1. The customer's renewal lease is taken, so no renewal runs meanwhile (one
//      in flight is waited for): an update and a renewal never both charge.
//   2. The duplicate-subscription lock moves to the new card's fingerprint.
//   3. A customer who owes a renewal (retrying, or SUSPENDED after declines)
//      is charged it on the new card first. Declined: nothing changes.
//   4. The card, its MID and (after a recovery) the schedule are written in one
//      update with PAYMENT_METHOD_UPDATED (and REACTIVATION) in the outbox.
import type { ProductRecord } from "../../shared/contracts/accounts";
import {
	CardUpdateError,
	type CardUpdateInput,
	CardUpdateOutcome,
	type CardUpdateTarget,
	type CustomerView,
	type TransactionView,
} from "../../shared/contracts/billing";
import { leaseFree, newLease } from "../../shared/persistence";
import { withRetries } from "../../shared/processor-retries";
import { addPeriod } from "../../shared/time";
import { listExpiryWarning } from "./card-expiry";
import type { BillingDeps } from "./deps";
import type { CustomerDoc } from "./models";
import { listEvents, outboxEvent } from "./outbox";
import { noteRecovery } from "./recovery";
import { waitForRenewalInFlight } from "./renewal-lease";
import { CustomerStatus, TransactionType } from "./states";
import { claimLock, lockKey, releaseLock } from "./subscription-lock";
import { recordTransaction } from "./transaction-record";
import { toCustomerView, toTransactionView } from "./views";

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
		await waitForRenewalInFlight(deps, input.customerId);
	}
	return null;
}

type UpdateResult = { outcome: CardUpdateOutcome; customer: CustomerView; transaction: TransactionView | null } | CardUpdateError;

export async function updateCard(deps: BillingDeps, input: CardUpdateInput): Promise<UpdateResult> {
	const owner = `card-update:${input.attemptId}`;
	const customer = await claimForUpdate(deps, input, owner);
	if (!customer) return CardUpdateError.Busy;
	const held = { _id: customer._id, "renewalLease.owner": owner };
	try {
		if (!UPDATABLE.includes(customer.status)) return CardUpdateError.NotUpdatable;
		const product = await deps.productOf(customer.accountId, customer.productId);
		const lockOf = (fingerprint: string) =>
			lockKey({
				accountId: customer.accountId,
				product: { id: customer.productId },
				buyer: { email: customer.email },
				card: { fingerprint },
			});
		const sameCard = input.card.fingerprint === customer.cardFingerprint;
		// A SUSPENDED customer let its lock go: coming back, it takes one again, even for the same card.
		const needsLock = !sameCard || customer.status === CustomerStatus.Suspended;
		const newLock = needsLock && !product?.allowMultipleSubscriptions ? lockOf(input.card.fingerprint) : null;
		if (newLock && !(await claimLock(deps, newLock, customer._id))) return CardUpdateError.AlreadySubscribed;

		const card = {
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
		let schedule: Partial<CustomerDoc> = {};
		let transaction: TransactionView | null = null;
		const owed = owesRenewal(customer) && product?.renewal ? product : null;
		if (owed) {
			const charged = await chargeOwed(deps, { ...customer, ...card }, owed, input);
			transaction = toTransactionView(charged.transaction);
			if (charged.outcome !== "APPROVED") {
				// Nothing changes: the lock this update took is let go (a SUSPENDED customer holds none).
				if (newLock) await deps.db.subscriptionLocks.deleteOne({ _id: newLock, customerId: customer._id });
				const outcome = charged.outcome === "DECLINED" ? CardUpdateOutcome.RecoveryDeclined : CardUpdateOutcome.RecoveryFailed;
				return { outcome, customer: toCustomerView(customer), transaction };
			}
			schedule = resumedSchedule(deps, customer, owed);
			await deps.renewals.add(customer._id, schedule.nextRenewalTimestamp!);
			await noteRecovery(deps, deps.now(), {
				entered: [],
				recovered: [{ customer, amountMinor: owed.amountMinor, currency: owed.currency }],
			});
		}
		const events = [outboxEvent(deps, "PAYMENT_METHOD_UPDATED"), ...(owed ? [outboxEvent(deps, "REACTIVATION")] : [])];
		await listEvents(
			deps,
			events.map(event => ({ kind: "c" as const, docId: customer._id, event })),
		);
		const updated = await deps.db.customers
			.findOneAndUpdate(
				{ ...held, status: { $in: UPDATABLE } },
				{ $set: { ...card, ...schedule, renewalLease: null }, $push: { outbox: { $each: events } } },
				{ returnDocument: "after" },
			)
			.lean();
		// Unsubscribed meanwhile (an unsubscribe waits for the lease, so only before it was taken): nothing to change.
		if (!updated) return CardUpdateError.NotUpdatable;
		if (!sameCard && customer.status === CustomerStatus.Active) await releaseLock(deps, customer);
		// The new card may expire before the next renewal (lists nothing when it does not, or when there is none).
		await listExpiryWarning(deps, updated);
		if (customer.nextRenewalTimestamp && schedule.nextRenewalTimestamp)
			await deps.renewals.remove(customer._id, customer.nextRenewalTimestamp, schedule.nextRenewalTimestamp);
		return { outcome: owed ? CardUpdateOutcome.Recovered : CardUpdateOutcome.Updated, customer: toCustomerView(updated), transaction };
	} finally {
		await deps.db.customers.updateOne(held, { $set: { renewalLease: null } });
	}
}

/** The renewal owed, charged on the new card with one key per update attempt. */
async function chargeOwed(deps: BillingDeps, customer: CustomerDoc, product: ProductRecord, input: CardUpdateInput) {
	const key = `recovery:${customer._id}:${input.attemptId}`;
	const outcome = await withRetries(() =>
		deps.payments.charge({
			idempotencyKey: key,
			cardToken: customer.cardToken,
			amount: product.amountMinor,
			currency: product.currency,
			midId: customer.midId,
			initiator: "customer",
		}),
	);
	const type = customer.periodsBilled === 0 ? TransactionType.SubscriptionStart : TransactionType.Renewal;
	const transaction = await recordTransaction(deps, customer, product, type, key, outcome);
	return { outcome: outcome.status, transaction };
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
		status: CustomerStatus.Active,
		renewalActive: true,
		attempts: 0,
		billingAnchor: anchor,
		periodsBilled,
		lastTimeBilled: now,
		nextRenewalTimestamp: next,
	};
}
