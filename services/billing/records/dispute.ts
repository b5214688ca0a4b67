// The disputes collection, unique by the processor's dispute, with its events'
// outbox; and processor_events, the processors' events applied, so a repeat is
// not applied again.
import { Schema } from "mongoose";
import type { DisputeEvidence } from "../../../shared/contracts/payments";
import { DisputeStatus } from "../states";
import { type OutboxEvent, outboxEventSchema } from "./outbox-event";

/** A dispute of one transaction, as its processor reported it (disputes/notices.ts), with its events' outbox. */
export interface DisputeDoc {
	_id: number;
	accountId: number;
	customerId: number;
	/** The disputed transaction (ours). */
	transactionId: number;
	midId: number;
	/** `<midId>:<the processor's dispute id>`: a processor's notices find their dispute by it (unique). */
	processorKey: string;
	/** The processor's id of the dispute (Stripe `du_…`, the sandbox `sbxdp_…`). */
	processorReference: string;
	status: DisputeStatus;
	reason: string;
	/** Minor units of `currency`. */
	amount: number;
	currency: string;
	evidenceDueBy: Date | null;
	evidence: DisputeEvidence | null;
	evidenceSubmittedAt: Date | null;
	/** A lost dispute's CHARGEBACK transaction. */
	chargebackTransactionId: number | null;
	openedAt: Date;
	updatedAt: Date;
	closedAt: Date | null;
	outbox: OutboxEvent[];
	relayed: string[];
	/** Counted in the metrics as it was opened (its entry on DISPUTE_OPENED); absent: older, for the backfill. */
	metricsCounted?: boolean;
}

const options = { versionKey: false } as const;

export const disputeSchema = new Schema<DisputeDoc>(
	{
		_id: Number,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		transactionId: { type: Number, required: true },
		midId: { type: Number, required: true },
		processorKey: { type: String, required: true },
		processorReference: { type: String, required: true },
		status: { type: String, enum: Object.values(DisputeStatus), required: true },
		reason: { type: String, required: true },
		amount: { type: Number, required: true },
		currency: { type: String, required: true },
		evidenceDueBy: { type: Date, default: null },
		evidence: { type: Schema.Types.Mixed, default: null },
		evidenceSubmittedAt: { type: Date, default: null },
		chargebackTransactionId: { type: Number, default: null },
		openedAt: { type: Date, required: true },
		updatedAt: { type: Date, required: true },
		closedAt: { type: Date, default: null },
		outbox: { type: [outboxEventSchema], default: [] },
		relayed: { type: [String], default: [] },
		metricsCounted: { type: Boolean, required: false },
	},
	options,
);
// One dispute per processor dispute, however often its notices come.
disputeSchema.index({ processorKey: 1 }, { unique: true });

/**
 * An event a processor sent to a MID's endpoint (a Stripe event, an Adyen notification item), once applied
 * (disputes/processor-events.ts): the processor's repeat is not applied again.
 */
export interface ProcessorEventDoc {
	/** `<midId>:<the processor's id of the event>` (Stripe's `evt_…`; Adyen's `<eventCode>:<pspReference>`). */
	_id: string;
	midId: number;
	/** The dispute's or the warning's id at the processor (Stripe's `du_…`, `issfr_…`; Adyen's disputed payment). */
	reference: string;
	appliedAt: Date;
}

export const processorEventSchema = new Schema<ProcessorEventDoc>(
	{ _id: String, midId: Number, reference: String, appliedAt: Date },
	options,
);
