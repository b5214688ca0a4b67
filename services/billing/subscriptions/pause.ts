// POST /api/customer/{id}/pause and /resume (docs/subscriptions.md#pause-and-resume).
//   - Pausing moves an ACTIVE customer to PAUSED while holding its renewal lease
//     (renewal-lease.ts), so no renewal is in flight when it does, and none can
//     be claimed after (a claim takes only ACTIVE customers): once a pause has
//     answered, nothing is charged until the resume. The renewal that was due
//     (`dueAt`) is kept with the pause.
//   - Resuming moves it back to ACTIVE with the paid time left at the pause:
//     next renewal = resume + (dueAt - pausedAt); the schedule restarts from
//     there (billingAnchor, anchorPeriod). A pause with a `resumeAt` is listed
//     by the hour of that time in the resume schedule (shared/schedule.ts) and
//     resumed at it by the renewal cycle, the test clock's included.
//   - Each move writes its event (SUBSCRIPTION_PAUSED, SUBSCRIPTION_RESUMED) in
//     the same update as the status, with the dates it announces.
import { randomUUID } from "node:crypto";
import type { CustomerView } from "../../../shared/contracts/billing";
import { leaseFree, newLease, ownedBy } from "../../../shared/persistence";
import { createSchedule, type Listing, type Schedule } from "../../../shared/schedule";
import type { BillingDeps } from "../deps";
import { countUpdate } from "../entries/customer-entry";
import { carrying } from "../entries/metrics-entries";
import { expiryListings } from "../expiry-warnings";
import { customerMove } from "../lifecycle";
import type { BillingDb } from "../models";
import { scheduledEvent } from "../outbox/outbox";
import type { CustomerDoc } from "../records/customer";
import { type Actor, byWhom } from "../records/outbox-event";
import { waitForRenewalInFlight } from "../renewal-lease";
import { CustomerStatus } from "../states";
import { toCustomerView } from "../views";

export enum PauseError {
	NotFound = "CUSTOMER_NOT_FOUND",
	/** PENDING, DECLINED, ABANDONED or UNSUBSCRIBED: no subscription running to pause. */
	NotActive = "NOT_ACTIVE",
	/** SUSPENDED: no renewal runs; a card update reactivates it. */
	Suspended = "SUSPENDED",
	AlreadyPaused = "ALREADY_PAUSED",
	NotPaused = "NOT_PAUSED",
	/** A one-off product's customer: nothing renews. */
	NoRenewal = "NO_RENEWAL",
	/** Declined renewals being retried: the retry days count from the first decline and cannot be kept across a pause. */
	InRecovery = "IN_RECOVERY",
	/** A PREAUTHORIZE trial's hold, not yet captured: it lapses at the issuer about 7 days after checkout. */
	HoldPending = "HOLD_PENDING",
	/** A card update waits for the buyer's challenge on its payment. */
	CardUpdateInProgress = "CARD_UPDATE_IN_PROGRESS",
	/** A change waits for the period's end (changes/): the resume restarts the period, which would lose it. */
	ChangePending = "CHANGE_PENDING",
	/** A cancellation is scheduled for the period's end (period-end-cancel.ts): one thing happens at a period's end. */
	CancellationScheduled = "PAUSE_CANCELLATION_SCHEDULED",
	/** Another billing node kept the customer's renewal lease through every try. */
	Busy = "BUSY",
	ResumeAtPast = "RESUME_AT_PAST",
	ResumeAtTooFar = "RESUME_AT_TOO_FAR",
}

/** A pause lasts at most a year: a resumeAt further ahead is refused (the merchant may pause without one). */
export const MAX_PAUSE_MS = 366 * 24 * 3_600_000;
const HOUR_MS = 3_600_000;
/** The lease a pause holds for its one update: far longer than that takes. */
const PAUSE_LEASE_MS = 10_000;
const CLAIM_TRIES = 3;

/** Paused customers by the hour of their resumeAt, 8 records a slot. */
export function createResumeSchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.resumeSchedule, { slotMs: HOUR_MS, shards: 8 });
}

const PAUSE = customerMove(CustomerStatus.Active, CustomerStatus.Paused);
const RESUME = customerMove(CustomerStatus.Paused, CustomerStatus.Active);

/** Why this customer cannot be paused now, or null. */
function pauseRefusal(customer: CustomerDoc): PauseError | null {
	if (customer.status === CustomerStatus.Paused) return PauseError.AlreadyPaused;
	if (customer.status === CustomerStatus.Suspended) return PauseError.Suspended;
	if (customer.status !== CustomerStatus.Active) return PauseError.NotActive;
	if (customer.awaitingCardUpdate) return PauseError.CardUpdateInProgress;
	if (!customer.renewalActive || !customer.nextRenewalTimestamp) return PauseError.NoRenewal;
	if (customer.attempts > 0 || (customer.refusedMids?.length ?? 0) > 0) return PauseError.InRecovery;
	if (customer.authorizationId !== null) return PauseError.HoldPending;
	if (customer.period?.pending) return PauseError.ChangePending;
	if (customer.cancellation) return PauseError.CancellationScheduled;
	return null;
}

function resumeAtRefusal(resumeAt: Date | null, now: Date): PauseError | null {
	if (resumeAt === null) return null;
	if (resumeAt.getTime() <= now.getTime()) return PauseError.ResumeAtPast;
	return resumeAt.getTime() > now.getTime() + MAX_PAUSE_MS ? PauseError.ResumeAtTooFar : null;
}

export async function pauseCustomer(
	deps: BillingDeps,
	input: { accountId: number; id: number; resumeAt?: string; by?: Actor },
): Promise<CustomerView | PauseError> {
	const resumeAt = input.resumeAt ? new Date(input.resumeAt) : null;
	// An unknown customer is a 404 before the resumeAt's 409: the request names nothing of this account.
	const first = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
	if (!first) return PauseError.NotFound;
	// Judged, and paused, at the account's now (a sandbox's test clock).
	const at = await deps.clocks.now(input.accountId);
	const refused = resumeAtRefusal(resumeAt, at);
	if (refused) return refused;
	const owner = `pause/${randomUUID()}`;
	for (let tries = 0; tries < CLAIM_TRIES; tries++) {
		const customer = await claimForPause(deps, input, owner);
		if (typeof customer === "string") return customer;
		if (customer === null) {
			// A renewal (or a card update) holds the lease: wait for it, then look again at what it left.
			await waitForRenewalInFlight(deps, input.id);
			continue;
		}
		const paused = await markPaused(deps, customer, owner, { pausedAt: at, resumeAt, by: input.by });
		if (paused) return toCustomerView(paused);
	}
	return PauseError.Busy;
}

/**
 * Takes the renewal lease of a customer that may be paused: no renewal is in flight while the pause holds it. Null
 * when another holds it; the refusal when the customer may not be paused.
 */
async function claimForPause(
	deps: BillingDeps,
	input: { accountId: number; id: number },
	owner: string,
): Promise<CustomerDoc | PauseError | null> {
	const customer = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
	if (!customer) return PauseError.NotFound;
	const refused = pauseRefusal(customer);
	if (refused) return refused;
	const now = deps.now();
	const claimed = await deps.db.customers
		.findOneAndUpdate(
			{ _id: customer._id, ...PAUSE.filter, ...leaseFree("renewalLease", now) },
			{ $set: { renewalLease: newLease(owner, now, PAUSE_LEASE_MS) } },
			{ returnDocument: "after" },
		)
		.lean();
	if (!claimed) return null;
	// Read again under the lease: a renewal that ended just before may have moved it.
	const late = pauseRefusal(claimed);
	if (late) {
		await letGo(deps, claimed._id, owner);
		return late;
	}
	return claimed;
}

async function letGo(deps: BillingDeps, customerId: number, owner: string): Promise<void> {
	await deps.db.customers.updateOne({ _id: customerId, "renewalLease.owner": owner }, { $set: { renewalLease: null } });
}

/** ACTIVE -> PAUSED under the pause's lease, with SUBSCRIPTION_PAUSED, letting the lease go in the same update. */
async function markPaused(
	deps: BillingDeps,
	customer: CustomerDoc,
	owner: string,
	{ pausedAt, resumeAt, by }: { pausedAt: Date; resumeAt: Date | null; by?: Actor },
): Promise<CustomerDoc | null> {
	// Listed before the update, as every schedule is (shared/schedule.ts).
	if (resumeAt) await deps.resumes.add(customer._id, resumeAt);
	const { counted, entry } = await countUpdate(deps, customer, { status: CustomerStatus.Paused }, { at: pausedAt });
	const event = await scheduledEvent(deps, "c", customer._id, "SUBSCRIPTION_PAUSED", {
		pause: { pausedAt, resumeAt },
		...carrying(entry),
		...byWhom(by),
	});
	const updated = await deps.db.customers
		.findOneAndUpdate(
			{ _id: customer._id, "renewalLease.owner": owner, ...PAUSE.filter },
			{
				$set: {
					...PAUSE.set,
					pause: { pausedAt, resumeAt, dueAt: customer.nextRenewalTimestamp! },
					renewalActive: false,
					nextRenewalTimestamp: null,
					renewalLease: null,
					counted,
				},
				$push: { outbox: event },
			},
			{ returnDocument: "after" },
		)
		.lean();
	if (!updated) await letGo(deps, customer._id, owner);
	// The renewal listing it leaves is dropped by the next cycle that reads it (a PAUSED customer is never claimed).
	return updated;
}

export async function resumeCustomer(
	deps: BillingDeps,
	input: { accountId: number; id: number; by?: Actor },
): Promise<CustomerView | PauseError> {
	const customer = ownedBy(await deps.db.customers.findById(input.id).lean(), input.accountId);
	if (!customer) return PauseError.NotFound;
	if (customer.status !== CustomerStatus.Paused || !customer.pause) return PauseError.NotPaused;
	const resumed = await resume(deps, customer, await deps.clocks.now(input.accountId), input.by);
	// Resumed meanwhile (its resumeAt came), or unsubscribed: answered as it is now.
	if (!resumed) return resumeCustomer(deps, input);
	return toCustomerView(resumed);
}

/** The next renewal after a resume at `at`: the time that was left at the pause, counted from the resume (never negative). */
export function renewalAfterResume(pause: NonNullable<CustomerDoc["pause"]>, at: Date): Date {
	const left = Math.max(0, pause.dueAt.getTime() - pause.pausedAt.getTime());
	return new Date(at.getTime() + left);
}

/** PAUSED -> ACTIVE at `at` (the account's time), with SUBSCRIPTION_RESUMED; null when it is no longer this pause. */
async function resume(deps: BillingDeps, customer: CustomerDoc, at: Date, by?: Actor): Promise<CustomerDoc | null> {
	const pause = customer.pause!;
	const next = renewalAfterResume(pause, at);
	// Listed before the update; never behind now, where the renewal schedule's cursor may already be.
	await deps.renewals.add(customer._id, new Date(Math.max(next.getTime(), deps.now().getTime())));
	await deps.cardExpiry.addAll(expiryListings([{ ...customer, nextRenewalTimestamp: next }], at));
	const { counted, entry } = await countUpdate(deps, customer, { status: CustomerStatus.Active }, { at });
	const event = await scheduledEvent(deps, "c", customer._id, "SUBSCRIPTION_RESUMED", {
		resume: { resumedAt: at, nextRenewalTimestamp: next },
		...carrying(entry),
		...byWhom(by),
	});
	return deps.db.customers
		.findOneAndUpdate(
			{ _id: customer._id, ...RESUME.filter, "pause.pausedAt": pause.pausedAt },
			{
				$set: {
					...RESUME.set,
					pause: null,
					renewalActive: true,
					nextRenewalTimestamp: next,
					// The period restarts at the resume's renewal: period n is due at it + (n - periodsBilled) periods.
					billingAnchor: next,
					anchorPeriod: customer.periodsBilled,
					// A change's stored period (changes/) no longer ends at the renewal: it is derived from the anchor.
					period: null,
					counted,
				},
				$push: { outbox: event },
			},
			{ returnDocument: "after" },
		)
		.lean();
}

export interface ResumeRun {
	at: Date;
	accountId?: number;
	/** A run "in the future" (a test clock) resumes sandbox customers only, as it bills them only. */
	sandboxOnly: boolean;
	moveCursor: boolean;
	/** Read the schedule on from here (a test clock's later step). */
	readFrom?: Date;
}

const slotOf = (at: Date) => Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;

/** Resumes the customers whose resumeAt is due by the run's time, each at its resumeAt; answers those resumed. */
export async function resumeDue(deps: BillingDeps, run: ResumeRun): Promise<number[]> {
	const due = await deps.resumes.due(run.at, deps.now(), { moveCursor: run.moveCursor, from: run.readFrom });
	if (due.length === 0) return [];
	const customers = new Map(
		(await deps.db.customers.find({ _id: { $in: [...new Set(due.map(e => e.id))] } }).lean()).map(c => [c._id, c] as const),
	);
	const resumed: number[] = [];
	const done: Listing<number>[] = [];
	for (const listing of due) {
		const customer = customers.get(listing.id);
		const resumeAt = customer?.status === CustomerStatus.Paused ? customer.pause?.resumeAt : null;
		// Gone, resumed or unsubscribed already, or paused again with another date: this listing is done.
		if (!customer || !resumeAt || slotOf(resumeAt) !== listing.at.getTime()) {
			done.push(listing);
			continue;
		}
		if (!inThisRun(customer, run) || resumeAt.getTime() > run.at.getTime()) continue;
		if (await resume(deps, customer, resumeAt)) resumed.push(customer._id);
		done.push(listing);
	}
	await deps.resumes.removeAll(done);
	return resumed;
}

function inThisRun(customer: CustomerDoc, run: ResumeRun): boolean {
	if (run.accountId !== undefined && customer.accountId !== run.accountId) return false;
	return !run.sandboxOnly || customer.environment === "sandbox";
}
