// The renewal cycle: every customer due at the cycle's time is charged once,
// on however many billing nodes run the cycle at the same moment.
//   - Due customers are found by key, in the hour slots of the renewal schedule
//     (renewal-schedule.ts), then read by _id: no search of the customers.
//   - Customers are renewed in batches (renewal-batch.ts), a few commands per
//     batch. A node charges a customer only while holding its renewal lease,
//     claimed by compare-and-set (renewal-lease.ts); the others skip it.
//   - The processor's idempotency key is derived from (customer, scheduled
//     date, attempt): a node that takes over after another died mid-charge
//     asks with the same key and gets the first outcome, never a second charge.
//   - Period n is due at billingAnchor + n periods (calendar arithmetic in
//     TIME_ZONE), so 31 Jan -> 28/29 Feb -> 31 Mar, and a missed cycle is caught up.
//   - A soft decline is retried on the account's retry days, a MID's refusal
//     on another MID of the group; a hard decline or the last retry suspends
//     the customer (retry-state.ts, docs/recovery.md).
// The same engine makes SCHEDULE products' first charge and captures
// PREAUTHORIZE holds when the trial ends. Before the renewals, it resumes the
// paused customers whose resumeAt has come (subscriptions/pause.ts, through
// its deps), so a renewal the resume makes due is charged in the same cycle.
import type { Listing } from "../../../shared/schedule";
import type { BillingDeps } from "../deps";
import { warnExpiringCards } from "../expiry-warnings";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";
import { type CycleReport, type DueRun, type RenewalDeps, renewBatch } from "./renewal-batch";

export type { CycleReport, RenewalDeps } from "./renewal-batch";

export interface CycleOptions {
	/** The cycle's time: everything due at or before it is charged. */
	at: Date;
	/**
	 * A test clock's step starts here (clock-run.ts): each customer is charged at its due time, or here when it fell due
	 * before. Without it, each is charged at its account's now, or at `at` when later (chargeTimes).
	 */
	from?: Date;
	/** A test clock's later step reads its schedules on from here: the steps before it read the slots before. */
	readFrom?: Date;
	/** This node's name, written on the leases it holds. */
	owner: string;
	/** Only this account's customers (the sandbox test clock). */
	accountId?: number;
	batchSize?: number;
	leaseMs?: number;
	/** Aborted when the node drains: no new batch is claimed; the one held is finished. */
	signal?: AbortSignal;
	/** This node's share of the work among the billing nodes running the cycle (see below). */
	share?: { index: number; count: number };
}

/**
 * When a claimed customer is charged (renewal-batch.ts: BatchOptions.chargedAt): a test clock's step, at its due time
 * (or the step's start); another cycle, at its account's now, or at the cycle's time when later (an operator's run
 * for a future time charges sandbox customers as of then).
 */
function chargeTimes(deps: RenewalDeps, { at, from }: CycleOptions): (customer: CustomerDoc) => Promise<Date> {
	const later = (a: Date, b: Date) => new Date(Math.max(a.getTime(), b.getTime()));
	if (from) return async customer => later(customer.nextRenewalTimestamp!, from);
	return async customer => later(await deps.clocks.now(customer.accountId), at);
}

/** Customers claimed, charged and settled together. */
const DEFAULT_BATCH = 200;
const DEFAULT_LEASE_MS = 60_000;

/** The listings from a random place on, wrapping around: nodes reading the same listings start on different customers. */
function fromRandomStart<T>(items: T[]): T[] {
	const start = Math.floor(Math.random() * items.length);
	return [...items.slice(start), ...items.slice(0, start)];
}

export async function runRenewalCycle(deps: RenewalDeps, options: CycleOptions): Promise<CycleReport> {
	const report: CycleReport = { charged: 0, declined: 0, suspended: 0, skipped: 0, cardExpiryWarnings: 0, resumed: 0, ended: 0 };
	const now = deps.now();
	// Only the hourly cycle moves the schedule's cursor: a run for one account or for a future time leaves work behind it.
	const moveCursor = options.accountId === undefined && options.at.getTime() <= now.getTime();
	report.resumed = await sendDue(deps, options, { now, moveCursor }, deps.resumeDue);
	await renewDue(deps, options, { now, moveCursor }, report);
	if (!options.signal?.aborted) report.cardExpiryWarnings = await sendDue(deps, options, { now, moveCursor }, warnExpiringCards);
	return report;
}

interface CycleRun {
	now: Date;
	moveCursor: boolean;
}

/** A listing: a customer in one hour slot. */
const listingOf = (listing: Listing<number>) => `${listing.id}@${listing.at.getTime()}`;

/** Renews what the listings show due, reading them again until nothing new is due (or the node drains). */
async function renewDue(deps: RenewalDeps, options: CycleOptions, run: CycleRun, report: CycleReport): Promise<void> {
	// Each listing is looked at once per cycle; a customer charged for a missed period is listed again in a later slot.
	const seen = new Set<string>();
	while (!options.signal?.aborted) {
		const listed = await deps.renewals.due(options.at, run.now, { moveCursor: run.moveCursor, from: options.readFrom });
		const listings = listed.filter(e => !seen.has(listingOf(e)));
		if (listings.length === 0) break;
		await renewInBatches(deps, inRenewalOrder(listings, options.share), options, seen, report);
	}
}

/**
 * Nodes read the same listings. Each first renews its own share (customer id modulo the number of nodes), which no
 * other node touches then; after that it helps with what is left, from a random start.
 */
function inRenewalOrder(listings: Listing<number>[], share: CycleOptions["share"]): Listing<number>[] {
	const { index, count } = share ?? { index: 0, count: 1 };
	const mine = count > 1 ? listings.filter(e => e.id % count === index) : [];
	return mine.length > 0 ? mine : fromRandomStart(listings);
}

/**
 * Renews the listings batch by batch. A batch that meets customers another node holds means this node has reached
 * another's part: it stops, and the listings are read again, which then leave out what was renewed.
 */
async function renewInBatches(
	deps: RenewalDeps,
	ordered: Listing<number>[],
	options: CycleOptions,
	seen: Set<string>,
	report: CycleReport,
): Promise<void> {
	const batchOptions = {
		at: options.at,
		chargedAt: chargeTimes(deps, options),
		owner: options.owner,
		accountId: options.accountId,
		leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
	};
	const batchSize = options.batchSize ?? DEFAULT_BATCH;
	for (let from = 0; from < ordered.length && !options.signal?.aborted; from += batchSize) {
		const batch = ordered.slice(from, from + batchSize);
		for (const listing of batch) seen.add(listingOf(listing));
		const { heldElsewhere } = await renewBatch(deps, batch, batchOptions, report);
		if (heldElsewhere) return;
	}
}

/**
 * What a schedule beside the renewals has due by the cycle's time (resumes of paused customers, CARD_EXPIRING
 * warnings), done and the customers' events handed to the relay; answers how many.
 */
async function sendDue(
	deps: RenewalDeps,
	options: CycleOptions,
	run: CycleRun,
	due: (deps: RenewalDeps, by: DueRun) => Promise<number[]>,
): Promise<number> {
	const customers = await due(deps, {
		at: options.at,
		accountId: options.accountId,
		sandboxOnly: options.at > run.now,
		moveCursor: run.moveCursor,
		readFrom: options.readFrom,
	});
	if (customers.length) deps.relay({ customers });
	return customers.length;
}

/** Ops: what the renewal engine has in front of it right now. */
export async function renewalStatus(
	deps: BillingDeps,
	input: { at?: Date },
): Promise<{ due: number; inFlight: number; suspended: number }> {
	const now = deps.now();
	const [due, inFlight, suspended] = await Promise.all([
		deps.db.customers.countDocuments({
			status: CustomerStatus.Active,
			renewalActive: true,
			nextRenewalTimestamp: { $lte: input.at ?? now },
		}),
		deps.db.customers.countDocuments({ "renewalLease.until": { $gt: now } }),
		deps.db.customers.countDocuments({ status: CustomerStatus.Suspended }),
	]);
	return { due, inFlight, suspended };
}
