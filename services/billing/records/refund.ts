// The refunds collection: one refund by its id, its reservation on the
// original transaction, and the lease of who may settle it now.
import { Schema } from "mongoose";
import { type Lease, leaseSchema } from "../../../shared/persistence";
import { RefundRecordStatus } from "../states";

/** A refund: reserved on the original transaction, then done by the processor, or given back. */
export interface RefundDoc {
	_id: string;
	accountId: number;
	transactionId: number;
	amount: number;
	status: RefundRecordStatus;
	refundTransactionId: number | null;
	createdAt: Date;
	settledAt: Date | null;
	/**
	 * Who may settle a RESERVED refund right now: the request that made it, a
	 * repeat of that request, or a billing node's recovery sweep (refund-recovery.ts).
	 * One at a time; a holder that dies lets it expire.
	 */
	lease: Lease | null;
}

const options = { versionKey: false } as const;

export const refundSchema = new Schema<RefundDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		transactionId: { type: Number, required: true },
		amount: { type: Number, required: true },
		status: { type: String, enum: Object.values(RefundRecordStatus), required: true },
		refundTransactionId: { type: Number, default: null },
		createdAt: { type: Date, required: true },
		settledAt: { type: Date, default: null },
		lease: { type: leaseSchema(), default: null },
	},
	options,
);
// The recovery sweep looks for RESERVED refunds, which are few.
refundSchema.index({ status: 1, createdAt: 1 });
