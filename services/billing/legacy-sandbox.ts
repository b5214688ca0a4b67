// Versions before the payments service kept the sandbox processor's vault
// (sandbox_vault) and ledger (sandbox_operations, sandbox_transactions) in
// billing's database. When billing starts it hands what is left of them to
// payments, a batch at a time, and deletes each batch once payments has it:
// a crash in between hands the batch over again, which payments takes once.
import type { Connection } from "mongoose";
import type { Call } from "../../shared/call";

const BATCH = 200;

export async function handOverLegacySandbox(connection: Connection, call: Call): Promise<{ cards: number; operations: number }> {
	const db = connection.db;
	const moved = { cards: 0, operations: 0 };
	if (!db) return moved;
	const vault = db.collection<{ _id: string }>("sandbox_vault");
	const operations = db.collection<{ _id: string }>("sandbox_operations");
	for (;;) {
		const [cards, ops] = await Promise.all([vault.find().limit(BATCH).toArray(), operations.find().limit(BATCH).toArray()]);
		if (cards.length === 0 && ops.length === 0) break;
		await call("payments.importLegacySandbox", { cards: cards as never[], operations: ops as never[] });
		if (cards.length) await vault.deleteMany({ _id: { $in: cards.map(c => c._id) } });
		if (ops.length) await operations.deleteMany({ _id: { $in: ops.map(o => o._id) } });
		moved.cards += cards.length;
		moved.operations += ops.length;
	}
	if (moved.cards + moved.operations > 0) await db.collection("sandbox_transactions").deleteMany({});
	return moved;
}
