// The sandbox's disputes and fraud warnings reach billing when its clock passes
// them: every hour with the renewal cycle (all accounts), and when a sandbox
// account's test clock moves (that account's, up to its new time). Each notice
// is applied, then named done; one that failed is answered again next time.

import type { BillingDeps } from "../deps";
import type { RelayTargets } from "../outbox/outbox-relay";
import { applyNotice } from "./notices";

export interface SandboxNoticesReport {
	applied: number;
	failed: number;
	toRelay: RelayTargets;
}

export async function applySandboxNotices(
	deps: BillingDeps,
	input: { until: Date; accountId?: number; onError?: (noticeId: string, err: Error) => void },
): Promise<SandboxNoticesReport> {
	const notices = await deps.payments.sandboxNotices({ until: input.until, accountId: input.accountId });
	const done: string[] = [];
	const toRelay: Required<Pick<RelayTargets, "customers" | "transactions" | "disputes">> = {
		customers: [],
		transactions: [],
		disputes: [],
	};
	const failedCharges = new Set<string>();
	for (const notice of notices) {
		// A charge's later notices wait for its earlier ones (a dispute is opened before it is decided).
		if (failedCharges.has(notice.chargeKey)) continue;
		try {
			const applied = await applyNotice(deps, notice);
			if (typeof applied !== "string") {
				toRelay.customers.push(...(applied.toRelay.customers ?? []));
				toRelay.transactions.push(...(applied.toRelay.transactions ?? []));
				toRelay.disputes.push(...(applied.toRelay.disputes ?? []));
			}
			done.push(notice.id);
		} catch (err) {
			failedCharges.add(notice.chargeKey);
			input.onError?.(notice.id, err as Error);
		}
	}
	await deps.payments.sandboxNoticesDone(done);
	return { applied: done.length, failed: notices.length - done.length, toRelay };
}
