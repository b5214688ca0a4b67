// Every status write in billing is built here from the state machines' tables
// (states.ts), by shared/state-machine.ts: the filter that the record is still
// in a state it may leave, and the $set of the state it moves to.
import { stateMachine } from "../../shared/state-machine";
import {
	CUSTOMER_TRANSITIONS,
	type CustomerStatus,
	DISPUTE_TRANSITIONS,
	type DisputeStatus,
	REFUND_RECORD_TRANSITIONS,
	REFUND_STATUS_TRANSITIONS,
	type RefundRecordStatus,
	type RefundStatus,
} from "./states";

/** A customer's status (CUSTOMER_TRANSITIONS). */
export const customerMove = stateMachine<"status", CustomerStatus>("customer", "status", CUSTOMER_TRANSITIONS);
/** A transaction's refundStatus (REFUND_STATUS_TRANSITIONS). */
export const refundStatusMove = stateMachine<"refundStatus", RefundStatus>("refund status", "refundStatus", REFUND_STATUS_TRANSITIONS);
/** A refund record's status (REFUND_RECORD_TRANSITIONS). */
export const refundRecordMove = stateMachine<"status", RefundRecordStatus>("refund", "status", REFUND_RECORD_TRANSITIONS);
/** A dispute's status (DISPUTE_TRANSITIONS). */
export const disputeMove = stateMachine<"status", DisputeStatus>("dispute", "status", DISPUTE_TRANSITIONS);

/** Whether the customer's table lets it move from `from` to `to`. */
export function customerMayMove(from: CustomerStatus, to: CustomerStatus): boolean {
	return CUSTOMER_TRANSITIONS[from].includes(to);
}

/** Whether the dispute's table lets it move from `from` to `to` (a late notice of an earlier stage does not). */
export function disputeMayMove(from: DisputeStatus, to: DisputeStatus): boolean {
	return DISPUTE_TRANSITIONS[from].includes(to);
}
