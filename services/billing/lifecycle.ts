// Every status write in billing is built here from the state machines' tables
// (states.ts): the filter that the document is still in a state it may leave,
// and the $set of the state it moves to. A move the table does not allow is
// refused when it is built; most are built once, at module load.
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

/** One move of a state machine: `filter` goes into the update's filter, `set` into its $set. */
export interface Move<F extends string, S extends string> {
	filter: Record<F, S | { $in: S[] }>;
	set: Record<F, S>;
}

/** Thrown when code asks for a move its table does not allow: a bug, never a request's fault. */
export class ForbiddenMove extends Error {}

function machine<F extends string, S extends string>(name: string, field: F, table: Record<S, S[]>) {
	return (from: S | readonly S[], to: S): Move<F, S> => {
		const froms: S[] = typeof from === "string" ? [from] : [...from];
		const refused = froms.filter(state => !table[state].includes(to));
		if (froms.length === 0 || refused.length > 0) throw new ForbiddenMove(`${name}: ${froms.join(", ")} -> ${to} is not in its table`);
		const filter = { [field]: froms.length === 1 ? froms[0] : { $in: froms } } as Move<F, S>["filter"];
		return { filter, set: { [field]: to } as Move<F, S>["set"] };
	};
}

/** A customer's status (CUSTOMER_TRANSITIONS). */
export const customerMove = machine<"status", CustomerStatus>("customer", "status", CUSTOMER_TRANSITIONS);
/** A transaction's refundStatus (REFUND_STATUS_TRANSITIONS). */
export const refundStatusMove = machine<"refundStatus", RefundStatus>("refund status", "refundStatus", REFUND_STATUS_TRANSITIONS);
/** A refund record's status (REFUND_RECORD_TRANSITIONS). */
export const refundRecordMove = machine<"status", RefundRecordStatus>("refund", "status", REFUND_RECORD_TRANSITIONS);
/** A dispute's status (DISPUTE_TRANSITIONS). */
export const disputeMove = machine<"status", DisputeStatus>("dispute", "status", DISPUTE_TRANSITIONS);

/** Whether the customer's table lets it move from `from` to `to`. */
export function customerMayMove(from: CustomerStatus, to: CustomerStatus): boolean {
	return CUSTOMER_TRANSITIONS[from].includes(to);
}

/** Whether the dispute's table lets it move from `from` to `to` (a late notice of an earlier stage does not). */
export function disputeMayMove(from: DisputeStatus, to: DisputeStatus): boolean {
	return DISPUTE_TRANSITIONS[from].includes(to);
}
