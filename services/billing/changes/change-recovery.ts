// A change whose node died after its charge was sent (change-charge.ts marked
// it and listed it in checkout_schedule): the recovery sweep settles it by what
// the processor did with the quote's key (`lookup`, never a new charge), once
// its grace period is over:
//   - approved -> its transaction (once, by key) and the change applied, as the request would have
//   - declined -> its transaction, nothing changed
//   - never seen -> nothing charged, nothing changed
//   - unknown now (processor unreachable, or ERROR) -> listed for the next sweep
// The sweep takes the customer's lease from the dead change (or free), so two
// nodes settle it once.
import { randomUUID } from "node:crypto";
import { config } from "../../../shared/config";
import { leaseFree, newLease } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { laterIfUnknown } from "../payments";
import type { CustomerDoc } from "../records/customer";
import { applied } from "./change-apply";
import { changeKey, changeOwner, recordChange } from "./change-charge";

export type ChangeSettled = "changes" | "later" | null;

export async function settleChangeInFlight(deps: BillingDeps, customer: CustomerDoc, openedBefore: Date): Promise<ChangeSettled> {
	const { quoteId, listedAt } = customer.changeInFlight!;
	if (new Date(listedAt) > openedBefore) return "later";
	const now = deps.now();
	const owner = `recover-change:${randomUUID()}`;
	const taken = await deps.db.customers
		.findOneAndUpdate(
			{
				_id: customer._id,
				"changeInFlight.quoteId": quoteId,
				$or: [{ "renewalLease.owner": changeOwner(quoteId) }, ...leaseFree("renewalLease", now).$or],
			},
			{ $set: { renewalLease: newLease(owner, now, config().renewalLeaseMs) } },
			{ returnDocument: "after" },
		)
		.lean();
	// Settled by another node meanwhile, or its lease held by a live holder: the next sweep looks again.
	if (!taken) return (await deps.db.customers.exists({ _id: customer._id, "changeInFlight.quoteId": quoteId })) ? "later" : null;
	const held = { _id: customer._id, "renewalLease.owner": owner };
	try {
		return (await settle(deps, taken, held, quoteId)) === "later" ? "later" : "changes";
	} finally {
		await deps.db.customers.updateOne(held, { $set: { renewalLease: null } });
	}
}

async function settle(deps: BillingDeps, customer: CustomerDoc, held: object, quoteId: string): Promise<"later" | "settled"> {
	const quote = await deps.db.changeQuotes.findById(quoteId).lean();
	const product = quote && (await deps.productOf(customer.accountId, quote.result.to.productId));
	const outcome = quote ? await deps.payments.lookup(changeKey(quoteId)).catch(laterIfUnknown) : null;
	if (outcome === "later" || outcome?.status === "ERROR" || (outcome && !product)) return "later";
	if (outcome && quote && product) {
		const at = await deps.clocks.now(customer.accountId);
		const paid = await recordChange(deps, customer, product, quote, outcome, at);
		if (outcome.status === "APPROVED") {
			const done = await applied(deps, customer, held, quote, paid.transaction, at);
			deps.relay(done.toRelay);
			return "settled";
		}
		deps.relay({ transactions: [paid.transaction._id], customers: [] });
	}
	// Declined, or never seen by the processor: nothing changes.
	await deps.db.customers.updateOne(held, { $set: { changeInFlight: null } });
	return "settled";
}
