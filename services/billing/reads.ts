// The read API: an account sees only its own customers and transactions;
// anything else reads as "not found" (null), as the spec requires.
import type { BillingDeps } from "./deps";
import { type CustomerView, type TransactionView, toCustomerView, toTransactionView } from "./views";

export async function getCustomer(deps: BillingDeps, input: { accountId: number; id: number }): Promise<CustomerView | null> {
	const doc = await deps.db.customers.findOne({ _id: input.id, accountId: input.accountId }).lean();
	return doc ? toCustomerView(doc) : null;
}

export async function getTransaction(deps: BillingDeps, input: { accountId: number; id: number }): Promise<TransactionView | null> {
	const doc = await deps.db.transactions.findOne({ _id: input.id, accountId: input.accountId }).lean();
	return doc ? toTransactionView(doc) : null;
}
