// The audit log: every sign-in and every change made through the dashboard,
// who, what, when and from where, newest first, listed per account in a
// timeline (shared/timeline.ts) before it is stored.
import { randomUUID } from "node:crypto";
import type { AuditInput } from "../../shared/contracts/dashboard";
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, filtersKey, type ListError, type Page, pageNewestFirst } from "../../shared/list-page";
import { append, refsBelow } from "../../shared/timeline";
import type { DashboardDeps } from "./deps";
import type { AuditDoc } from "./models";

const auditOf = (accountId: number) => `a:${accountId}`;

export interface AuditEntry {
	id: string;
	at: string;
	email: string;
	action: string;
	target: string | null;
	outcome: string;
	from: string;
}

export async function recordAudit(deps: DashboardDeps, input: AuditInput): Promise<{ id: string }> {
	const doc: AuditDoc = { _id: randomUUID(), at: deps.now(), ...input };
	await append(deps.db.timelines, auditOf(input.accountId), [[doc._id, doc.at.getTime()]]);
	await deps.db.audit.create(doc);
	return { id: doc._id };
}

export async function listAudit(
	deps: DashboardDeps,
	input: { accountId: number; cursor?: string; limit?: number },
): Promise<Page<AuditEntry> | ListError> {
	const filters = filtersKey({ list: "audit" });
	let below: number | null = null;
	if (input.cursor !== undefined) {
		const position = decodeCursor(input.cursor, input.accountId, filters);
		if (typeof position === "string") return position;
		below = position;
	}
	const { items, next } = await pageNewestFirst<AuditDoc>({
		read: (from, count) => refsBelow(deps.db.timelines, auditOf(input.accountId), from, count),
		load: async ids => new Map((await deps.db.audit.find({ _id: { $in: ids } }).lean()).map(d => [d._id, d])),
		keep: doc => doc.accountId === input.accountId,
		limit: input.limit ?? DEFAULT_LIMIT,
		below,
	});
	return {
		data: items.map(d => ({
			id: d._id,
			at: d.at.toISOString(),
			email: d.email,
			action: d.action,
			target: d.target,
			outcome: d.outcome,
			from: d.from,
		})),
		nextCursor: next === null ? null : encodeCursor(input.accountId, filters, next),
	};
}
