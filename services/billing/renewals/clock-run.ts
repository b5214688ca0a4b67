// The sandbox test clock's run (POST /admin/accounts/{id}/clock): the account's
// time moves to `advanceTo` step by step, and everything that falls due on the
// way happens at its own time, in time order (docs/api.md#the-accounts-now):
// each renewal, retry, resume, card-expiry warning and sandbox dispute notice.
//   - A step starts at the earliest time something of the account is due
//     (nextDue) and covers at most an hour from there, never reaching the next
//     dispute notice: the notices due at its start first, then the renewal
//     cycle up to its end (resumes, renewals, warnings), each renewal charged at
//     its own due time. What a step does falls due an hour later at the
//     earliest (a MID's refusal retried), so nothing it makes is due inside it.
//   - The account's clock moves with the steps, and the run ends at
//     `advanceTo`, which every billing node hears of before the run answers.
//   - One run at a time per account, whatever the node (account-time.ts).
import { randomUUID } from "node:crypto";
import type { BillingDeps } from "../deps";
import { warningTime } from "../expiry-warnings";
import type { CustomerDoc } from "../records/customer";
import { CustomerStatus } from "../states";
import type { CycleReport } from "./renewal-batch";

const HOUR_MS = 3_600_000;

/** What a clock run needs of its node (wiring/background.ts). */
export interface ClockRunner {
	deps: BillingDeps;
	/** This node's name, for the run's lease. */
	owner: string;
	runCycle(options: { at: Date; from: Date; readFrom?: Date; accountId: number }): Promise<CycleReport>;
	applySandboxNotices(until: Date, accountId: number): Promise<void>;
	/** Tells the other billing nodes the account's clock moved (billing.clockMoved), waiting for their answers. */
	tellBillingNodes(accountId: number, at: Date): Promise<void>;
}

const NOTHING: CycleReport = { charged: 0, declined: 0, suspended: 0, skipped: 0, cardExpiryWarnings: 0, resumed: 0, ended: 0 };

function added(a: CycleReport, b: CycleReport): CycleReport {
	return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + b[k as keyof CycleReport]])) as unknown as CycleReport;
}

/**
 * Runs the account's clock to `target`; null when `target` is before the account's now as the call finds it (the
 * clock only moves forward). A call that waited for another run to end finds nothing left to do when that run moved the
 * clock to `target` or past it: it answers an empty report, as a repeat of a move already made.
 */
export async function runClock(runner: ClockRunner, accountId: number, target: Date): Promise<CycleReport | null> {
	const { clocks } = runner.deps;
	if (target.getTime() < (await clocks.now(accountId)).getTime()) return null;
	return clocks.exclusively(accountId, `${runner.owner}/${randomUUID()}`, async renew => {
		const from = await clocks.now(accountId);
		if (target.getTime() < from.getTime()) return NOTHING;
		let report = NOTHING;
		const otherAccounts = new Set<number>();
		let last: Date | null = null;
		for (;;) {
			const due = await nextDue(runner.deps, { accountId, after: last, until: target }, otherAccounts);
			if (!due) break;
			const at = new Date(Math.max(due.at.getTime(), from.getTime()));
			const end = stepEnd(at, target, due.noticeAfter);
			await clocks.moved(accountId, at);
			await renew();
			if (due.notices) await runner.applySandboxNotices(at, accountId);
			report = added(report, await runner.runCycle({ at: end, from: at, readFrom: last ?? undefined, accountId }));
			last = end;
		}
		await clocks.moved(accountId, target);
		await runner.tellBillingNodes(accountId, target);
		return report;
	});
}

/** A step covers an hour at most, up to the target, and ends before the next dispute notice. */
function stepEnd(at: Date, target: Date, noticeAfter: Date | null): Date {
	const ends = [at.getTime() + HOUR_MS, target.getTime(), ...(noticeAfter ? [noticeAfter.getTime() - 1] : [])];
	return new Date(Math.max(at.getTime(), Math.min(...ends)));
}

interface Window {
	accountId: number;
	/** The end of the last step: what was due by then was done (or held by another node, and left to it). */
	after: Date | null;
	until: Date;
}

/**
 * The earliest time after `after` and by `until` at which something of the account falls due, whether sandbox
 * notices are due by then, and the first notice after it; null when nothing falls due. `otherAccounts` keeps the ids listed that are other accounts'
 * customers, so each is read once per run.
 */
async function nextDue(
	deps: BillingDeps,
	window: Window,
	otherAccounts: Set<number>,
): Promise<{ at: Date; notices: boolean; noticeAfter: Date | null } | null> {
	const now = deps.now();
	const listed = await Promise.all(
		[deps.renewals, deps.resumes, deps.cardExpiry].map(schedule =>
			schedule.due(window.until, now, { moveCursor: false, from: window.after ?? undefined }),
		),
	);
	const ids = [...new Set(listed.flat().map(listing => listing.id))].filter(id => !otherAccounts.has(id));
	const customers = ids.length ? await deps.db.customers.find({ _id: { $in: ids } }).lean() : [];
	const times: number[] = [];
	const after = window.after?.getTime() ?? Number.NEGATIVE_INFINITY;
	for (const customer of customers) {
		if (customer.accountId !== window.accountId) otherAccounts.add(customer._id);
		// An ended subscription's final usage charge a failure left due (usage/final-usage.ts): in the next step.
		else if (customer.finalUsage?.state === "DUE") times.push(Math.max(new Date(customer.finalUsage.end).getTime(), after + 1));
		else times.push(...dueTimes(customer));
	}
	const notices = (await deps.payments.sandboxNotices({ until: window.until, accountId: window.accountId })).map(n =>
		new Date(n.at).getTime(),
	);
	const first = Math.min(...[...times, ...notices].filter(t => t > after && t <= window.until.getTime()));
	if (!Number.isFinite(first)) return null;
	const noticeAfter = Math.min(...notices.filter(t => t > first));
	return {
		at: new Date(first),
		// Notices due by the step's start are applied first (those before it a failed one held back, again).
		notices: notices.some(t => t <= first),
		noticeAfter: Number.isFinite(noticeAfter) ? new Date(noticeAfter) : null,
	};
}

/** When the customer's renewal (or retry), resume or card-expiry warning falls due, in the account's time. */
function dueTimes(customer: CustomerDoc): number[] {
	if (customer.status === CustomerStatus.Paused) return customer.pause?.resumeAt ? [customer.pause.resumeAt.getTime()] : [];
	if (customer.status !== CustomerStatus.Active || !customer.renewalActive || !customer.nextRenewalTimestamp) return [];
	const warning = customer.expiryWarnedCard === customer.cardToken ? null : warningTime(customer);
	return [customer.nextRenewalTimestamp.getTime(), ...(warning ? [warning.getTime()] : [])];
}
