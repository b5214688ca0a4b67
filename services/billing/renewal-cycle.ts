// The renewal cycle: every customer due at the cycle's time is charged once,
// on however many billing nodes run the cycle at the same moment.
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
import { leaseFree } from "../../shared/persistence";
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

/** Due customers read per query; the query is the cycle's search, so fewer, larger batches cost less. */
const DEFAULT_BATCH = 500;
const DEFAULT_LEASE_MS = 60_000;
/** Work in flight per node: the processor calls are the slow part. */
const CONCURRENCY = 8;

function dueFilter(options: CycleOptions, now: Date): Record<string, unknown> {
	// A cycle "in the future" is a test clock's: it never bills a production customer early.
	const future = options.at.getTime() > now.getTime();
	return {
		...(future ? { environment: "sandbox" } : {}),
		status: CustomerStatus.Active,
		renewalActive: true,
		nextRenewalTimestamp: { $lte: options.at },
		...leaseFree("renewalLease", now),
		...(options.accountId === undefined ? {} : { accountId: options.accountId }),
	};
}

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
		// The schedule moves only if the customer is still ACTIVE (an unsubscribe may have landed meanwhile).
		const moved = await deps.db.customers.updateOne(
			{ ...lease, status: CustomerStatus.Active },
			{ $set: { ...billed, nextRenewalTimestamp: next, renewalActive: next !== null } },
		);
		if (moved.modifiedCount === 0) await deps.db.customers.updateOne(lease, { $set: billed });
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
		return "suspended";
	}
	const retryAt = new Date(options.at.getTime() + deps.retryHours * 3_600_000);
	await deps.db.customers.updateOne(
		{ ...lease, status: CustomerStatus.Active },
		{ $set: { attempts, nextRenewalTimestamp: retryAt, renewalLease: null } },
	);
	await deps.db.customers.updateOne(lease, { $set: { renewalLease: null } });
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
	// Skipped customers (product gone) stay due; they are not looked at again in this cycle.
	const skipped: number[] = [];
	// Batches until nothing is due; a customer charged for a missed period may be due again and is picked up next.
	while (!options.signal?.aborted) {
		const filter = { ...dueFilter(options, deps.now()), _id: { $nin: skipped } };
		const due = await deps.db.customers.find(filter, { _id: 1 }).sort({ nextRenewalTimestamp: 1 }).limit(batchSize).lean();
		if (due.length === 0) break;
		// Nodes read the same batch and each walks it from its own random start. A customer already
		// claimed means this node has reached another's part: it reads a fresh batch, which leaves out
		// what is leased or renewed, instead of walking through the rest of the other node's part.
		await inParallel(fromRandomStart(due), CONCURRENCY, async ({ _id }) => {
			if (options.signal?.aborted) return false;
			const claimed = await claimRenewal(deps, { customerId: _id, owner: options.owner, at: options.at, leaseMs });
			const result = claimed ? await renew(deps, claimed, options) : "skipped";
			if (claimed && result === "skipped") skipped.push(_id);
			report[result]++;
			return claimed !== null;
		});
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
