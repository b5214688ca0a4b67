// The read API: an account sees only its own customers and transactions;
// anything else reads as "not found" (null), as the spec requires.

import type { CustomerView, TransactionView } from "../../../shared/contracts/billing";
import type { BuyerSubscription } from "../../../shared/contracts/portal";
import { ownedBy, raw } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { toCustomerView, toTransactionView } from "../views";
import { listCustomersPage } from "./pages";

// The keyed reads go straight to the driver: nothing for mongoose to cast, and the API's most frequent reads. The
// relay's bookkeeping, which grows with every event a record has had, is left on the server.
const NOT_SHOWN = { projection: { outbox: 0, relayed: 0 } };

export async function getCustomer(deps: BillingDeps, input: { accountId: number; id: number }): Promise<CustomerView | null> {
	const doc = ownedBy(await raw(deps.db.customers).findOne({ _id: input.id }, NOT_SHOWN), input.accountId);
	return doc ? toCustomerView(doc) : null;
}

export async function getTransaction(deps: BillingDeps, input: { accountId: number; id: number }): Promise<TransactionView | null> {
	const doc = ownedBy(await raw(deps.db.transactions).findOne({ _id: input.id }, NOT_SHOWN), input.accountId);
	return doc ? toTransactionView(doc) : null;
}

const LIST_LIMIT = 100;

/** Ops: an account's customers, newest first, optionally by email. */
export async function listCustomers(deps: BillingDeps, input: { accountId: number; email?: string }): Promise<CustomerView[]> {
	const filter =
		input.email === undefined ? { accountId: input.accountId } : { accountId: input.accountId, email: input.email.trim().toLowerCase() };
	return (await deps.db.customers.find(filter).sort({ _id: -1 }).limit(LIST_LIMIT).lean()).map(toCustomerView);
}

/** Ops: a customer's transactions, oldest first. */
export async function listTransactions(deps: BillingDeps, input: { accountId: number; customerId: number }): Promise<TransactionView[]> {
	const docs = await deps.db.transactions
		.find({ accountId: input.accountId, customerId: input.customerId })
		.sort({ _id: 1 })
		.limit(LIST_LIMIT)
		.lean();
	return docs.map(toTransactionView);
}

/** The customer portal's email sign-in: the newest subscription of this email on the account, or null. */
export async function buyerByEmail(
	deps: BillingDeps,
	input: { accountId: number; email: string },
): Promise<{ customerId: number; name: string; productId: number } | null> {
	const page = await listCustomersPage(deps, { accountId: input.accountId, email: input.email, limit: BUYER_LIMIT });
	const found = typeof page === "string" ? undefined : page.data.find(c => A_BUYERS.has(c.status));
	return found ? { customerId: found.id, name: found.name, productId: found.productId } : null;
}

/** The portal's statuses: a subscription the buyer has or had; a checkout that never became one is left out. */
const A_BUYERS = new Set(["ACTIVE", "PAUSED", "SUSPENDED", "UNSUBSCRIBED"]);
const BUYER_LIMIT = 50;

/**
 * The customer portal's read (docs/portal.md): the customer a portal session was made for and the account's other
 * customers with its email, the same buyer's other subscriptions, newest first, with their card's last 4 digits.
 */
export async function buyerSubscriptions(
	deps: BillingDeps,
	input: { accountId: number; customerId: number },
): Promise<BuyerSubscription[] | null> {
	const named = ownedBy(await raw(deps.db.customers).findOne({ _id: input.customerId }, NOT_SHOWN), input.accountId);
	if (!named) return null;
	const page = await listCustomersPage(deps, { accountId: input.accountId, email: named.email, limit: BUYER_LIMIT });
	const ids = typeof page === "string" ? [named._id] : [...new Set([named._id, ...page.data.map(c => c.id)])];
	const docs = await deps.db.customers.find({ _id: { $in: ids } }, { outbox: 0, relayed: 0 }).lean();
	return docs
		.filter(doc => doc.accountId === input.accountId && doc.email === named.email && A_BUYERS.has(doc.status))
		.sort((a, b) => b._id - a._id)
		.map(doc => ({ ...toCustomerView(doc), cardLast4: doc.cardLast4, periodsBilled: doc.periodsBilled }));
}
