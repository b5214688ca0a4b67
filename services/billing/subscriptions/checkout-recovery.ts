// Checkouts left PENDING by an outage or a crash. A checkout's first payment
// is three writes after the processor's answer (its transaction, the renewal
// listing, the customer's settlement); a database that goes away between them,
// or a node that dies, left the customer PENDING for good: the buyer charged
// (the answer was a 503) with no subscription, no CONVERSION, no renewals.
// Every checkout is listed by the time it opened (checkout_schedule); every
// billing node sweeps the listings older than the grace period
// (REFUND_RECOVERY_GRACE_MS, above REQUEST_TIMEOUT_MS, so its request is over)
// and settles a customer still PENDING by what the processor did with the
// first payment's key (`lookup`, never a new charge):
//   - approved or declined -> its transaction (once, by key) and ACTIVE or DECLINED, as the checkout would have
//   - never seen (the checkout stopped before paying, or before a SCHEDULE product's card was set up) -> ABANDONED, lock released
//   - unpaid either way -> its session released (sessions.release), as the checkout would have released it
// A card update paused for the buyer's challenge is listed too, at the challenge's end, and settled the same way;
// so is a change's charge whose node died (changes/change-recovery.ts).
// Settling is a compare-and-set on PENDING, so two nodes, or the checkout's own
// request still at work, settle a customer once. A listing is dropped once its
// customer is no longer PENDING (and listed again if a change was marked
// meanwhile); one that cannot be settled now stays for the next sweep.
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { CardUpdateOutcome, FirstPaymentOutcome } from "../../../shared/contracts/billing";
import { createSchedule, type Listing, type Schedule } from "../../../shared/schedule";
import { settleWithoutBuyer } from "../card-updates/card-update-challenge";
import { settleChangeInFlight } from "../changes/change-recovery";
import type { BillingDeps } from "../deps";
import type { BillingDb } from "../models";
import { laterIfUnknown } from "../payments";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";
import { abandonSubscription, firstPaymentKey, settleFirstPayment } from "./checkout-payments";

/** 10-second slots, 2 records each: a checkout is listed once and read once, a grace period later. */
export function createCheckoutSchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.checkoutSchedule, { slotMs: 10_000, shards: 2 });
}

const BILLING_KINDS = ["CHARGE", "PREAUTHORIZE", "SCHEDULE"] as const;

/** How late a listing's write may land (it waits for the database up to serverSelectionTimeoutMS, then retries). */
const LATE_LISTING_MS = 60_000;

export interface CheckoutRecoveryReport {
	activated: number;
	declined: number;
	abandoned: number;
	/** Changes whose charge was sent by a node that died: settled by the processor's answer to their key. */
	changes: number;
	/** Not settled now (database, accounts or processor unavailable): listed for the next sweep. */
	skipped: number;
}

export async function recoverCheckouts(
	deps: BillingDeps,
	options: { signal?: AbortSignal; onError?: (customerId: number, err: Error) => void } = {},
): Promise<CheckoutRecoveryReport> {
	const report: CheckoutRecoveryReport = { activated: 0, declined: 0, abandoned: 0, changes: 0, skipped: 0 };
	const now = deps.now();
	// A slot is read once its start is past the grace period; each checkout in it is judged by its own time. The
	// cursor stays LATE_LISTING_MS behind: a listing whose write waited out an outage lands in a slot of its past.
	const openedBefore = new Date(now.getTime() - deps.refundGraceMs);
	const due = await deps.checkouts.due(openedBefore, new Date(openedBefore.getTime() - LATE_LISTING_MS));
	for (const listing of due) {
		if (options.signal?.aborted) break;
		try {
			const settled = await recoverCheckout(deps, listing, openedBefore);
			if (settled === "later") continue;
			if (settled) report[settled]++;
			await unlist(deps, listing);
		} catch (err) {
			report.skipped++;
			options.onError?.(listing.id, err as Error);
		}
	}
	return report;
}

/**
 * Takes out a listing whose customer was settled, or had nothing to settle, when it was read. A change marked since
 * (changes/change-charge.ts) found the customer still listed in this slot, so its listing is this one: listed again.
 */
async function unlist(deps: BillingDeps, { id, at }: Listing<number>): Promise<void> {
	await deps.checkouts.remove(id, at);
	if (await deps.db.customers.exists({ _id: id, changeInFlight: { $ne: null } })) await deps.checkouts.add(id, at);
}

/**
 * Settles one listed checkout; null when there is nothing to do (no longer PENDING, or never opened), "later" when
 * its request may still be at work (opened within the grace period). Throws when it cannot decide now.
 */
async function recoverCheckout(
	deps: BillingDeps,
	{ id: customerId, at: listedIn }: Listing<number>,
	openedBefore: Date,
): Promise<Recovered> {
	const customer = await deps.db.customers.findById(customerId).lean();
	// Listed just before the customer is written: a young listing without its customer is a checkout still opening.
	if (!customer) return listedIn.getTime() < openedBefore.getTime() - LATE_LISTING_MS ? null : "later";
	// A change's charge whose node died (changes/change-charge.ts).
	if (customer.changeInFlight) return settleChangeInFlight(deps, customer, openedBefore);
	// A card update paused for a challenge is listed at the challenge's end: its buyer never came back.
	if (customer.awaitingCardUpdate) return settleCardUpdate(deps, customer, openedBefore);
	if (customer.status !== CustomerStatus.Pending) return null;
	if (customer.createdAt > openedBefore) return "later";
	const product = await deps.productOf(customer.accountId, customer.productId);
	// Without an attempt nothing was charged.
	const { attemptId } = customer;
	const settled = !product || !attemptId ? await abandon(deps, customerId) : await settleByProcessor(deps, customer, product, attemptId);
	// Unpaid, with no checkout left to answer: its session is released as the checkout would have (past its end it
	// reads EXPIRED, not USED). Only the attempt that consumed it can release it.
	if (attemptId && (settled === "declined" || settled === "abandoned"))
		await deps.releaseSession({ sessionId: customer.sessionId, attemptId });
	return settled;
}

type Recovered = keyof Omit<CheckoutRecoveryReport, "skipped"> | "later" | null;

/** Settled by what the processor did with the checkout's first payment; abandoned when it has no record of one. */
async function settleByProcessor(deps: BillingDeps, customer: CustomerDoc, product: ProductRecord, attemptId: string): Promise<Recovered> {
	// A charge, a hold or a set-up, the product's billing kind first, whatever it is now (it may have changed since).
	const kinds = [product.billing, ...BILLING_KINDS.filter(billing => billing !== product.billing)];
	for (const billing of kinds) {
		const key = firstPaymentKey(attemptId, billing);
		// Still being decided (a challenge still open), or its processor unreachable now: the next sweep asks again.
		const outcome = await deps.payments.lookup(key).catch(laterIfUnknown);
		if (outcome === "later" || outcome?.status === "ERROR") return "later";
		if (!outcome) continue;
		const settled = await settleFirstPayment(deps, customer, { ...product, billing }, key, outcome, customer.subscriptionTimestamp);
		// A sweep, not an action: it kicks the relay itself with what it wrote, as soon as it wrote it.
		deps.relay(settled.toRelay);
		return settled.answer.outcome === FirstPaymentOutcome.Active ? "activated" : "declined";
	}
	return abandon(deps, customer._id);
}

/** PENDING -> ABANDONED with its lock released; null when another settled it first. */
async function abandon(deps: BillingDeps, customerId: number): Promise<"abandoned" | null> {
	return typeof (await abandonSubscription(deps, { customerId })) === "object" ? "abandoned" : null;
}

/** A card update whose buyer left during the challenge: settled by what the processor did (card-update-challenge.ts). */
async function settleCardUpdate(deps: BillingDeps, customer: CustomerDoc, openedBefore: Date): Promise<"later" | null> {
	const awaiting = customer.awaitingCardUpdate!;
	if (new Date(awaiting.until) > openedBefore) return "later";
	const settled = await settleWithoutBuyer(deps, customer._id, awaiting).catch(laterIfUnknown);
	return settled === "later" || (typeof settled === "object" && settled.outcome === CardUpdateOutcome.AwaitingBuyer) ? "later" : null;
}
