// The duplicate-subscription check (spec step 4): one lock record per
// (account, product, email, card fingerprint), held while the subscription is
// PENDING, ACTIVE or PAUSED, taken over once its holder has ended or died mid-checkout.

import { sha256Hex } from "../../shared/crypto";
import { insertOnce } from "../../shared/persistence";
import type { BillingDeps } from "./deps";
import type { CustomerDoc } from "./records/customer";
import { CustomerStatus, HOLDS_SUBSCRIPTION } from "./states";

export interface LockOwner {
	accountId: number;
	product: { id: number };
	buyer: { email: string };
	card: { fingerprint: string };
}

/** A PENDING checkout older than this died mid-way; its duplicate-check lock may be taken over. */
const STALE_PENDING_MS = 10 * 60 * 1000;

/** A PENDING customer older than this belongs to a checkout that died mid-way. */
export function isStalePending(deps: Pick<BillingDeps, "now">, customer: Pick<CustomerDoc, "status" | "createdAt">): boolean {
	return customer.status === CustomerStatus.Pending && deps.now().getTime() - customer.createdAt.getTime() > STALE_PENDING_MS;
}

export function lockKey(input: LockOwner): string {
	return sha256Hex([input.accountId, input.product.id, input.buyer.email.toLowerCase(), input.card.fingerprint].join("|"));
}

/** Claims the (product, email, card) lock for a new customer; false when a live subscription holds it. */
export async function claimLock(deps: BillingDeps, key: string, customerId: number): Promise<boolean> {
	if (await insertOnce(deps.db.subscriptionLocks, { _id: key, customerId, createdAt: deps.now() })) return true;
	const lock = await deps.db.subscriptionLocks.findById(key).lean();
	if (!lock) return claimLock(deps, key, customerId);
	const holder = await deps.db.customers.findById(lock.customerId, { status: 1, createdAt: 1 }).lean();
	// The lock is taken before its customer is written: a holder not written yet is a checkout in progress.
	const alive = holder
		? HOLDS_SUBSCRIPTION.includes(holder.status) && !isStalePending(deps, holder)
		: deps.now().getTime() - lock.createdAt.getTime() <= STALE_PENDING_MS;
	if (alive) return false;
	// The holder ended without releasing (or died mid-checkout): take the lock over, atomically.
	const taken = await deps.db.subscriptionLocks.updateOne(
		{ _id: key, customerId: lock.customerId },
		{ $set: { customerId, createdAt: deps.now() } },
	);
	return taken.modifiedCount === 1;
}

/** The customer's lock, by its key (only while this customer holds it: another may have taken it over). */
export async function releaseLock(
	deps: BillingDeps,
	customer: Pick<CustomerDoc, "_id" | "accountId" | "productId" | "email" | "cardFingerprint">,
): Promise<void> {
	const key = lockKey({
		accountId: customer.accountId,
		product: { id: customer.productId },
		buyer: { email: customer.email },
		card: { fingerprint: customer.cardFingerprint },
	});
	await deps.db.subscriptionLocks.deleteOne({ _id: key, customerId: customer._id });
}
