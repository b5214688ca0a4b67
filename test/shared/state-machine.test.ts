// Every status write is built from its state machine's table (shared/state-machine.ts): every move a table allows
// builds, any other is refused. Billing's machines (lifecycle.ts), the session's and the webhook delivery's.
import { customerMove, disputeMove, refundRecordMove, refundStatusMove } from "../../services/billing/lifecycle";
import {
	CUSTOMER_TRANSITIONS,
	DISPUTE_TRANSITIONS,
	REFUND_RECORD_TRANSITIONS,
	REFUND_STATUS_TRANSITIONS,
} from "../../services/billing/states";
import { DELIVERY_TRANSITIONS, deliveryMove } from "../../services/notifications/states";
import { SESSION_TRANSITIONS, sessionMove } from "../../services/sessions/states";
import { ForbiddenMove, type Move } from "../../shared/state-machine";

type Machine = [string, Record<string, string[]>, (from: string | string[], to: string) => Move<string, string>, string];

const machines: Machine[] = [
	["customer", CUSTOMER_TRANSITIONS, customerMove as Machine[2], "status"],
	["transaction refund status", REFUND_STATUS_TRANSITIONS, refundStatusMove as Machine[2], "refundStatus"],
	["refund record", REFUND_RECORD_TRANSITIONS, refundRecordMove as Machine[2], "status"],
	["dispute", DISPUTE_TRANSITIONS, disputeMove as Machine[2], "status"],
	["session", SESSION_TRANSITIONS, sessionMove as Machine[2], "status"],
	["webhook delivery", DELIVERY_TRANSITIONS, deliveryMove as Machine[2], "status"],
];

const pairs = (table: Record<string, string[]>, allowed: boolean) =>
	Object.keys(table).flatMap(from => Object.keys(table).flatMap(to => (table[from].includes(to) === allowed ? [[from, to]] : [])));

describe.each(machines)("The %s lifecycle", (_name, table, move, field) => {
	test("When a move its table allows is built, then it filters on the state left and sets the state reached", () => {
		const moves = pairs(table, true);

		const built = moves.map(([from, to]) => move(from, to));

		expect(moves.length).toBeGreaterThan(0);
		expect(built).toEqual(moves.map(([from, to]) => ({ filter: { [field]: from }, set: { [field]: to } })));
	});

	test("When a move its table does not allow is built, then it is refused", () => {
		const refused = pairs(table, false);

		const attempts = refused.map(
			([from, to]) =>
				() =>
					move(from, to),
		);

		expect(refused.length).toBeGreaterThan(0);
		for (const attempt of attempts) expect(attempt).toThrow(ForbiddenMove);
	});
});

test("When a customer move leaves several states, then it filters on all of them, and is refused if one of them may not move", () => {
	const unsubscribe = customerMove(["ACTIVE", "SUSPENDED"] as never, "UNSUBSCRIBED" as never);
	const mixed = () => customerMove(["ACTIVE", "UNSUBSCRIBED"] as never, "SUSPENDED" as never);

	expect(unsubscribe).toEqual({ filter: { status: { $in: ["ACTIVE", "SUSPENDED"] } }, set: { status: "UNSUBSCRIBED" } });
	expect(mixed).toThrow(ForbiddenMove);
});
