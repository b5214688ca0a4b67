// The payments service's collections: the card vault, the ledger of every
// payment operation (by our idempotency key, and by its integer transaction id:
// a unique key), and what the connectors keep of a card at their processor.
import { type Connection, type Model, Schema } from "mongoose";
import type { KeyedProcessor, PaymentOutcome, ProcessorNotice } from "../../shared/contracts/payments";
import { createIdAllocator, type IdAllocator } from "../../shared/id-allocator";
import { type ScheduleSlotDoc, scheduleSchema } from "../../shared/schedule";
import type { Envelope } from "./vault/sealing";

export type OperationKind = "verify" | "setup" | "charge" | "authorize" | "capture" | "void" | "refund";

/** A card in the vault: its number envelope-sealed (vault/sealing.ts), and what may be shown of it. */
export interface VaultCardDoc {
	/** The card token (`card_…`): all that billing keeps. */
	_id: string;
	pan: Envelope;
	/** First 6 and last 4 digits. */
	bin: string;
	last4: string;
	/** MMYY */
	expiry: string;
	createdAt: Date;
}

/** The ledger: one operation per idempotency key, recorded before its processor is asked, decided once. */
export interface OperationDoc {
	_id: string;
	/** Our transaction id (`processorTransactionId`), given when it is recorded: captures and refunds find it by this unique key. */
	transactionId: number;
	kind: OperationKind;
	initiator: "customer" | "merchant" | null;
	midId: number | null;
	/** The processor the MID used for it ("sandbox", "stripe", "adyen"): a later capture or refund goes to the same one. */
	processor: string | null;
	cardToken: string | null;
	amount: number;
	currency: string | null;
	/** What a capture, void or refund acts on: the operation of the hold or charge, by key. */
	target: string | null;
	/** The processor's object for it, remembered before money moves (connectors/connector.ts). */
	reference: string | null;
	outcome: PaymentOutcome | null;
	/** A first payment whose issuer asked the buyer for a challenge: where, and until when (then `decidingUntil` too). */
	awaiting?: { challengeUrl: string; until: Date } | null;
	/** Until when the call that recorded it may still be deciding it; after that another call takes it over. */
	decidingUntil: Date;
	createdAt: Date;
}

/** A challenge of the sandbox's 3-D Secure (connectors/sandbox/challenges.ts): the tester's choice, once. */
export interface SandboxChallengeDoc {
	/** `sbx3ds_…`: the challenge page's address names it, and the operation remembers it. */
	_id: string;
	choice: "complete" | "fail" | null;
	until: Date;
	createdAt: Date;
}

/** A dispute's stage or an early fraud warning the sandbox will bring (connectors/sandbox/disputes.ts), by `<reference>:<stage>`. */
export interface SandboxNoticeDoc {
	_id: string;
	accountId: number;
	due: Date;
	notice: ProcessorNotice;
	/** A dispute's decision that turns to WON once evidence is submitted. */
	winsWithEvidence: boolean;
	/** Billing applied it. */
	done: boolean;
	createdAt: Date;
}

/** A MID's processor key and webhook signing secret, envelope-sealed under CREDENTIALS_KEY (vault/credentials.ts). */
export interface CredentialsDoc {
	/** The MID's id. */
	_id: number;
	type: KeyedProcessor;
	secret: Envelope;
	/** Stripe's `whsec_…`, Adyen's HMAC key, that the MID's events are signed with; null or absent (stored before webhook secrets): none. */
	webhookSecret?: Envelope | null;
	updatedAt: Date;
}

/** What a connector keeps of a card at its processor, by `<connector>:<midId>:<cardToken>` (Stripe: customer and payment method). */
export interface ProcessorCardDoc {
	_id: string;
	value: Record<string, string | number>;
	createdAt: Date;
}

/**
 * What Adyen notified of one operation of ours, by `<accountId>:<Adyen merchant account>:<reference we sent>:<event>`
 * (adyen-notifications.ts); the first kept. The same collection keeps first payments' challenges (AdyenChallengeDoc).
 */
export interface AdyenOutcomeDoc {
	_id: string;
	success: boolean;
	pspReference: string;
	reason: string | null;
	receivedAt: Date;
}

/**
 * A first payment's 3-D Secure challenge at Adyen, by the payment's return token (adyen-returns.ts; the connector's
 * returnTokenOf): `challenge:<token>` once Adyen asked for it, with its pspReference when Adyen gave one;
 * `return:<token>` with the redirectResult the buyer came back with, the first kept.
 */
export interface AdyenChallengeDoc {
	_id: string;
	pspReference?: string | null;
	/** The payment's vault card, to keep the card Adyen stores once the payment is authorised. */
	cardToken?: string;
	redirectResult?: string;
	receivedAt: Date;
}

const sealed = { iv: String, ciphertext: String, tag: String };
const envelopeSchema = new Schema<Envelope>({ kid: String, wrappedKey: sealed, secret: sealed }, { _id: false, versionKey: false });

const vaultSchema = new Schema<VaultCardDoc>(
	{ _id: String, pan: envelopeSchema, bin: String, last4: String, expiry: String, createdAt: Date },
	{ versionKey: false },
);

const operationSchema = new Schema<OperationDoc>(
	{
		_id: String,
		transactionId: Number,
		kind: String,
		initiator: { type: String, default: null },
		midId: { type: Number, default: null },
		processor: { type: String, default: null },
		cardToken: { type: String, default: null },
		amount: Number,
		currency: { type: String, default: null },
		target: { type: String, default: null },
		reference: { type: String, default: null },
		outcome: { type: Schema.Types.Mixed, default: null },
		awaiting: { type: Schema.Types.Mixed, default: null },
		decidingUntil: Date,
		createdAt: Date,
	},
	{ versionKey: false },
);

operationSchema.index({ transactionId: 1 }, { unique: true });

const credentialsSchema = new Schema<CredentialsDoc>(
	{ _id: Number, type: String, secret: envelopeSchema, webhookSecret: { type: envelopeSchema, default: null }, updatedAt: Date },
	{ versionKey: false },
);

const sandboxChallengeSchema = new Schema<SandboxChallengeDoc>(
	{ _id: String, choice: { type: String, default: null }, until: Date, createdAt: Date },
	{ versionKey: false },
);

const sandboxNoticeSchema = new Schema<SandboxNoticeDoc>(
	{ _id: String, accountId: Number, due: Date, notice: Schema.Types.Mixed, winsWithEvidence: Boolean, done: Boolean, createdAt: Date },
	{ versionKey: false },
);

const processorCardSchema = new Schema<ProcessorCardDoc>(
	{ _id: String, value: Schema.Types.Mixed, createdAt: Date },
	{ versionKey: false },
);

const adyenOutcomeSchema = new Schema<AdyenOutcomeDoc | AdyenChallengeDoc>(
	{ _id: String, success: Boolean, pspReference: String, reason: String, cardToken: String, redirectResult: String, receivedAt: Date },
	{ versionKey: false },
);

export interface PaymentsDb {
	vault: Model<VaultCardDoc>;
	operations: Model<OperationDoc>;
	processorCards: Model<ProcessorCardDoc>;
	credentials: Model<CredentialsDoc>;
	/** Adyen's notifications of our operations, and first payments' challenges, by `_id` only. */
	adyenOutcomes: Model<AdyenOutcomeDoc | AdyenChallengeDoc>;
	sandboxChallenges: Model<SandboxChallengeDoc>;
	sandboxNotices: Model<SandboxNoticeDoc>;
	/** The sandbox's notices by the day they are due (shared/schedule.ts). */
	sandboxNoticeSchedule: Model<ScheduleSlotDoc>;
	/** Transaction ids, in blocks per node. */
	ids: IdAllocator;
}

export function createPaymentsModels(connection: Connection): PaymentsDb {
	return {
		vault: connection.model("VaultCard", vaultSchema, "vault_cards"),
		operations: connection.model("PaymentOperation", operationSchema, "payment_operations"),
		processorCards: connection.model("ProcessorCard", processorCardSchema, "gateway_cards"),
		credentials: connection.model("ProcessorCredentials", credentialsSchema, "gateway_credentials"),
		adyenOutcomes: connection.model("AdyenOutcome", adyenOutcomeSchema, "adyen_outcomes"),
		sandboxChallenges: connection.model("SandboxChallenge", sandboxChallengeSchema, "sandbox_challenges"),
		sandboxNotices: connection.model("SandboxNotice", sandboxNoticeSchema, "sandbox_notices"),
		sandboxNoticeSchedule: connection.model("SandboxNoticeSchedule", scheduleSchema(), "sandbox_notice_schedule"),
		ids: createIdAllocator(connection, "payment_transactions", 100),
	};
}
