// Ops: the sandbox processor's operations from the ledger, to check what it was asked to do.
import type { PaymentOutcome } from "../../shared/contracts/payments";
import type { PaymentsDeps } from "./deps";
import type { OperationKind } from "./models";

export interface SandboxOperationView {
	idempotencyKey: string;
	kind: OperationKind;
	initiator: "customer" | "merchant" | null;
	amount: number;
	currency: string | null;
	midId: number | null;
	card: { bin: string; last4: string } | null;
	outcome: PaymentOutcome | null;
	createdAt: Date;
}

/** At most 1,000, oldest first. An ops listing, not a hot path: it filters by fields without an index. */
export async function listSandboxOperations(
	deps: PaymentsDeps,
	input: { cardBin?: string; kind?: OperationKind; status?: "APPROVED" | "DECLINED"; midId?: number },
): Promise<SandboxOperationView[]> {
	const { db } = deps;
	const cards = input.cardBin ? await db.vault.find({ bin: input.cardBin }, { bin: 1, last4: 1 }).lean() : null;
	const filter: Record<string, unknown> = { processor: "sandbox" };
	if (cards) filter.cardToken = { $in: cards.map(c => c._id) };
	if (input.kind) filter.kind = input.kind;
	if (input.status) filter["outcome.status"] = input.status;
	if (input.midId) filter.midId = input.midId;
	const operations = await db.operations.find(filter).sort({ createdAt: 1 }).limit(1000).lean();
	const shown = cards ?? (await db.vault.find({ _id: { $in: operations.map(o => o.cardToken) } }, { bin: 1, last4: 1 }).lean());
	const vault = new Map(shown.map(c => [c._id, c]));
	return operations.map(o => {
		const card = o.cardToken ? vault.get(o.cardToken) : undefined;
		return {
			idempotencyKey: o._id,
			kind: o.kind,
			initiator: o.initiator,
			amount: o.amount,
			currency: o.currency,
			midId: o.midId,
			card: card ? { bin: card.bin, last4: card.last4 } : null,
			outcome: o.outcome,
			createdAt: o.createdAt,
		};
	});
}
