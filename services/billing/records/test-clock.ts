// The test_clocks collection: a sandbox account's test clock, keyed by the
// account's id (account-time.ts at billing's top level). Only sandbox
// accounts have one; `at` only moves forward.
import { Schema } from "mongoose";
import { type Lease, leaseSchema } from "../../../shared/persistence";

export interface TestClockDoc {
	/** The account's id. */
	_id: number;
	/** The furthest time the clock was moved to: the account's now until the real time passes it. */
	at: Date;
	/** The clock run moving it (renewals/clock-run.ts): one at a time per account. */
	run: Lease | null;
}

export const testClockSchema = new Schema<TestClockDoc>(
	{ _id: Number, at: { type: Date, required: true }, run: { type: leaseSchema(), default: null } },
	{ versionKey: false },
);
