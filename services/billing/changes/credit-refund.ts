// POST /api/customer/{id}/credit-refund: the credit an unsubscribed customer
// kept (docs/subscriptions.md#credit) paid back to its card through the refund
// ledger, from its newest refundable charges first. The plan (which charges,
// how much, under which refund ids) is written on the customer with its credit
// taken in one update, so a repeat, or a request after a crash, resumes the
// same refunds by their ids and none is made twice. What a refund could not
// pay back (the processor refused it) is credit again once the plan is done.
import { type RefundDone, RefundError } from "../../../shared/contracts/billing";
import { findCurrency, toDecimal } from "../../../shared/money";
import type { BillingDeps } from "../deps";
import { listTransactionsPage } from "../lists/pages";
import type { CreditRefund, CustomerDoc } from "../records/customer";
import type { TransactionDoc } from "../records/transaction";
import { refundTransaction } from "../refunds/refund-ledger";
import { CustomerStatus, RefundStatus } from "../states";
import { toCustomerView } from "../views";
import { PlanChangeError } from "./change-api-errors";
import { customerOf } from "./change-quote";
import { creditOf } from "./customer-period";

export interface CreditRefundDone {
	answer: object;
	transactions: number[];
}

/** The customer's refundable charges in the credit's currency, newest first, enough to cover `credit` (or all there are). */
async function chargesToRefund(
	deps: BillingDeps,
	customer: CustomerDoc,
	credit: number,
	currency: string,
): Promise<CreditRefund["refunds"]> {
	const refunds: CreditRefund["refunds"] = [];
	let left = credit;
	let cursor: string | undefined;
	do {
		const page = await listTransactionsPage(deps, { accountId: customer.accountId, customerId: customer._id, limit: 100, cursor });
		if (typeof page !== "object") break;
		const docs = await deps.db.transactions.find({ _id: { $in: page.data.map(t => t.id) } }).lean<TransactionDoc[]>();
		const byId = new Map(docs.map(doc => [doc._id, doc]));
		for (const view of page.data) {
			const doc = byId.get(view.id);
			if (!doc || doc.currency !== currency || doc.refundStatus !== RefundStatus.Refundable || doc.refundableRemaining <= 0) continue;
			const amount = Math.min(left, doc.refundableRemaining);
			refunds.push({ transactionId: doc._id, amount, refundId: `credit-refund:${customer._id}:${doc._id}` });
			left -= amount;
			if (left === 0) return refunds;
		}
		cursor = page.nextCursor ?? undefined;
	} while (cursor);
	return refunds;
}

/** The plan to carry out: the one a first request wrote, or a new one written now with the credit it takes. */
async function planOf(deps: BillingDeps, customer: CustomerDoc): Promise<CreditRefund | PlanChangeError> {
	if (customer.creditRefund) return customer.creditRefund;
	const credit = creditOf(customer);
	// Credit comes from a change, which stored the period and its currency (kept after the customer unsubscribed).
	const currency = customer.period?.currency;
	if (credit === 0 || !currency) return PlanChangeError.NoCredit;
	const refunds = await chargesToRefund(deps, customer, credit, currency);
	const taken = refunds.reduce((sum, r) => sum + r.amount, 0);
	if (taken === 0) return PlanChangeError.NothingToRefund;
	const plan: CreditRefund = { currency, refunds };
	const written = await deps.db.customers.updateOne(
		{ _id: customer._id, credit, creditRefund: null },
		{ $set: { credit: credit - taken, creditRefund: plan } },
	);
	return written.modifiedCount === 1 ? plan : PlanChangeError.Busy;
}

export async function refundCredit(
	deps: BillingDeps,
	input: { accountId: number; id: number },
): Promise<CreditRefundDone | PlanChangeError> {
	const customer = await customerOf(deps, input.accountId, input.id);
	if (!customer) return PlanChangeError.CustomerNotFound;
	if (customer.status !== CustomerStatus.Unsubscribed) return PlanChangeError.CreditWhileSubscribed;
	const plan = await planOf(deps, customer);
	if (typeof plan === "string") return plan;
	const currency = findCurrency(plan.currency)!;
	const outcomes: { transactionId: number; amount: number; done: RefundDone | RefundError }[] = [];
	for (const { transactionId, amount, refundId } of plan.refunds) {
		const amountToRefund = String(toDecimal(amount, currency));
		const done = await refundTransaction(deps, { accountId: input.accountId, transactionId, amountToRefund, refundId });
		// Still being settled (its answer was lost): the plan stays for a repeat.
		if (done === RefundError.InProgress) return PlanChangeError.Busy;
		outcomes.push({ transactionId, amount, done });
	}
	const givenBack = outcomes.filter(o => typeof o.done === "string").reduce((sum, o) => sum + o.amount, 0);
	await deps.db.customers.updateOne(
		{ _id: customer._id, creditRefund: { $ne: null } },
		{ $set: { creditRefund: null }, $inc: { credit: givenBack } },
	);
	const after = (await deps.db.customers.findById(customer._id).lean())!;
	return {
		answer: {
			customer: toCustomerView(after),
			refunds: outcomes.map(({ transactionId, amount, done }) => ({
				transactionId,
				amount: toDecimal(amount, currency),
				refundTransactionId: typeof done === "string" ? null : done.refundTransactionId,
				refused: typeof done === "string" ? done : null,
			})),
		},
		transactions: outcomes.flatMap(o => (typeof o.done === "string" ? [] : [o.done.refundTransactionId])),
	};
}
