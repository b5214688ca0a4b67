// One batch of a renewal cycle, in a few commands whatever its size: claim
// the batch (one update, one read), charge the claimed customers side by side
// (one processor call each, each with its own idempotency key), record their
// transactions (one listing of their events, one insert), move them on (one
// listing in their next slots, one bulk update, one removal from the old
// slots, but for those whose lease ended first), and hand the transactions to
// the outbox relay.
import { randomUUID } from "node:crypto";
import type { ProductRecord, RenewalTerms } from "../../../shared/contracts/accounts";
import { type CapReservation, DeclineCategory } from "../../../shared/contracts/billing";
import type { PaymentOutcome } from "../../../shared/contracts/payments";
import { declineCategory } from "../../../shared/decline-reasons";
import { withRetries } from "../../../shared/processor-retries";
import type { Listing } from "../../../shared/schedule";
import type { BillingDeps } from "../deps";
import { expiryListings } from "../expiry-warnings";
import { scheduledEvent } from "../outbox/outbox";
import type { RelayTargets } from "../outbox/outbox-relay";
import type { CustomerDoc } from "../records/customer";
import type { OutboxEvent } from "../records/outbox-event";
import type { BilledLine, TransactionDoc } from "../records/transaction";
import { claimRenewals, dueAsClaimed } from "../renewal-lease";
import { CustomerStatus, TransactionType } from "../states";
import { recordTransactions } from "../transaction-record";
import { droppable } from "../usage/final-usage";
import { type CapTracker, renewalMid, settleCaps } from "./mid-caps";
import { paidEarlier, withoutMid } from "./period-keys";
import { firstDecline, noteRecovery } from "./recovery";
import { nextRenewalAfter, type RenewalBill, renewalBill, renewalProductId } from "./renewal-bill";
import { endCancelled, letGo, slotStart, sortClaims } from "./renewal-claims";
import { renewalCounts } from "./renewal-metrics";
import { renewalUsage } from "./renewal-usage";
import { retryState } from "./retry-state";
import { suspend } from "./suspension";

export interface RenewalDeps extends BillingDeps {
	/** The product, the retry days and the group's MIDs (accounts.renewalTerms); null for a product gone. */
	termsOf(accountId: number, productId: number): Promise<RenewalTerms | null>;
	/** The cycle's view of the MIDs' monthly caps (mid-caps.ts). */
	caps: CapTracker;
	/**
	 * Resumes the paused customers whose resumeAt is due by the run's time and answers them (subscriptions/pause.ts:
	 * resumeDue, handed in by wiring/: the subscriptions' folder imports card updates, which import renewals).
	 */
	resumeDue(deps: BillingDeps, run: DueRun): Promise<number[]>;
	/**
	 * Ends, instead of charging, the claimed customers whose cancellation at the period's end has come, and answers
	 * those ended (subscriptions/period-end-cancel.ts: endScheduled, handed in by wiring/ for the same reason).
	 */
	endScheduled(deps: BillingDeps, customers: CustomerDoc[], owner: string): Promise<number[]>;
}

/** Which listings a cycle sends on: those due by `at` (of one account, or of sandbox accounts only for a future time). */
export interface DueRun {
	at: Date;
	accountId?: number;
	/** A run "in the future" (a test clock) acts on sandbox customers only, as it bills them only. */
	sandboxOnly: boolean;
	moveCursor: boolean;
	/** Read the schedule on from here (a test clock's later step). */
	readFrom?: Date;
}

export interface BatchOptions {
	/** The cycle's time: everything due at or before it is charged. */
	at: Date;
	/**
	 * When a claimed customer is charged, in its account's time: its account's now for the hourly cycle (an operator's
	 * run for a future time: that time); its due time, or the step's start when it fell due before, for a test clock's
	 * step (clock-run.ts).
	 */
	chargedAt(customer: CustomerDoc): Promise<Date>;
	/** This node's name; each batch's leases carry it. */
	owner: string;
	accountId?: number;
	leaseMs: number;
}

export interface CycleReport {
	charged: number;
	declined: number;
	suspended: number;
	/** Claimed by another node first, or no longer due. */
	skipped: number;
	/** CARD_EXPIRING warnings sent. */
	cardExpiryWarnings: number;
	/** Paused customers resumed at their resumeAt (subscriptions/pause.ts), before the renewals. */
	resumed: number;
	/** Subscriptions ended at their period's end, as scheduled (subscriptions/period-end-cancel.ts): not charged. */
	ended: number;
}

/** Processor calls in flight per batch: they are the slow part. */
const CONCURRENCY = 16;

export interface Claimed {
	customer: CustomerDoc;
	/** The batch's listings of it: its due slot, and any slot an earlier run left it in. */
	listings: Listing<number>[];
	/** When it is charged, in its account's time (BatchOptions.chargedAt). */
	at: Date;
}

interface Charged extends Claimed {
	terms: RenewalTerms;
	key: string;
	outcome: PaymentOutcome;
	/** What it billed: the card's part, the credit's, and the customer's plan after it (renewals/renewal-bill.ts). */
	bill: RenewalBill;
	/** Charged on another MID than the customer's (its own was inactive or capped): the customer moves to it. */
	movedTo?: { midId: number; midName: string };
	/** The MID cap's reservation of the charge (mid-caps.ts), kept or given back once the customer moved on. */
	reservation?: CapReservation | null;
}

/** A renewal the customer's credit pays in full: no processor call. */
const paidByCredit: PaymentOutcome = {
	status: "APPROVED",
	processorTransactionId: null,
	processorReference: null,
	reason: null,
	hardDecline: false,
};

async function charge(deps: RenewalDeps, { customer, at }: Claimed, product: ProductRecord, key: string, bill: RenewalBill) {
	const { amount } = bill;
	if (amount === 0) return paidByCredit;
	if (customer.authorizationId !== null) {
		// A hold is captured at what its renewal bills: the price less its coupon, with its tax (the hold was placed alike).
		return withRetries(() => deps.payments.capture({ idempotencyKey: key, authorizationId: customer.authorizationId!, amount }));
	}
	const money = {
		idempotencyKey: key,
		cardToken: customer.cardToken,
		amount,
		currency: product.currency,
		midId: customer.midId,
	};
	// Merchant-initiated, referring to the card's first payment or set-up: exempt from authentication.
	const reference = customer.networkTransactionId ? { networkTransactionId: customer.networkTransactionId } : {};
	return withRetries(() => deps.payments.charge({ ...money, ...reference, initiator: "merchant", at }));
}

/** Charges the claimed customers, `CONCURRENCY` at a time; one that fails stays claimed until its lease ends, for a later cycle. */
async function chargeAll(deps: RenewalDeps, claimed: Claimed[]): Promise<{ charged: Charged[]; noProduct: Claimed[] }> {
	const charged: Charged[] = [];
	const noProduct: Claimed[] = [];
	let next = 0;
	const worker = async () => {
		while (next < claimed.length) {
			const item = claimed[next++];
			// The processor or the accounts service is unavailable (null): the lease runs out and a later cycle asks with the same key.
			const result = await chargeOne(deps, item).catch(() => null);
			if (result === "noProduct") noProduct.push(item);
			else if (result) charged.push(result);
		}
	};
	await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, worker));
	return { charged, noProduct };
}

/** One claimed customer's renewal: its terms, the MID that takes it, the charge; "noProduct" when its product is gone. */
async function chargeOne(deps: RenewalDeps, item: Claimed): Promise<Charged | "noProduct"> {
	const terms = await deps.termsOf(item.customer.accountId, renewalProductId(item.customer));
	if (!terms) return "noProduct";
	// The usage of the period it closes goes on the same charge (docs/usage.md#billing).
	const bill = renewalBill(item.customer, terms.product, await renewalUsage(deps, item.customer, terms.product));
	// Derived from (customer, scheduled date, attempt): a node taking over asks again with it and gets the first outcome.
	const key = `renewal:${item.customer._id}:${item.customer.nextRenewalTimestamp!.toISOString()}:${item.customer.attempts}`;
	// The period's previous try approved after all (a request of it was still on its way): it pays the period.
	const earlier = await paidEarlier(deps, item.customer);
	if (earlier) return { ...item, terms, bill, ...earlier };
	const taken = await renewalMid(item.customer, terms, deps.caps, { amountMinor: bill.amount, key, at: item.at });
	if (!taken) return { ...item, terms, key, bill, outcome: await withoutMid(deps, key) };
	const { mid, reservation } = taken;
	const moved = mid.id !== item.customer.midId;
	const customer = moved ? { ...item.customer, midId: mid.id, midName: mid.name } : item.customer;
	const outcome = await charge(deps, { ...item, customer }, terms.product, key, bill);
	return { ...item, customer, terms, key, bill, outcome, reservation, ...(moved ? { movedTo: { midId: mid.id, midName: mid.name } } : {}) };
}

/** The customer's update after its charge, and where it is listed next. */
function nextState(item: Charged) {
	const { customer, outcome } = item;
	const { product } = item.terms;
	if (outcome.status === "APPROVED") {
		const periodsBilled = customer.periodsBilled + 1;
		const next = nextRenewalAfter(customer, product, item.bill);
		const billed = {
			...item.bill.fields,
			lastTimeBilled: item.at,
			periodsBilled,
			attempts: 0,
			refusedMids: [],
			firstDeclinedAt: null,
			lastTryKey: null,
			authorizationId: null,
			renewalLease: null,
		};
		// The schedule moves only if the customer is still ACTIVE (an unsubscribe may have landed meanwhile); else only the charge is noted.
		return {
			result: "charged" as const,
			listAt: next,
			ifActive: { ...item.movedTo, ...billed, nextRenewalTimestamp: next, renewalActive: next !== null },
			otherwise: billed,
		};
	}
	const retry = retryState(item, item.at);
	const lastTryKey = item.key;
	return retry.result === "declined" ? { ...retry, ifActive: { ...item.movedTo, ...retry.ifActive, lastTryKey } } : retry;
}

type NextState = ReturnType<typeof nextState>;

/** A charged customer on its way to its next state, while the batch (`lease`) holds it. */
interface Settling {
	item: Charged;
	lease: { _id: number; "renewalLease.owner": string };
	state: NextState;
}

/** One still ACTIVE after its charge: charged, or declined and to be retried. */
type Moving = Settling & { state: Exclude<NextState, { result: "suspended" }> };

/** Records the charges and moves each customer on: listed in its next slot first, updated in bulk, taken out of its old slots last. */
async function settleAll(deps: RenewalDeps, charged: Charged[], owner: string, report: CycleReport): Promise<RelayTargets> {
	const states: Settling[] = charged.map(item => ({
		item,
		lease: { _id: item.customer._id, "renewalLease.owner": owner },
		state: nextState(item),
	}));
	const transactions = await recordCharges(deps, states);
	await listNext(deps, states);
	const moving = states.flatMap(s => (s.state.result === "suspended" ? [] : [{ ...s, state: s.state }]));
	const asked = await authenticationRequests(deps, moving, transactions);
	const { relay: moved, stillDue } = await moveOn(deps, moving, asked);
	for (const { item, lease, state } of states) if (state.result === "suspended") await suspend(deps, item, lease, state.attempts);
	await deps.renewals.removeAll(states.filter(({ item }) => !stillDue.has(item.customer._id)).flatMap(oldSlots));
	await settleCaps(deps.caps, charged);
	for (const { state } of states) report[state.result]++;
	await noteRecoveries(deps, charged);
	return {
		transactions: charged.flatMap(item => transactions.get(item.key)?._id ?? []),
		customers: [...states.flatMap(({ item, state }) => (state.result === "suspended" ? [item.customer._id] : [])), ...moved],
	};
}

/** The batch's transactions, in a few commands, by their keys; a charged period ends at the next renewal. */
function recordCharges(deps: RenewalDeps, states: Settling[]): Promise<Map<string, TransactionDoc>> {
	const periodEnd = (line: BilledLine, state: NextState) => line.to ?? (state.result === "charged" ? state.listAt : null);
	return recordTransactions(
		deps,
		states.map(({ item, state }) => ({
			customer: { ...item.customer, productId: item.bill.productId },
			money: { ...item.terms.product, amountMinor: item.bill.amount },
			creditApplied: item.bill.creditUsed,
			discount: item.bill.discount,
			type: item.customer.periodsBilled === 0 ? TransactionType.SubscriptionStart : TransactionType.Renewal,
			renewalTry: firstDecline(item.customer) ? ("first" as const) : ("retry" as const),
			at: item.at,
			idempotencyKey: item.key,
			outcome: item.outcome,
			billed: { ...item.bill.billed, lines: item.bill.billed.lines.map(line => ({ ...line, to: periodEnd(line, state) })) },
		})),
	);
}

/** Each customer listed in its next slot (before anything else moves, so none is lost), and its card's expiry warning. */
async function listNext(deps: RenewalDeps, states: Settling[]): Promise<void> {
	await deps.renewals.addAll(states.flatMap(({ item, state }) => (state.listAt ? [{ id: item.customer._id, at: state.listAt }] : [])));
	// A renewal the card will have expired by is warned about beforehand (expiry-warnings.ts); a retry's date is not a renewal's.
	await deps.cardExpiry.addAll(
		states.flatMap(({ item, state }) =>
			state.result === "charged" ? expiryListings([{ ...item.customer, nextRenewalTimestamp: state.listAt }], item.at) : [],
		),
	);
}

/** The merchant hears of a renewal refused for want of authentication, naming it (docs/authentication.md). */
async function authenticationRequests(
	deps: RenewalDeps,
	moving: Moving[],
	transactions: Map<string, TransactionDoc>,
): Promise<Map<number, OutboxEvent>> {
	const asked = new Map<number, OutboxEvent>();
	for (const { item, state } of moving) {
		if (state.result !== "declined" || declineCategory(item.outcome) !== DeclineCategory.Authentication) continue;
		const transactionId = transactions.get(item.key)?._id ?? null;
		asked.set(item.customer._id, await scheduledEvent(deps, "c", item.customer._id, "AUTHENTICATION_REQUIRED", { transactionId }));
	}
	return asked;
}

/** The customers still ACTIVE move on in one bulk update, with what they count; the others let their lease go (stillDue: lost). */
async function moveOn(
	deps: RenewalDeps,
	moving: Moving[],
	asked: Map<number, OutboxEvent>,
): Promise<{ relay: number[]; stillDue: Set<number> }> {
	if (moving.length === 0) return { relay: [], stillDue: new Set() };
	const counts = await renewalCounts(
		deps,
		moving.map(({ item, state }) => ({ customer: item.customer, fields: state.ifActive, product: item.terms.product, at: item.at })),
	);
	const moved = await deps.db.customers.bulkWrite(
		moving.map(({ item, lease, state }) => {
			const { counted, event: metrics } = counts.get(item.customer._id)!;
			const events = [asked.get(item.customer._id), metrics].filter(event => event !== undefined && event !== null);
			const $set = { ...state.ifActive, counted };
			const update = events.length ? { $set, $push: { outbox: { $each: events } } } : { $set };
			return { updateOne: { filter: { ...lease, status: CustomerStatus.Active }, update } };
		}),
		// An update mongoose cannot cast fails the batch instead of being left out: its customer would stay unmoved.
		{ ordered: false, throwOnValidationError: true },
	);
	// Some were no longer ACTIVE: those still hold the lease, the others have let it go. Or the lease ended before the
	// answer came: those are still due as they were, and stay listed for the run that holds them now.
	let stillDue: number[] = [];
	if (moved.modifiedCount < moving.length) {
		// Only those no longer ACTIVE: one still ACTIVE and holding the lease keeps its period (and is charged again
		// under the same key by a later run), so a charge never counts a period the schedule did not move past.
		const notActive = { status: { $ne: CustomerStatus.Active } };
		await deps.db.customers.bulkWrite(
			moving.map(({ lease, state }) => ({ updateOne: { filter: { ...lease, ...notActive }, update: { $set: state.otherwise } } })),
			{ ordered: false, throwOnValidationError: true },
		);
		stillDue = await dueAsClaimed(
			deps,
			moving.map(({ item }) => item.customer),
		);
	}
	// Those whose events wait: the relay reads them (an unwritten event there is harmless).
	const relay = moving.flatMap(({ item }) =>
		asked.has(item.customer._id) || counts.get(item.customer._id)?.event ? [item.customer._id] : [],
	);
	return { relay, stillDue: new Set(stillDue) };
}

/** The slots a settled customer leaves: the one it was due in, and those the batch found it by if others. */
function oldSlots({ item, state }: Settling) {
	const scheduled = { id: item.customer._id, at: item.customer.nextRenewalTimestamp!, listedAt: state.listAt };
	const others = item.listings.filter(listing => listing.at.getTime() !== slotStart(scheduled.at));
	return [scheduled, ...others.map(listing => ({ ...listing, listedAt: state.listAt }))];
}

/** Counted in the month the batch charged in, in its accounts' time (its first charge's: a batch spans an hour at most). */
function noteRecoveries(deps: RenewalDeps, charged: Charged[]): Promise<void> {
	const approved = (item: Charged) => item.outcome.status === "APPROVED";
	if (charged.length === 0) return Promise.resolve();
	return noteRecovery(deps, charged[0].at, {
		entered: charged.filter(item => !approved(item) && firstDecline(item.customer)).map(item => item.customer),
		recovered: charged
			.filter(item => approved(item) && !firstDecline(item.customer))
			.map(item => ({ customer: item.customer, amountMinor: item.terms.product.amountMinor, currency: item.terms.product.currency })),
	});
}

/** Claims, charges and settles one batch of listed customers; answers whether another node held some of them. */
export async function renewBatch(
	deps: RenewalDeps,
	listings: Listing<number>[],
	options: BatchOptions,
	report: CycleReport,
): Promise<{ heldElsewhere: boolean }> {
	const owner = `${options.owner}/${randomUUID()}`;
	const now = deps.now();
	const docs = await claimRenewals(deps, {
		customerIds: listings.map(e => e.id),
		owner,
		at: options.at,
		leaseMs: options.leaseMs,
		accountId: options.accountId,
		// A cycle "in the future" is a test clock's: it never bills a production customer early.
		sandboxOnly: options.at.getTime() > now.getTime(),
	});
	const { claimed, stale, left, heldElsewhere } = sortClaims(listings, docs, owner, now, report);
	// An ended subscription listed for its final usage charge (usage/final-usage.ts) is charged now if still due.
	await deps.renewals.removeAll(await droppable(deps, left, docs));
	const due = await endCancelled(deps, claimed, owner, report);
	const timed = await Promise.all(due.map(async item => ({ ...item, at: await options.chargedAt(item.customer) })));
	const { charged, noProduct } = await chargeAll(deps, timed);
	await letGo(deps, [...stale, ...noProduct.map(item => item.customer._id)], owner, report);
	deps.relay(await settleAll(deps, charged, owner, report));
	return { heldElsewhere };
}
