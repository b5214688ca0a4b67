// The merchant's lists of customers and transactions (docs/api.md, "Lists"),
// newest first, read by key from timelines (shared/timeline.ts):
//   c:<account>              every customer, in signup order
//   cp:<account>:<product>   the customers of a product
//   ce:<account>:<email>     (bag) the customers with an email, lower-cased
//   t:<account>              every transaction
//   tc:<customer>            (bag) a customer's transactions
//   d:<account>              every dispute, in the order they opened
// An item is appended before it is inserted, so no item is missing from its
// lists; a ref whose insert failed names nothing and is skipped.
import type { CustomerView, DisputeView, TransactionView } from "../../../shared/contracts/billing";
import { bagReader, type ListError, type Page } from "../../../shared/list-page";
import { type ListQuery, type ListSource, newestFirst } from "../../../shared/newest-first";
import { addToBags, append, appendAll, lastAtOrBefore, bag as readBag, refsBelow, type Timelines } from "../../../shared/timeline";
import type { BillingDeps } from "../deps";
import type { CustomerDoc } from "../records/customer";
import type { DisputeDoc } from "../records/dispute";
import type { TransactionDoc } from "../records/transaction";
import type { CustomerStatus, DisputeStatus, TransactionStatus, TransactionType } from "../states";
import { toCustomerView, toDisputeView, toTransactionView } from "../views";

const keys = {
	customers: (accountId: number) => `c:${accountId}`,
	productCustomers: (accountId: number, productId: number) => `cp:${accountId}:${productId}`,
	emailCustomers: (accountId: number, email: string) => `ce:${accountId}:${email.toLowerCase()}`,
	transactions: (accountId: number) => `t:${accountId}`,
	customerTransactions: (customerId: number) => `tc:${customerId}`,
	disputes: (accountId: number) => `d:${accountId}`,
};

/** Appends a new customer to its timelines (before it is inserted), the three at once. */
export async function appendCustomer(
	deps: BillingDeps,
	customer: Pick<CustomerDoc, "_id" | "accountId" | "productId" | "email" | "subscriptionTimestamp">,
): Promise<void> {
	const ref: [number, number] = [customer._id, customer.subscriptionTimestamp.getTime()];
	await Promise.all([
		append(deps.db.timelines, keys.customers(customer.accountId), [ref]),
		append(deps.db.timelines, keys.productCustomers(customer.accountId, customer.productId), [ref]),
		addToBags(deps.db.timelines, [{ key: keys.emailCustomers(customer.accountId, customer.email), ref }]),
	]);
}

/** Appends new transactions to their timelines (before they are inserted): one append per account and one bulk write for the customers' bags, at once. */
export async function appendTransactions(
	deps: BillingDeps,
	transactions: Pick<TransactionDoc, "_id" | "accountId" | "customerId" | "timestamp">[],
): Promise<void> {
	const ref = (t: (typeof transactions)[number]): [number, number] => [t._id, t.timestamp.getTime()];
	await Promise.all([
		appendAll(
			deps.db.timelines,
			transactions.map(t => ({ key: keys.transactions(t.accountId), ref: ref(t) })),
		),
		addToBags(
			deps.db.timelines,
			transactions.map(t => ({ key: keys.customerTransactions(t.customerId), ref: ref(t) })),
		),
	]);
}

/** The ids of a customer's transactions, oldest first, by key (its bag). */
export async function customerTransactionIds(deps: Pick<BillingDeps, "db">, customerId: number): Promise<number[]> {
	return (await readBag(deps.db.timelines, keys.customerTransactions(customerId))).map(([id]) => Number(id));
}

/** Appends a new dispute to its timeline (before it is inserted). */
export async function appendDispute(deps: BillingDeps, dispute: Pick<DisputeDoc, "_id" | "accountId" | "openedAt">): Promise<void> {
	await append(deps.db.timelines, keys.disputes(dispute.accountId), [[dispute._id, dispute.openedAt.getTime()]]);
}

export interface CustomerListQuery extends ListQuery {
	email?: string;
	status?: CustomerStatus;
	productId?: number;
}

export interface TransactionListQuery extends ListQuery {
	customerId?: number;
	type?: TransactionType;
	status?: TransactionStatus;
}

export const timelineSource = (timelines: Timelines, key: string): ListSource => ({
	read: (from, count) => refsBelow(timelines, key, from, count),
	lastAtOrBefore: at => lastAtOrBefore(timelines, key, at),
});

export const bagSource = (timelines: Timelines, key: string): ListSource => ({ read: bagReader(readBag(timelines, key)) });

export function listCustomersPage(deps: BillingDeps, query: CustomerListQuery): Promise<Page<CustomerView> | ListError> {
	const { accountId, email, status, productId, from, to } = query;
	const lowerEmail = email?.trim().toLowerCase();
	const timelines = deps.db.timelines;
	const source =
		lowerEmail !== undefined
			? bagSource(timelines, keys.emailCustomers(accountId, lowerEmail))
			: timelineSource(timelines, productId !== undefined ? keys.productCustomers(accountId, productId) : keys.customers(accountId));
	return newestFirst<CustomerDoc, CustomerView>(
		query,
		{ list: "customers", email: lowerEmail, status, productId, from, to },
		source,
		deps.db.customers,
		doc =>
			(lowerEmail === undefined || doc.email.toLowerCase() === lowerEmail) &&
			(status === undefined || doc.status === status) &&
			(productId === undefined || doc.productId === productId),
		toCustomerView,
	);
}

export function listTransactionsPage(deps: BillingDeps, query: TransactionListQuery): Promise<Page<TransactionView> | ListError> {
	const { accountId, customerId, type, status, from, to } = query;
	const timelines = deps.db.timelines;
	const source =
		customerId !== undefined
			? bagSource(timelines, keys.customerTransactions(customerId))
			: timelineSource(timelines, keys.transactions(accountId));
	return newestFirst<TransactionDoc, TransactionView>(
		query,
		{ list: "transactions", customerId, type, status, from, to },
		source,
		deps.db.transactions,
		doc =>
			(customerId === undefined || doc.customerId === customerId) &&
			(type === undefined || doc.type === type) &&
			(status === undefined || doc.status === status),
		toTransactionView,
		// A batch refused for its ids (ids handed out twice after a crash) listed them before it took new ones.
		doc => doc.timestamp.getTime(),
	);
}

export interface DisputeListQuery extends ListQuery {
	status?: DisputeStatus;
}

export function listDisputesPage(deps: BillingDeps, query: DisputeListQuery): Promise<Page<DisputeView> | ListError> {
	const { accountId, status, from, to } = query;
	return newestFirst<DisputeDoc, DisputeView>(
		query,
		{ list: "disputes", status, from, to },
		timelineSource(deps.db.timelines, keys.disputes(accountId)),
		deps.db.disputes,
		doc => status === undefined || doc.status === status,
		doc => toDisputeView(doc),
	);
}
