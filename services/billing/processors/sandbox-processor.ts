// The sandbox processor: a real processor's behaviour for test cards, with
// its own vault (card numbers sealed with VAULT_KEY) and its own ledger of
// operations keyed by idempotency key. Sandbox accounts use it; it is a
// product feature, not a test double.

import { randomBytes } from "node:crypto";
import { type Connection, type Model, Schema } from "mongoose";
import { isCardExpired } from "../../../shared/card-expiry";
import { createIdAllocator, type IdAllocator } from "../../../shared/id-allocator";
import { insertOnce } from "../../../shared/persistence";
import { pollUntil } from "../../../shared/poll";
import { type SealedCard, seal, unseal } from "./card-vault";
import type { MoneyRequest, PaymentProcessor, ProcessorOutcome } from "./payment-processor";

type OperationKind = "verify" | "charge" | "authorize" | "capture" | "void" | "refund";

interface VaultDoc extends SealedCard {
	_id: string;
	/** First 6 and last 4 digits: what may be shown of a card. */
	bin: string;
	last4: string;
	expiry: string;
	createdAt: Date;
	/** Test cards only: the MID that verified it (refusedByFirstMid) and the merchant charges declined so far (merchantDeclinesFirst). */
	firstMidId?: number;
	merchantDeclines?: number;
}

/** The processor's ledger: what it did, once per idempotency key. */
interface OperationDoc {
	_id: string;
	kind: OperationKind;
	initiator: "customer" | "merchant" | null;
	cardToken: string | null;
	amount: number;
	currency: string | null;
	midId: number | null;
	outcome: ProcessorOutcome | null;
	createdAt: Date;
}

const vaultSchema = new Schema<VaultDoc>(
	{
		_id: String,
		iv: String,
		ciphertext: String,
		tag: String,
		bin: String,
		last4: String,
		expiry: String,
		createdAt: Date,
		firstMidId: Number,
		merchantDeclines: Number,
	},
	{ versionKey: false },
);
const operationSchema = new Schema<OperationDoc>(
	{
		_id: String,
		kind: String,
		initiator: { type: String, default: null },
		cardToken: { type: String, default: null },
		amount: Number,
		currency: { type: String, default: null },
		midId: { type: Number, default: null },
		outcome: { type: Schema.Types.Mixed, default: null },
		createdAt: Date,
	},
	{ versionKey: false },
);

/** Behaviour of the documented test cards (docs/api.md#test-cards); any other valid card approves everything. */
interface TestCard {
	verify?: string;
	/** Declines charges and holds, by the buyer or the merchant. */
	charge?: string;
	/** Declines the merchant's charges (renewals) with this reason; the buyer's are approved. */
	merchantCharge?: string;
	/** Declines this many of the merchant's charges (insufficient_funds), then approves. */
	merchantDeclinesFirst?: number;
	/** The merchant's charges on the MID that verified the card are refused by that MID; other MIDs approve them. */
	refusedByFirstMid?: boolean;
	error?: boolean;
	refund?: string;
}

const TEST_CARDS: Record<string, TestCard> = {
	"4000000000000002": { verify: "card_verification_failed" },
	"4000000000009995": { charge: "insufficient_funds" },
	"4000000000000341": { merchantCharge: "card_declined" },
	"4000000000001018": { merchantCharge: "insufficient_funds" },
	"4000000000001026": { merchantCharge: "do_not_honor" },
	"4000000000001034": { merchantCharge: "lost_card" },
	"4000000000001042": { merchantCharge: "stolen_card" },
	"4000000000001059": { merchantCharge: "expired_card" },
	"4000000000001067": { refusedByFirstMid: true },
	"4000000000001075": { merchantDeclinesFirst: 2 },
	"4000000000000119": { error: true },
	"4000000000005126": { refund: "refund_declined" },
};

/** Declines a card network calls final: the sandbox flags them hard, as a real processor does. */
const HARD_REASONS = new Set(["lost_card", "stolen_card", "expired_card", "unknown_card", "card_verification_failed"]);

/** An undecided operation this old was left by a caller that died (a decision takes milliseconds). */
const ABANDONED_AFTER_MS = 1000;

const approved = (id: number): ProcessorOutcome => ({ status: "APPROVED", processorTransactionId: id, reason: null, hardDecline: false });
const declined = (id: number, reason: string): ProcessorOutcome => ({
	status: "DECLINED",
	processorTransactionId: id,
	reason,
	hardDecline: HARD_REASONS.has(reason),
});
const failed = (reason: string): ProcessorOutcome => ({ status: "ERROR", processorTransactionId: null, reason, hardDecline: false });

/** Which operation a processor transaction id belongs to: captures and refunds find theirs by key, never by searching the ledger. */
interface TransactionIndexDoc {
	/** The processor transaction id. */
	_id: number;
	operation: string;
}

const transactionIndexSchema = new Schema<TransactionIndexDoc>({ _id: Number, operation: String }, { versionKey: false });

export interface SandboxModels {
	vault: Model<VaultDoc>;
	operations: Model<OperationDoc>;
	transactions: Model<TransactionIndexDoc>;
	ids: IdAllocator;
}

export function createSandboxModels(connection: Connection): SandboxModels {
	return {
		vault: connection.model("SandboxVault", vaultSchema, "sandbox_vault"),
		operations: connection.model("SandboxOperation", operationSchema, "sandbox_operations"),
		transactions: connection.model("SandboxTransaction", transactionIndexSchema, "sandbox_transactions"),
		ids: createIdAllocator(connection, "sandbox_operations", 100),
	};
}

export function createSandboxProcessor(models: SandboxModels, vaultKey: Buffer, now: () => Date = () => new Date()): PaymentProcessor {
	async function cardOf(cardToken: string): Promise<{ pan: string; expiry: string; firstMidId?: number } | null> {
		const doc = await models.vault.findById(cardToken).lean();
		return doc ? { pan: unseal(vaultKey, doc), expiry: doc.expiry, firstMidId: doc.firstMidId } : null;
	}

	/** The operation that produced a processor transaction, with its outcome. */
	async function operationOf(processorTransactionId: number): Promise<OperationDoc | null> {
		const entry = await models.transactions.findById(processorTransactionId).lean();
		// Without an entry: a ledger written before the index existed (sandbox data of an earlier version), searched once.
		const operation = entry
			? await models.operations.findById(entry.operation).lean()
			: await models.operations.findOne({ "outcome.processorTransactionId": processorTransactionId }).lean();
		return operation?.outcome?.processorTransactionId === processorTransactionId ? operation : null;
	}

	/**
	 * Records the operation under its key first; a repeat finds the record and
	 * returns the first outcome instead of deciding again. The sandbox decides
	 * in its caller's process, so a record left undecided by a caller that died
	 * is taken over (one compare-and-set) and decided: still one record, one charge.
	 */
	async function once(
		key: string,
		record: Omit<OperationDoc, "_id" | "outcome" | "createdAt">,
		decide: (id: number) => Promise<ProcessorOutcome>,
	): Promise<ProcessorOutcome> {
		const owned = await insertOnce(models.operations, { _id: key, ...record, outcome: null, createdAt: now() });
		if (!owned) {
			const waited = await pollUntil<ProcessorOutcome | "owned" | "gone">(
				async () => {
					const previous = await models.operations.findById(key).lean();
					if (!previous) return "gone";
					if (previous.outcome) return previous.outcome;
					if (now().getTime() - previous.createdAt.getTime() <= ABANDONED_AFTER_MS) return undefined;
					const taken = await models.operations.updateOne(
						{ _id: key, outcome: null, createdAt: previous.createdAt },
						{ $set: { createdAt: now() } },
					);
					return taken.modifiedCount === 1 ? "owned" : undefined;
				},
				{ intervalMs: 50, timeoutMs: 1000 },
			);
			if (waited === "gone") return once(key, record, decide);
			// Still being decided by a live concurrent call: the caller retries later with the same key.
			if (waited === undefined) return failed("operation_in_progress");
			if (waited !== "owned") return waited;
		}
		const outcome = await decide(await models.ids.next());
		// A processor error moved no money, so it is not final: the same key may be tried again.
		if (outcome.status === "ERROR") {
			await models.operations.deleteOne({ _id: key });
			return outcome;
		}
		// Indexed before it is recorded: an index entry without an outcome finds nothing, never the wrong operation.
		if (outcome.processorTransactionId !== null)
			await insertOnce(models.transactions, { _id: outcome.processorTransactionId, operation: key });
		await models.operations.updateOne({ _id: key }, { $set: { outcome } });
		return outcome;
	}

	async function cardDecision(
		cardToken: string,
		id: number,
		test: (behaviour: TestCard, card: { pan: string; firstMidId?: number }) => ProcessorOutcome | null | Promise<ProcessorOutcome | null>,
		at: Date = now(),
	): Promise<ProcessorOutcome> {
		const card = await cardOf(cardToken);
		if (!card) return declined(id, "unknown_card");
		if (isCardExpired(card.expiry, at)) return declined(id, "expired_card");
		return (await test(TEST_CARDS[card.pan] ?? {}, card)) ?? approved(id);
	}

	/** The merchant's charge of a test card that declines some of them (once per key: `once` decides each operation once). */
	async function merchantChargeDecision(cardToken: string, id: number, midId: number, b: TestCard, firstMidId?: number) {
		if (b.merchantCharge) return declined(id, b.merchantCharge);
		if (b.refusedByFirstMid && midId === firstMidId) return declined(id, "merchant_account_refused");
		if (b.merchantDeclinesFirst) {
			const before = await models.vault.findByIdAndUpdate(cardToken, { $inc: { merchantDeclines: 1 } }).lean();
			if ((before?.merchantDeclines ?? 0) < b.merchantDeclinesFirst) return declined(id, "insufficient_funds");
		}
		return null;
	}

	const moneyRecord = (r: MoneyRequest, kind: OperationKind, initiator: OperationDoc["initiator"]) => ({
		kind,
		initiator,
		cardToken: r.cardToken,
		amount: r.amount,
		currency: r.currency,
		midId: r.midId,
	});

	return {
		async tokenize(card) {
			const cardToken = `card_${randomBytes(16).toString("hex")}`;
			await models.vault.create({
				_id: cardToken,
				...seal(vaultKey, card.pan),
				bin: card.pan.slice(0, 6),
				last4: card.pan.slice(-4),
				expiry: card.expiry,
				createdAt: now(),
			});
			return { cardToken };
		},

		verify(r) {
			return once(
				r.idempotencyKey,
				{ kind: "verify", initiator: "customer", cardToken: r.cardToken, amount: 0, currency: null, midId: r.midId },
				id =>
					cardDecision(r.cardToken, id, async (b, card) => {
						if (b.verify) return declined(id, b.verify);
						// The MID that will refuse this card's renewals: the one it was first verified on.
						if (b.refusedByFirstMid && card.firstMidId === undefined)
							await models.vault.updateOne({ _id: r.cardToken }, { $set: { firstMidId: r.midId } });
						return null;
					}),
			);
		},

		charge(r) {
			return once(r.idempotencyKey, moneyRecord(r, "charge", r.initiator), id =>
				cardDecision(
					r.cardToken,
					id,
					(b, card) => {
						if (b.error) return failed("processor_unavailable");
						if (b.charge) return declined(id, b.charge);
						return r.initiator === "merchant" ? merchantChargeDecision(r.cardToken, id, r.midId, b, card.firstMidId) : null;
					},
					r.initiator === "merchant" ? r.at : undefined,
				),
			);
		},

		authorize(r) {
			return once(r.idempotencyKey, moneyRecord(r, "authorize", "customer"), id =>
				cardDecision(r.cardToken, id, b => {
					if (b.error) return failed("processor_unavailable");
					if (b.charge) return declined(id, b.charge);
					return null;
				}),
			);
		},

		capture(r) {
			return once(
				r.idempotencyKey,
				{ kind: "capture", initiator: "merchant", cardToken: null, amount: r.amount, currency: null, midId: null },
				async id => {
					const hold = await operationOf(r.authorizationId);
					return hold?.kind === "authorize" && hold.outcome?.status === "APPROVED" ? approved(id) : declined(id, "authorization_not_found");
				},
			);
		},

		void(r) {
			return once(
				r.idempotencyKey,
				{ kind: "void", initiator: "merchant", cardToken: null, amount: 0, currency: null, midId: null },
				async id => approved(id),
			);
		},

		refund(r) {
			return once(
				r.idempotencyKey,
				{ kind: "refund", initiator: "merchant", cardToken: null, amount: r.amount, currency: null, midId: null },
				async id => {
					// The refund goes back to the card of the charge it refunds.
					const charge = await operationOf(r.processorTransactionId);
					const card = charge?.cardToken ? await cardOf(charge.cardToken) : null;
					const reason = card ? TEST_CARDS[card.pan]?.refund : "charge_not_found";
					return reason ? declined(id, reason) : approved(id);
				},
			);
		},

		async lookup(idempotencyKey) {
			return (await models.operations.findById(idempotencyKey).lean())?.outcome ?? null;
		},
	};
}

export interface SandboxOperationView {
	idempotencyKey: string;
	kind: OperationKind;
	initiator: "customer" | "merchant" | null;
	amount: number;
	currency: string | null;
	midId: number | null;
	card: { bin: string; last4: string } | null;
	outcome: ProcessorOutcome | null;
	createdAt: Date;
}

/** Ops: the sandbox processor's own ledger, to check what it was asked to do. */
export async function listSandboxOperations(
	models: SandboxModels,
	input: { cardBin?: string; kind?: OperationKind; status?: ProcessorOutcome["status"]; midId?: number },
): Promise<SandboxOperationView[]> {
	const cards = input.cardBin ? await models.vault.find({ bin: input.cardBin }, { bin: 1, last4: 1 }).lean() : null;
	const filter: Record<string, unknown> = {};
	if (cards) filter.cardToken = { $in: cards.map(c => c._id) };
	if (input.kind) filter.kind = input.kind;
	if (input.status) filter["outcome.status"] = input.status;
	if (input.midId) filter.midId = input.midId;
	const operations = await models.operations.find(filter).sort({ createdAt: 1 }).limit(1000).lean();
	const vault = new Map(
		(cards ?? (await models.vault.find({ _id: { $in: operations.map(o => o.cardToken) } }, { bin: 1, last4: 1 }).lean())).map(c => [
			c._id,
			c,
		]),
	);
	return operations.map(o => {
		const card = o.cardToken ? vault.get(o.cardToken) : undefined;
		return {
			idempotencyKey: o._id,
			kind: o.kind,
			initiator: o.initiator,
			amount: o.amount,
			currency: o.currency,
			midId: o.midId,
			card: card ? { bin: card.bin, last4: card.last4 } : null,
			outcome: o.outcome,
			createdAt: o.createdAt,
		};
	});
}
