// The transactions collection: every money movement we record (a charge, a
// hold, a renewal, a refund, a chargeback), keyed by its numeric id and unique
// by its processor operation's idempotency key.

import { Schema } from "mongoose";
import { DeclineCategory } from "../../../shared/contracts/billing";
import type { ChargedLineKind, UsageDetail } from "../../../shared/contracts/invoicing";
import type { Authentication } from "../../../shared/contracts/payments";
import type { DiscountLine } from "../coupons/discount";
import { RefundStatus, TransactionStatus, TransactionType } from "../states";
import { type OutboxEvent, outboxEventSchema } from "./outbox-event";

/** One line of what a charge billed (minor units; a credit negative). */
export interface BilledLine {
	/** A plan's period, a change's two lines (records/change-quote.ts), or usage (usage/usage-lines.ts). */
	kind: ChargedLineKind;
	productId: number;
	quantity: number;
	unitAmount: number;
	/** As the price states it (tax included or not, by `Billed.tax`). */
	amount: number;
	from: Date | null;
	to: Date | null;
	/** Its own tax when it differs from the charge's (a change's old plan); absent: `Billed.tax`. */
	tax?: { rateBps: number; inclusive: boolean };
	usage?: UsageDetail;
}

/** What a charge billed, kept at charge time: its invoice is built from it (pricing/billed.ts). */
export interface Billed {
	lines: BilledLine[];
	tax: { rateBps: number; inclusive: boolean };
}

export interface TransactionDoc {
	_id: number;
	accountId: number;
	customerId: number;
	timestamp: Date;
	success: boolean;
	type: TransactionType;
	/** Minor units; negative for refunds. */
	amount: number;
	currency: string;
	currencyId: number;
	productId: number;
	/** The payments service's number of the payment operation: the API shows it as the transaction's `transactionId`. */
	processorTransactionId: number | null;
	/** The processor's own id of it (Stripe `pi_…`, `re_…`; sandbox `sbx_…`); null when no processor made it (a chargeback, a decline no MID could take). */
	processorReference: string | null;
	/** A first payment's 3-D Secure authentication; null on the others. */
	authentication: Authentication | null;
	midId: number;
	midName: string;
	refundStatus: RefundStatus;
	status: TransactionStatus;
	paymentMethod: string;
	declineReason: string | null;
	declineCategory: DeclineCategory | null;
	idempotencyKey: string;
	/** Minor units that can still be refunded; reserved atomically before the processor is asked. */
	refundableRemaining: number;
	/**
	 * Refunds holding a reservation on `refundableRemaining` that is not settled
	 * yet: added in the reserving update, removed in the update that gives the
	 * amount back or after the REFUNDED transaction is recorded (refund-ledger.ts).
	 */
	pendingRefunds: string[];
	/** For a REFUNDED transaction: the transaction it refunds. */
	originalTransactionId: number | null;
	/** Minor units of the customer's credit that paid part of this charge (a renewal or a change, issue 36): `amount` is what the card paid. Absent: none. */
	creditApplied?: number;
	/** What the charge billed (lines and tax), for its invoice: every charge, hold and capture keeps it; absent on refunds and chargebacks. */
	billed?: Billed;
	/** The coupon's discount on this charge (coupons/discount.ts): `amount` is what the list price lost, before credit and tax. Absent: none. */
	discount?: DiscountLine;
	outbox: OutboxEvent[];
	relayed: string[];
	/** Counted in the metrics as it was written (its entry on its event, entries/); absent: older, for the backfill. */
	metricsCounted?: boolean;
}

const options = { versionKey: false } as const;

export const transactionSchema = new Schema<TransactionDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		timestamp: { type: Date, required: true },
		success: { type: Boolean, required: true },
		type: { type: String, enum: Object.values(TransactionType), required: true },
		amount: { type: Number, required: true },
		currency: { type: String, required: true },
		currencyId: { type: Number, required: true },
		productId: { type: Number, required: true },
		processorTransactionId: { type: Number, default: null },
		processorReference: { type: String, default: null },
		authentication: { type: Schema.Types.Mixed, default: null },
		midId: { type: Number, required: true },
		midName: { type: String, required: true },
		refundStatus: { type: String, enum: Object.values(RefundStatus), required: true },
		status: { type: String, enum: Object.values(TransactionStatus), required: true },
		paymentMethod: { type: String, required: true },
		declineReason: { type: String, default: null },
		declineCategory: { type: String, enum: [...Object.values(DeclineCategory), null], default: null },
		idempotencyKey: { type: String, required: true },
		refundableRemaining: { type: Number, required: true, min: 0 },
		pendingRefunds: { type: [String], default: [] },
		originalTransactionId: { type: Number, default: null },
		creditApplied: { type: Number, default: undefined },
		billed: { type: Schema.Types.Mixed, default: undefined },
		discount: { type: Schema.Types.Mixed, default: undefined },
		outbox: { type: [outboxEventSchema], default: [] },
		relayed: { type: [String], default: [] },
		metricsCounted: { type: Boolean, required: false },
	},
	options,
);
// One transaction per processor operation, even if a step is retried.
transactionSchema.index({ idempotencyKey: 1 }, { unique: true });
transactionSchema.index({ customerId: 1, _id: 1 });
