// The final usage charge (docs/usage.md#when-a-subscription-ends): a
// subscription that ends, by the merchant, the buyer or its cancellation at the
// period's end, is charged at once for the usage of its last, partial period,
// with no base fee. The unsubscribe writes it due on the customer, in the same
// update, and lists the customer in the renewal schedule at its end first; it
// is charged right after, under its own key, and a node that died before is
// followed by the renewal cycle, which finds the listing and charges what is
// still due. A subscription its account's dispute protection ended is not
// charged: charging a disputing buyer again invites another dispute.
import { randomUUID } from "node:crypto";
import type { ProductRecord } from "../../../shared/contracts/accounts";
import { leaseFree, newLease } from "../../../shared/persistence";
import { withRetries } from "../../../shared/processor-retries";
import type { Listing } from "../../../shared/schedule";
import { NO_TAX } from "../../../shared/tax";
import type { BillingDeps } from "../deps";
import type { EndedBy } from "../entries/subscription-state";
import { billedGross } from "../pricing/billed";
import type { CustomerDoc, FinalUsage } from "../records/customer";
import { CustomerStatus, TransactionType } from "../states";
import { recordTransactions } from "../transaction-record";
import { pricedMeters, usageLines } from "./usage-lines";
import { usagePeriodStart } from "./usage-subjects";

const LEASE_MS = 60_000;
/** The states a paying subscription ends from: a pending, suspended or declined one owes no usage. */
const PAYING = new Set<string>([CustomerStatus.Active, CustomerStatus.Paused]);

/** What the unsubscribe writes on the customer: its last period's usage due, or null when there is none to charge. */
export async function finalUsageOf(deps: BillingDeps, customer: CustomerDoc, endedBy: EndedBy, at: Date): Promise<FinalUsage | null> {
	if (endedBy === "dispute" || !PAYING.has(customer.status)) return null;
	const product = await deps.productOf(customer.accountId, customer.productId);
	if (!product?.usagePrices.length || !product.renewal) return null;
	return { period: customer.periodsBilled, start: usagePeriodStart(customer, product), end: at, state: "DUE" };
}

export const finalUsageKey = (customerId: number, due: Pick<FinalUsage, "period">) => `final-usage:${customerId}:${due.period}`;

/** Charges the customer's final usage if it is still due and no one else is charging it; answers whether none is left due. */
export async function settleFinalUsage(deps: BillingDeps, customerId: number): Promise<boolean> {
	const now = deps.now();
	const owner = `final-usage/${randomUUID()}`;
	const customer = await deps.db.customers
		.findOneAndUpdate(
			{ _id: customerId, "finalUsage.state": "DUE", ...leaseFree("renewalLease", now) },
			{ $set: { renewalLease: newLease(owner, now, LEASE_MS) } },
			{ returnDocument: "after" },
		)
		.lean<CustomerDoc>();
	if (!customer) return (await deps.db.customers.findById(customerId, { finalUsage: 1 }).lean())?.finalUsage?.state !== "DUE";
	try {
		return await chargeFinalUsage(deps, customer, owner);
	} catch (err) {
		// The usage service or the processor could not answer: let go at once, so the renewal cycle tries again.
		await deps.db.customers.updateOne({ _id: customerId, "renewalLease.owner": owner }, { $set: { renewalLease: null } });
		throw err;
	}
}

async function chargeFinalUsage(deps: BillingDeps, customer: CustomerDoc, owner: string): Promise<boolean> {
	const customerId = customer._id;
	const product = await deps.productOf(customer.accountId, customer.productId);
	const due = customer.finalUsage!;
	const billed = { lines: product ? await finalLines(deps, customer, product, due) : [], tax: product?.tax ?? NO_TAX };
	const amount = billed.lines.length ? billedGross(billed) : 0;
	const done = async (state: FinalUsage["state"]) =>
		deps.db.customers.updateOne(
			{ _id: customerId, "renewalLease.owner": owner },
			{ $set: { "finalUsage.state": state, renewalLease: null } },
		);
	if (amount === 0 || !product) {
		await done("NONE");
		return true;
	}
	const key = finalUsageKey(customerId, due);
	const reference = customer.networkTransactionId ? { networkTransactionId: customer.networkTransactionId } : {};
	const money = { idempotencyKey: key, cardToken: customer.cardToken, amount, currency: product.currency, midId: customer.midId };
	const outcome = await withRetries(() => deps.payments.charge({ ...money, ...reference, initiator: "merchant", at: due.end }));
	const recorded = await recordTransactions(deps, [
		{
			customer,
			money: { ...product, amountMinor: amount },
			type: TransactionType.FinalUsage,
			idempotencyKey: key,
			outcome,
			billed,
			at: await deps.clocks.now(customer.accountId),
		},
	]);
	await done(outcome.status === "APPROVED" ? "CHARGED" : "DECLINED");
	deps.relay({ transactions: [...recorded.values()].map(tx => tx._id), customers: [customerId] });
	return true;
}

/**
 * Of the listings a renewal batch found left (their customer is no longer due), those it may drop: a customer whose
 * final usage is still due is charged now, and keeps its listing if that failed, for a later cycle.
 */
export async function droppable(deps: BillingDeps, left: Listing<number>[], docs: Map<number, CustomerDoc>): Promise<Listing<number>[]> {
	const keep = new Set<number>();
	for (const id of new Set(left.map(listing => listing.id)))
		if (docs.get(id)?.finalUsage?.state === "DUE" && !(await settleFinalUsage(deps, id).catch(() => false))) keep.add(id);
	return left.filter(listing => !keep.has(listing.id));
}

/** The last period's usage, closed at the subscription's end, and the adjustments of the period before. */
async function finalLines(deps: BillingDeps, customer: CustomerDoc, product: ProductRecord, due: FinalUsage) {
	const closed = await deps.usage.close({
		accountId: customer.accountId,
		customerId: customer._id,
		period: due.period,
		start: new Date(due.start).toISOString(),
		end: new Date(due.end).toISOString(),
		nextEnd: null,
		meters: pricedMeters(product),
		final: true,
	});
	return usageLines(product, closed);
}
