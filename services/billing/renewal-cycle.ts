// The renewal cycle: every customer due at the cycle's time is charged once,
// on however many billing nodes run the cycle at the same moment.
//   - Due customers are found by key, in the hour slots of the renewal schedule
//     (renewal-schedule.ts), then read by _id: no search of the customers.
//   - A node charges a customer only while holding its renewal lease, claimed
//     by compare-and-set (renewal-lease.ts); the others skip it.
//   - The processor's idempotency key is derived from (customer, scheduled
//     date, attempt): a node that takes over after another died mid-charge
//     asks with the same key and gets the first outcome, never a second charge.
//   - Period n is due at billingAnchor + n periods (calendar arithmetic in
//     TIME_ZONE), so 31 Jan -> 28/29 Feb -> 31 Mar, and a missed cycle is caught up.
//   - A decline is retried every RENEWAL_RETRY_HOURS up to RENEWAL_MAX_ATTEMPTS;
//     a hard decline or the last attempt suspends the customer.
// The same engine makes SCHEDULE products' first charge and captures
// PREAUTHORIZE holds when the trial ends.
import type { ProductRecord } from "../../shared/contracts/accounts";
import type { DueEntry } from "../../shared/schedule";
import { addPeriod } from "../../shared/time";
import type { BillingDeps } from "./deps";
import type { CustomerDoc } from "./models";
import { outboxEvent } from "./outbox";
import { withRetries } from "./processor-retries";
import type { ProcessorOutcome } from "./processors/payment-processor";
import { claimRenewal } from "./renewal-lease";
import { CustomerStatus, TransactionType } from "./states";
import { releaseLock } from "./subscription-lock";
import { recordTransaction } from "./transaction-record";

/** What a renewal needs of its product (accounts.getProduct). */
export type RenewalProduct = Pick<ProductRecord, "amountMinor" | "currency" | "currencyId" | "renewal">;

export interface RenewalDeps extends BillingDeps {
	productOf(accountId: number, productId: number): Promise<RenewalProduct | null>;
	retryHours: number;
	maxAttempts: number;
}

export interface CycleOptions {
	/** The cycle's time: everything due at or before it is charged. */
	at: Date;
	/** This node's name, written on the leases it holds. */
	owner: string;
	/** Only this account's customers (the sandbox test clock). */
	accountId?: number;
	batchSize?: number;
	leaseMs?: number;
	/** Aborted when the node drains: no new customer is claimed; the ones held are finished. */
	signal?: AbortSignal;
}

export interface CycleReport {
	charged: number;
	declined: number;
	suspended: number;
	/** Claimed by another node first, or no longer due. */
	skipped: number;
}

/** Due customers read per query (by their ids). */
const DEFAULT_BATCH = 500;
const DEFAULT_LEASE_MS = 60_000;
/** Work in flight per node: the processor calls are the slow part. */
const CONCURRENCY = 8;

/** What the cycle does with a listed customer: charge it, drop a listing it has left, or leave it to another cycle or node. */
function listingState(
	customer: CustomerDoc | undefined,
	entry: DueEntry<number>,
	options: CycleOptions,
	now: Date,
): "due" | "left" | "notNow" {
	// A checkout still paying, or a node holding the customer: its listing may be changing; leave it.
	if (customer?.status === CustomerStatus.Pending) return "notNow";
	if (customer?.renewalLease && customer.renewalLease.until.getTime() > now.getTime()) return "notNow";
	const listedAt = slotStart(customer?.nextRenewalTimestamp);
	if (!customer || customer.status !== CustomerStatus.Active || !customer.renewalActive || listedAt !== entry.at.getTime()) return "left";
	if (options.accountId !== undefined && customer.accountId !== options.accountId) return "notNow";
	// A cycle "in the future" is a test clock's: it never bills a production customer early.
	if (options.at.getTime() > now.getTime() && customer.environment !== "sandbox") return "notNow";
	return customer.nextRenewalTimestamp!.getTime() <= options.at.getTime() ? "due" : "notNow";
}

const HOUR_MS = 3_600_000;
const slotStart = (at: Date | null | undefined) => (at ? Math.floor(at.getTime() / HOUR_MS) * HOUR_MS : null);

async function charge(deps: RenewalDeps, customer: CustomerDoc, product: RenewalProduct, key: string, at: Date): Promise<ProcessorOutcome> {
	const processor = deps.processorFor(customer.environment);
	if (!processor) return { status: "ERROR", processorTransactionId: null, reason: "no_processor", hardDecline: false };
	if (customer.authorizationId !== null) {
		return withRetries(() =>
			processor.capture({ idempotencyKey: key, authorizationId: customer.authorizationId!, amount: product.amountMinor }),
		);
	}
	const money = {
		idempotencyKey: key,
		cardToken: customer.cardToken,
		amount: product.amountMinor,
		currency: product.currency,
		midId: customer.midId,
	};
	return withRetries(() => processor.charge({ ...money, initiator: "merchant", at }));
}

/** Charges one claimed customer and settles it; always releases the lease. */
async function renew(deps: RenewalDeps, customer: CustomerDoc, options: CycleOptions): Promise<keyof CycleReport> {
	const lease = { _id: customer._id, "renewalLease.owner": options.owner };
	const product = await deps.productOf(customer.accountId, customer.productId);
	if (!product) {
		await deps.db.customers.updateOne(lease, { $set: { renewalLease: null } });
		return "skipped";
	}
	const scheduled = customer.nextRenewalTimestamp!;
	const key = `renewal:${customer._id}:${scheduled.toISOString()}:${customer.attempts}`;
	const firstCharge = customer.periodsBilled === 0;
	const outcome = await charge(deps, customer, product, key, options.at);
	const type = firstCharge ? TransactionType.SubscriptionStart : TransactionType.Renewal;
	await recordTransaction(deps, customer, product, type, key, outcome);

	if (outcome.status === "APPROVED") {
		const periodsBilled = customer.periodsBilled + 1;
		const anchor = customer.billingAnchor ?? scheduled;
		const next = product.renewal ? addPeriod(anchor, { every: product.renewal.every * periodsBilled, unit: product.renewal.unit }) : null;
		const billed = { lastTimeBilled: deps.now(), periodsBilled, attempts: 0, authorizationId: null, renewalLease: null };
		if (next) await deps.renewals.add(customer._id, next);
		// The schedule moves only if the customer is still ACTIVE (an unsubscribe may have landed meanwhile).
		const moved = await deps.db.customers.updateOne(
			{ ...lease, status: CustomerStatus.Active },
			{ $set: { ...billed, nextRenewalTimestamp: next, renewalActive: next !== null } },
		);
		if (moved.modifiedCount === 0) await deps.db.customers.updateOne(lease, { $set: billed });
		await deps.renewals.remove(customer._id, scheduled, next);
		return "charged";
	}

	const attempts = customer.attempts + 1;
	if (outcome.hardDecline || attempts >= deps.maxAttempts) {
		const suspended = await deps.db.customers.updateOne(
			{ ...lease, status: CustomerStatus.Active },
			{
				$set: { status: CustomerStatus.Suspended, renewalActive: false, nextRenewalTimestamp: null, attempts, renewalLease: null },
				$push: { outbox: outboxEvent(deps, "SUSPENSION") },
			},
		);
		if (suspended.modifiedCount === 1) await releaseLock(deps, customer);
		else await deps.db.customers.updateOne(lease, { $set: { attempts, renewalLease: null } });
		await deps.renewals.remove(customer._id, scheduled);
		return "suspended";
	}
	const retryAt = new Date(options.at.getTime() + deps.retryHours * 3_600_000);
	await deps.renewals.add(customer._id, retryAt);
	await deps.db.customers.updateOne(
		{ ...lease, status: CustomerStatus.Active },
		{ $set: { attempts, nextRenewalTimestamp: retryAt, renewalLease: null } },
	);
	await deps.db.customers.updateOne(lease, { $set: { renewalLease: null } });
	await deps.renewals.remove(customer._id, scheduled, retryAt);
	return "declined";
}

/** The batch from a random place on, wrapping around: nodes reading the same batch start on different customers. */
function fromRandomStart<T>(items: T[]): T[] {
	const start = Math.floor(Math.random() * items.length);
	return [...items.slice(start), ...items.slice(0, start)];
}

/** Works through the items, `limit` at a time, until done or `work` answers false (stop taking new items). */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<boolean>): Promise<void> {
	let next = 0;
	let stop = false;
	const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
		while (!stop && next < items.length) stop = !(await work(items[next++])) || stop;
	});
	await Promise.all(workers);
}

export async function runRenewalCycle(deps: RenewalDeps, options: CycleOptions): Promise<CycleReport> {
	const report: CycleReport = { charged: 0, declined: 0, suspended: 0, skipped: 0 };
	const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
	const batchSize = options.batchSize ?? DEFAULT_BATCH;
	const now = deps.now();
	// Only the hourly cycle moves the schedule's cursor: a run for one account or for a future time leaves work behind it.
	const moveCursor = options.accountId === undefined && options.at.getTime() <= now.getTime();
	// Each listing is looked at once per cycle; a customer charged for a missed period is listed again in a later slot.
	const seen = new Set<string>();
	while (!options.signal?.aborted) {
		const entries = (await deps.renewals.due(options.at, now, { moveCursor })).filter(e => !seen.has(`${e.id}@${e.at.getTime()}`));
		if (entries.length === 0) break;
		// Nodes read the same listings and each walks them from its own random start. A customer already
		// claimed means this node has reached another's part: it reads the listings again, which then
		// leave out what was renewed, instead of walking through the rest of the other node's part.
		const ordered = fromRandomStart(entries);
		for (let from = 0; from < ordered.length && !options.signal?.aborted; from += batchSize) {
			const batch = ordered.slice(from, from + batchSize);
			const customers = new Map((await deps.db.customers.find({ _id: { $in: batch.map(e => e.id) } }).lean()).map(c => [c._id, c]));
			let lostClaim = false;
			await inParallel(batch, CONCURRENCY, async entry => {
				if (options.signal?.aborted) return false;
				seen.add(`${entry.id}@${entry.at.getTime()}`);
				const state = listingState(customers.get(entry.id), entry, options, deps.now());
				if (state === "left") await deps.renewals.remove(entry.id, entry.at);
				if (state !== "due") return true;
				const claimed = await claimRenewal(deps, { customerId: entry.id, owner: options.owner, at: options.at, leaseMs });
				report[claimed ? await renew(deps, claimed, options) : "skipped"]++;
				lostClaim ||= claimed === null;
				return claimed !== null;
			});
			if (lostClaim) break;
		}
	}
	return report;
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
