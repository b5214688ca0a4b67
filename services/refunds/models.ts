// The refunds service's collection: one record per Idempotency-Key, holding
// the first answer so a repeated request gets it again and refunds nothing more.
import { type Connection, type Model, Schema } from "mongoose";

export interface RefundRequestDoc {
	/** `<accountId>:<Idempotency-Key>` */
	_id: string;
	/** Hash of the request's parameters: a key reused with others is refused. */
	fingerprint: string;
	/** The refund id billing knows the operation by; derived once, reused by every repeat. */
	refundId: string;
	answer: { success: boolean; message: string } | null;
	createdAt: Date;
}

const refundRequestSchema = new Schema<RefundRequestDoc>(
	{
		_id: String,
		fingerprint: { type: String, required: true },
		refundId: { type: String, required: true },
		answer: { type: Schema.Types.Mixed, default: null },
		createdAt: { type: Date, required: true },
	},
	{ versionKey: false },
);

export interface RefundsDb {
	refundRequests: Model<RefundRequestDoc>;
}

export function createRefundsDb(connection: Connection): RefundsDb {
	return { refundRequests: connection.model("RefundRequest", refundRequestSchema, "refund_requests") };
}
