// Transactions are recorded once per processor operation, keyed by its
// idempotency key: a repeated step (a retry, a node taking over) finds the one
// already recorded instead of writing a second.

import type { PaymentOutcome } from "../../shared/contracts/payments";
import { declineCategory } from "../../shared/decline-reasons";
import { insertAllOnce, insertDoc, isDuplicateKey } from "../../shared/persistence";
import type { DiscountLine } from "./coupons/discount";
import type { BillingDeps } from "./deps";
import { carrying, type RenewalTry, transactionEntry } from "./entries/metrics-entries";
import { appendTransactions } from "./lists/pages";
import { countTransactions } from "./mid-stats/mid-stats";
import { outboxEvent, scheduledEvent, scheduleEvents } from "./outbox/outbox";
import type { CustomerDoc } from "./records/customer";
import type { DisputeDoc } from "./records/dispute";
import type { RefundDoc } from "./records/refund";
import type { Billed, TransactionDoc } from "./records/transaction";
import { RefundStatus, TransactionStatus, TransactionType } from "./states";

/** A charge, hold or capture to record: its customer, its money and the processor's answer. */
export interface ChargeRecord {
	customer: CustomerDoc;
	money: { amountMinor: number; currency: string; currencyId: number };
	type: TransactionType;
	idempotencyKey: string;
	outcome: PaymentOutcome;
	/** Minor units of the customer's credit that paid the rest of this charge (issue 36); absent: none. */
	creditApplied?: number;
	/** The coupon's discount on this charge's list price; absent or null: none. */
	discount?: DiscountLine | null;
	/** What it billed, for its invoice (pricing/billed.ts). */
	billed: Billed;
	/** A renewal cycle's charge: which try of its period (for its entry, entries/). */
	renewalTry?: RenewalTry;
	/** When it was made, in the account's time (account-time.ts): its timestamp, and the day the metrics count it on. */
	at: Date;
	/** Events of other records the caller writes next (a checkout's CONVERSION), listed with the charge's in one command. */
	alsoListed?: Listed[];
}

type Listed = Parameters<typeof scheduleEvents>[1][number];

const REFUNDABLE_TYPES = [
	TransactionType.SubscriptionStart,
	TransactionType.Renewal,
	TransactionType.SubscriptionChange,
	TransactionType.FinalUsage,
];

function chargeFields(
	deps: BillingDeps,
	{ customer, money, type, idempotencyKey, outcome, creditApplied, discount, billed, renewalTry, at }: ChargeRecord,
): TransactionFields {
	const approved = outcome.status === "APPROVED";
	// A renewal the credit paid in full moved no money at the processor: nothing to refund.
	const refundable = approved && REFUNDABLE_TYPES.includes(type) && money.amountMinor > 0;
	const status = approved
		? TransactionStatus.Approved
		: outcome.status === "DECLINED"
			? TransactionStatus.Declined
			: TransactionStatus.Error;
	const fields = {
		accountId: customer.accountId,
		customerId: customer._id,
		success: approved,
		type,
		amount: money.amountMinor,
		currency: money.currency,
		currencyId: money.currencyId,
		productId: customer.productId,
		processorTransactionId: outcome.processorTransactionId,
		processorReference: outcome.processorReference ?? null,
		authentication: outcome.authentication ?? null,
		midId: customer.midId,
		midName: customer.midName,
		refundStatus: refundable ? RefundStatus.Refundable : RefundStatus.NotRefundable,
		status,
		paymentMethod: customer.cardType,
		declineReason: outcome.reason,
		declineCategory: declineCategory(outcome),
		idempotencyKey,
		refundableRemaining: refundable ? money.amountMinor : 0,
		pendingRefunds: [],
		originalTransactionId: null,
		...(creditApplied ? { creditApplied } : {}),
		...(discount ? { discount } : {}),
		billed,
		relayed: [],
		metricsCounted: true,
	};
	// A charge or hold was attempted, approved or not: the merchant hears of it, and the metrics count it.
	return { ...fields, outbox: [outboxEvent(deps, "TRANSACTION", carrying(transactionEntry({ ...fields, renewalTry }, at)))] };
}

/** One charge, with the credit that paid the rest of it (a subscription's change). */
export function recordCharge(deps: BillingDeps, record: ChargeRecord): Promise<TransactionDoc> {
	return createOnce(deps, chargeFields(deps, record), record.at, record.alsoListed);
}

/** Tries at recording a batch whose ids another transaction holds, before the batch fails (its customers stay claimed). */
const ID_TRIES = 3;

/**
 * Records a batch (a renewal cycle's) in a few commands: their events listed
 * in one, the transactions inserted in one. Those an earlier attempt already
 * recorded (a node taking over) are read by their keys instead. Every record
 * is answered, or the call throws: its caller moves a customer on only past
 * its recorded charge. A record refused for its id (a block of ids handed out
 * twice, after the database lost its last writes in a crash) gets a new one.
 */
export async function recordTransactions(
	deps: BillingDeps,
	records: ChargeRecord[],
	tries = ID_TRIES,
): Promise<Map<string, TransactionDoc>> {
	if (records.length === 0) return new Map();
	const docs: TransactionDoc[] = [];
	for (const record of records) {
		docs.push({ _id: await deps.db.ids.transactions.next(), timestamp: record.at, ...chargeFields(deps, record) });
	}
	await appendTransactions(deps, docs);
	await scheduleEvents(
		deps,
		docs.flatMap(doc => doc.outbox.map(event => ({ kind: "t" as const, docId: doc._id, event }))),
	);
	if (await insertAllOnce(deps.db.transactions, docs)) {
		await countTransactions(deps, docs);
		return new Map(docs.map(doc => [doc.idempotencyKey, doc]));
	}
	const fresh = new Map(docs.map(doc => [doc.idempotencyKey, doc]));
	const recorded = await deps.db.transactions.find({ idempotencyKey: { $in: [...fresh.keys()] } }).lean();
	// Those this call inserted carry its ids; the others an earlier attempt recorded (and counted).
	const ours = new Set(docs.map(doc => doc._id));
	await countTransactions(
		deps,
		recorded.filter(doc => ours.has(doc._id)),
	);
	const completed = await Promise.all(recorded.map(doc => completeErrored(deps, doc, fresh.get(doc.idempotencyKey)!)));
	const answered = new Map(completed.map(doc => [doc.idempotencyKey, doc]));
	const refused = records.filter(record => !answered.has(record.idempotencyKey));
	if (refused.length === 0) return answered;
	if (tries <= 1) throw new Error(`${refused.length} transactions could not be recorded: their ids were taken`);
	return new Map([...answered, ...(await recordTransactions(deps, refused, tries - 1))]);
}

/** What a transaction takes from its processor's answer. */
const OUTCOME_FIELDS = [
	"success",
	"status",
	"processorTransactionId",
	"processorReference",
	"authentication",
	"refundStatus",
	"refundableRemaining",
	"declineReason",
	"declineCategory",
] as const;

/**
 * An ERROR transaction moved no money, and its key was free again at the processor. When the same attempt is asked
 * again under that key (the customer's move after the ERROR was lost to an outage) and the processor now answers, the
 * transaction is completed with that answer, once, and the merchant hears TRANSACTION again (docs/webhooks.md).
 * Without it the customer would move on an approval that no transaction shows.
 */
async function completeErrored(deps: BillingDeps, recorded: TransactionDoc, fresh: TransactionFields): Promise<TransactionDoc> {
	if (recorded.status !== TransactionStatus.Error || fresh.status === TransactionStatus.Error) return recorded;
	const outcome = Object.fromEntries(OUTCOME_FIELDS.map(field => [field, fresh[field]]));
	// What the ERROR counted (nothing) is replaced by what the answer counts.
	const event = await scheduledEvent(deps, "t", recorded._id, "TRANSACTION", carrying(fresh.outbox[0]?.metrics ?? null));
	const completed = await deps.db.transactions
		.findOneAndUpdate(
			{ _id: recorded._id, status: TransactionStatus.Error },
			{ $set: outcome, $push: { outbox: event } },
			{ returnDocument: "after" },
		)
		.lean();
	if (completed) await countTransactions(deps, [completed]);
	return completed ?? (await deps.db.transactions.findById(recorded._id).lean()) ?? recorded;
}

/** The REFUNDED transaction of a refund: negative, approved, and the original's product, MID, currency and card brand. */
type TransactionFields = Omit<TransactionDoc, "_id" | "timestamp">;

/** `at`: when the refund was made, in the account's time. */
export function recordRefundTransaction(
	deps: BillingDeps,
	refund: RefundDoc,
	original: TransactionDoc,
	refunded: Pick<PaymentOutcome, "processorTransactionId" | "processorReference"> | null,
	at: Date,
): Promise<TransactionDoc> {
	const fields = {
		...withoutOutcome(original),
		type: TransactionType.Refunded,
		amount: -refund.amount,
		processorTransactionId: refunded?.processorTransactionId ?? null,
		processorReference: refunded?.processorReference ?? null,
		idempotencyKey: refundTransactionKey(refund._id),
		originalTransactionId: original._id,
	};
	const entry = transactionEntry(fields, at);
	return createOnce(deps, { ...fields, outbox: [outboxEvent(deps, "REFUND", carrying(entry))] }, at);
}

/**
 * A lost dispute's CHARGEBACK: the disputed amount, negative, on the original's MID; its webhook is the DISPUTE_CLOSED.
 * `at`: when the processor decided it.
 */
export function recordChargebackTransaction(
	deps: BillingDeps,
	dispute: Pick<DisputeDoc, "_id" | "amount">,
	original: TransactionDoc,
	at: Date,
): Promise<TransactionDoc> {
	return createOnce(
		deps,
		{
			...withoutOutcome(original),
			type: TransactionType.Chargeback,
			amount: -dispute.amount,
			idempotencyKey: `chargeback:${dispute._id}`,
			originalTransactionId: original._id,
			outbox: [],
		},
		at,
	);
}

/** What a transaction the network or a refund made takes of its original: no processor operation, approved, not refundable. */
function withoutOutcome(
	original: TransactionDoc,
): Omit<TransactionFields, "type" | "amount" | "idempotencyKey" | "originalTransactionId" | "outbox"> {
	return {
		accountId: original.accountId,
		customerId: original.customerId,
		success: true,
		currency: original.currency,
		currencyId: original.currencyId,
		productId: original.productId,
		processorTransactionId: null,
		processorReference: null,
		authentication: null,
		midId: original.midId,
		midName: original.midName,
		refundStatus: RefundStatus.NotRefundable,
		status: TransactionStatus.Approved,
		paymentMethod: original.paymentMethod,
		declineReason: null,
		declineCategory: null,
		refundableRemaining: 0,
		pendingRefunds: [],
		relayed: [],
		// A refund's entry is on its REFUND event, a chargeback's on its dispute's DISPUTE_CLOSED.
		metricsCounted: true,
	};
}

/** The REFUNDED transaction's idempotency key: one per refund, however often recording it is retried. */
export const refundTransactionKey = (refundId: string) => `refund:${refundId}`;

/**
 * Writes the transaction made at `timestamp` (its event listed first, with `alsoListed`), or reads the one its
 * idempotency key already recorded.
 */
async function createOnce(
	deps: BillingDeps,
	fields: TransactionFields,
	timestamp: Date,
	alsoListed: Listed[] = [],
): Promise<TransactionDoc> {
	try {
		const _id = await deps.db.ids.transactions.next();
		await appendTransactions(deps, [{ _id, accountId: fields.accountId, customerId: fields.customerId, timestamp }]);
		await scheduleEvents(deps, [...fields.outbox.map(event => ({ kind: "t" as const, docId: _id, event })), ...alsoListed]);
		const inserted = await insertDoc(deps.db.transactions, { _id, timestamp, ...fields } as TransactionDoc);
		await countTransactions(deps, [inserted]);
		return inserted;
	} catch (err) {
		if (!isDuplicateKey(err)) throw err;
		const recorded = await deps.db.transactions.findOne({ idempotencyKey: fields.idempotencyKey }).lean();
		// Refused for its id, not its key (ids handed out twice after a crash, recordTransactions): the next id.
		if (!recorded) return createOnce(deps, fields, timestamp, alsoListed);
		return completeErrored(deps, recorded, fields);
	}
}
