// Billing's requests to the invoicing service (docs/invoices.md#issuing): the
// transactions whose invoice or credit note is due. The relay lists them in
// the issue-request schedule (one command) before their events leave the
// outbox, then hands them to invoicing.issue, an account at a time, and drops
// them once it answers (those answered within DROP_DELAY_MS in one command). A request is listed until invoicing has stored the
// document and its event, so a crash or an invoicing outage only delays it:
// the sweep hands what is left over again. Payments and their webhooks never
// wait for invoicing.

import type { ServiceBroker } from "moleculer";
import { call } from "../../../shared/call";
import { type ChargedTransaction, documentKindOf, type IssueRequest, type Party } from "../../../shared/contracts/invoicing";
import { groupCommit, keyedGroupCommit } from "../../../shared/group-commit";
import { createSchedule, type Listing, type Schedule } from "../../../shared/schedule";
import type { BillingDb } from "../models";
import type { CustomerDoc } from "../records/customer";
import type { TransactionDoc } from "../records/transaction";
import { toCustomerView } from "../views";
import { byId, readByIds } from "./relay-records";

/** The slots are this wide; the sweep leaves the newest two to the hand-overs that follow each relay. */
const REQUEST_SLOT_MS = 1000;
const SWEEP_DELAY_MS = 2 * REQUEST_SLOT_MS;
/** Requests per invoicing.issue call. */
const ISSUE_BATCH = 100;
/**
 * Answered requests are dropped together this long after the first of them: one command for the hand-overs of that
 * moment instead of one each. Far below SWEEP_DELAY_MS, so a sweep rarely meets one answered but still listed (it
 * would hand it over again, and invoicing answer from what it stored).
 */
const DROP_DELAY_MS = 250;

export function createIssueRequestSchedule(db: BillingDb): Schedule<number> {
	return createSchedule<number>(db.issueRequestSchedule, { slotMs: REQUEST_SLOT_MS, shards: 4 });
}

export interface IssueRequestsDeps {
	db: BillingDb;
	requests: Schedule<number>;
	now: () => Date;
	/** invoicing.issue: resolves once the account's documents and their events are stored. */
	issue(accountId: number, requests: IssueRequest[]): Promise<unknown>;
	logger: { warn(...args: unknown[]): void };
}

/** What a pass's documents are issued with: the transactions' customers and originals, as the relay read them. */
export interface Related {
	customersOf: Map<number, CustomerDoc>;
	transactionsOf: Map<number, TransactionDoc>;
}

export function chargedTransaction(tx: TransactionDoc): ChargedTransaction {
	return {
		id: tx._id,
		accountId: tx.accountId,
		customerId: tx.customerId,
		productId: tx.productId,
		type: tx.type,
		status: tx.status,
		amount: tx.amount,
		currency: tx.currency,
		timestamp: tx.timestamp.toISOString(),
		midName: tx.midName,
		processorReference: tx.processorReference,
		originalTransactionId: tx.originalTransactionId,
		creditApplied: tx.creditApplied ?? 0,
		discount: tx.discount ?? null,
		billed: tx.billed
			? {
					tax: tx.billed.tax,
					lines: tx.billed.lines.map(line => ({
						...line,
						from: line.from?.toISOString() ?? null,
						to: line.to?.toISOString() ?? null,
					})),
				}
			: null,
	};
}

function buyerOf(customer: CustomerDoc | undefined): Party {
	const address = customer?.additionalData?.address;
	return {
		name: customer ? `${customer.name} ${customer.lastName}`.trim() : "",
		email: customer?.email ?? null,
		address: typeof address === "string" ? address : null,
		taxId: null,
	};
}

function requestOf(tx: TransactionDoc, related: Related): IssueRequest {
	const customer = related.customersOf.get(tx.customerId);
	const original = tx.originalTransactionId === null ? undefined : related.transactionsOf.get(tx.originalTransactionId);
	return {
		transaction: chargedTransaction(tx),
		original: original ? chargedTransaction(original) : null,
		buyer: buyerOf(customer),
		customer: customer ? toCustomerView(customer) : null,
	};
}

/** Reads what the transactions' requests need that is not at hand: their customers and originals. */
async function relatedOf(db: BillingDb, transactions: TransactionDoc[], known?: Related): Promise<Related> {
	const originals = transactions.flatMap(tx => (tx.originalTransactionId === null ? [] : [tx.originalTransactionId]));
	const [customersOf, transactionsOf] = await Promise.all([
		readByIds<CustomerDoc>(
			db.customers,
			transactions.map(tx => tx.customerId),
			known?.customersOf,
		),
		readByIds<TransactionDoc>(db.transactions, originals, known?.transactionsOf),
	]);
	return { customersOf, transactionsOf };
}

/** A listed request on its way to invoicing. */
interface Handed {
	listing: Listing<number>;
	request: IssueRequest;
}

export function createIssueRequests(deps: IssueRequestsDeps) {
	/** Transactions whose requests this node is handing over now or has queued: the sweep leaves them alone. */
	const inFlight = new Set<number>();
	const sending = new Set<Promise<void>>();
	/** Listings of requests invoicing answered, not dropped yet: the sweep leaves them alone. */
	const answeredIds = new Set<number>();
	const dropping = new Set<Promise<void>>();
	/** The answered listings of a moment, removed together DROP_DELAY_MS after the first (shared/group-commit.ts). */
	const removeTogether = groupCommit<Listing<number>[]>(
		async groups => {
			await deps.requests.removeAll(groups.flat());
			return undefined;
		},
		{ lingerMs: DROP_DELAY_MS },
	);

	/** Drops answered listings with the others of that moment; a drop that fails leaves them to the sweep. */
	function drop(listings: Listing<number>[]): void {
		for (const listing of listings) answeredIds.add(listing.id);
		const dropped: Promise<void> = removeTogether(listings)
			.catch(err => deps.logger.warn("Answered issue requests stay listed for the sweep:", (err as Error).message))
			.finally(() => {
				for (const listing of listings) answeredIds.delete(listing.id);
				dropping.delete(dropped);
			});
		dropping.add(dropped);
	}

	/**
	 * Each account's requests go to invoicing one call after the other (shared/group-commit.ts, keyed by the account):
	 * invoicing numbers an account's documents one at a time anyway, so calls at once for one account only wait there,
	 * past their timeout, and a timed-out call's requests handed over again while the first was still at work made
	 * twice the work under load (renewals' webhooks late in the benchmark). Those that come while a call is at work
	 * go together in the next, ISSUE_BATCH per call; each batch is dropped once invoicing answered it.
	 */
	const handTo = keyedGroupCommit<Handed[]>(async (account, groups) => {
		const items = groups.flat();
		for (let from = 0; from < items.length; from += ISSUE_BATCH) {
			const batch = items.slice(from, from + ISSUE_BATCH);
			await deps.issue(
				Number(account),
				batch.map(item => item.request),
			);
			drop(batch.map(item => item.listing));
		}
		return undefined;
	});

	/** Hands the requests to invoicing, each account's in its turn (handTo). */
	async function handOver(listed: Listing<number>[], transactions: Map<number, TransactionDoc>, known?: Related): Promise<void> {
		const related = await relatedOf(deps.db, [...transactions.values()], known);
		const byAccount = new Map<number, Handed[]>();
		for (const listing of listed) {
			const tx = transactions.get(listing.id);
			if (tx) byAccount.set(tx.accountId, [...(byAccount.get(tx.accountId) ?? []), { listing, request: requestOf(tx, related) }]);
		}
		// A listing whose transaction is gone (it never is: transactions are never deleted) has nothing to issue.
		const orphans = listed.filter(listing => !transactions.has(listing.id));
		if (orphans.length > 0) await deps.requests.removeAll(orphans);
		await Promise.all([...byAccount].map(([accountId, handed]) => handTo(String(accountId), handed)));
	}

	/** A pass of the sweep: what is listed since before SWEEP_DELAY_MS and not being handed over on this node. */
	async function sweepPass(): Promise<void> {
		const now = deps.now();
		const due = (await deps.requests.due(new Date(now.getTime() - SWEEP_DELAY_MS), now)).filter(
			listing => !inFlight.has(listing.id) && !answeredIds.has(listing.id),
		);
		for (let from = 0; from < due.length; from += ISSUE_BATCH * 5) {
			const listed = due.slice(from, from + ISSUE_BATCH * 5);
			for (const listing of listed) inFlight.add(listing.id);
			try {
				await handOver(
					listed,
					await readByIds<TransactionDoc>(
						deps.db.transactions,
						listed.map(listing => listing.id),
					),
				);
			} finally {
				for (const listing of listed) inFlight.delete(listing.id);
			}
		}
	}

	let sweeping: Promise<void> | null = null;

	function send(listed: Listing<number>[], transactions: Map<number, TransactionDoc>, related: Related): void {
		for (const listing of listed) inFlight.add(listing.id);
		const sent: Promise<void> = handOver(listed, transactions, related)
			.catch(err => deps.logger.warn("Issue requests wait for invoicing:", (err as Error).message))
			.finally(() => {
				for (const listing of listed) inFlight.delete(listing.id);
				sending.delete(sent);
			});
		sending.add(sent);
	}

	return {
		/**
		 * Lists the transactions' requests, then hands them over in the background. The relay awaits this before the
		 * transactions' events leave the outbox: a crash in between lists them again, once (the schedule keeps ids).
		 */
		async request(candidates: TransactionDoc[], related: Related): Promise<void> {
			const transactions = candidates.filter(tx => documentKindOf(chargedTransaction(tx)) !== null);
			if (transactions.length === 0) return;
			const at = deps.now();
			const listed = transactions.map(tx => ({ id: tx._id, at }));
			await deps.requests.addAll(listed);
			send(listed, byId(transactions), related);
		},
		/**
		 * Hands over again, in the background (one pass at a time), what a crashed node or a failed hand-over left
		 * listed: the relay's sweep that asks for it does not wait behind an account's turn.
		 */
		sweep(): void {
			sweeping ??= sweepPass()
				.catch(err => deps.logger.warn("Issue requests wait for invoicing:", (err as Error).message))
				.finally(() => {
					sweeping = null;
				});
		},
		async stop(): Promise<void> {
			await Promise.all([...sending, sweeping]);
			await Promise.all(dropping);
		},
	};
}

export type IssueRequests = ReturnType<typeof createIssueRequests>;

/** invoicing.issue for the account's requests, routed to the node that numbers the account. */
export const issueThrough =
	(broker: ServiceBroker) =>
	(accountId: number, requests: IssueRequest[]): Promise<unknown> =>
		call(broker, "invoicing.issue", { accountId, requests });
