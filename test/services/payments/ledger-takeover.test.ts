// The ledger when a call outlives its deciding time and another call takes its
// operation over (issue 45, item 9): the call taken over may neither answer
// nor record an outcome the ledger does not hold, and a takeover that read the
// operation before the first call remembered its processor object must not
// win. These interleavings last microseconds inside one payments node, so they
// are driven here, against the real database, by decisions the test releases
// step by step, and by the ledger's own clock; the renewals' view of the same
// sequence over HTTP is test/services/billing/renewal-in-flight.test.ts.
import mongoose, { type Connection } from "mongoose";
import type { ConnectorOutcome, Remember } from "../../../services/payments/connectors/connector";
import { createLedger, type Decision, type OperationRecord } from "../../../services/payments/ledger/ledger";
import { takeOver } from "../../../services/payments/ledger/ledger-writes";
import { createPaymentsModels, type PaymentsDb } from "../../../services/payments/models";
import { uniqueDatabaseName } from "../../setup/app";

let connection: Connection;
let db: PaymentsDb;

beforeAll(async () => {
	connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: uniqueDatabaseName(), autoCreate: false }).asPromise();
	db = createPaymentsModels(connection);
});
afterAll(() => connection?.close());

const DECIDING_MS = 1000;
const record: OperationRecord = {
	kind: "charge",
	initiator: "merchant",
	midId: 1,
	processor: "sandbox",
	cardToken: "card_ledger",
	amount: 999,
	currency: "EUR",
	target: null,
};
let serial = 0;
const keyFor = () => `renewal:ledger-${++serial}:0`;

/** The ledger's clock, moved by the test. */
function testClock() {
	let at = Date.now();
	return { now: () => new Date(at), pass: (ms: number) => void (at += ms) };
}

/** A promise the test resolves. */
function gate() {
	let open: () => void = () => undefined;
	const opened = new Promise<void>(resolve => {
		open = resolve;
	});
	return { open, opened };
}

const approved = (reference: string | null): ConnectorOutcome => ({ status: "APPROVED", reference, reason: null, hardDecline: false });
const neverSent: ConnectorOutcome = {
	status: "ERROR",
	reference: null,
	reason: "processor_unavailable",
	hardDecline: false,
	neverSent: true,
};

/** A decision the test steps through: it asks `steps` in turn, then answers `outcome`. */
function decision(outcome: ConnectorOutcome, steps: ((remember: Remember) => Promise<void>)[] = []): Decision {
	return {
		decidingMs: DECIDING_MS,
		// What was remembered of the first call is looked up: here nothing moved for it.
		resume: async () => null,
		decide: async remember => {
			for (const step of steps) await step(remember);
			return outcome;
		},
	};
}

/** Resolves once the operation of `key` matches `check`. */
async function operationWhere(key: string, check: (op: { reference: string | null } | null) => boolean): Promise<void> {
	for (let i = 0; i < 200; i++) {
		if (check(await db.operations.findById(key).lean())) return;
		await new Promise(resolve => setTimeout(resolve, 10));
	}
	throw new Error(`operation ${key} never matched`);
}

test("When a call is taken over after its deciding time and the taker finds nothing moved, then the first call's later approval is not answered: the ledger holds none, and the key is asked again later", async () => {
	// Arrange: call A decides slowly; its time passes; call B takes the key over, its processor refuses (nothing moved).
	const clock = testClock();
	const ledger = createLedger(db, clock.now);
	const key = keyFor();
	const slow = gate();
	const first = ledger.once(key, record, decision(approved(null), [() => slow.opened]));
	await operationWhere(key, op => op !== null);
	clock.pass(DECIDING_MS + 1);
	const second = await ledger.once(key, record, decision(neverSent));

	// Act: A's decision comes at last.
	slow.open();
	const late = await first;

	// Assert: B was told nothing moved, and the key is free; A is not told of an approval nobody recorded.
	expect(second).toMatchObject({ status: "ERROR", reason: "processor_unavailable" });
	expect(await db.operations.findById(key).lean()).toBeNull();
	expect(late).toMatchObject({ status: "ERROR", reason: "operation_in_progress" });
});

test("When a call takes a key over while the first call remembers its processor object, then the takeover fails and the remembered object is looked up, never charged beside", async () => {
	// Arrange: call A has made its object; B read the operation before A remembered it, and A's time is up.
	const clock = testClock();
	const ledger = createLedger(db, clock.now);
	const key = keyFor();
	const made = gate();
	const remembered = gate();
	const confirm = gate();
	const first = ledger.once(
		key,
		record,
		decision(approved("pi_first"), [
			() => made.opened,
			async remember => {
				await remember("pi_first");
				remembered.open();
			},
			() => confirm.opened,
		]),
	);
	await operationWhere(key, op => op !== null);
	clock.pass(DECIDING_MS + 1);
	const readByB = (await db.operations.findById(key).lean())!;

	// Act: A remembers its object, then B's compare-and-set on what it read.
	made.open();
	await remembered.opened;
	const taken = await takeOver({ db, now: clock.now, threw: () => undefined }, readByB, DECIDING_MS);
	confirm.open();
	const answer = await first;

	// Assert: B does not hold the key (it would have looked up nothing and made a second object); A records its charge.
	expect(taken).toBeNull();
	expect(answer).toMatchObject({ status: "APPROVED", processorReference: "pi_first" });
	expect((await db.operations.findById(key).lean())?.outcome).toMatchObject({ status: "APPROVED", processorReference: "pi_first" });
});
