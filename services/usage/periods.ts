// A customer's periods as usage knows them (docs/usage.md#time): which period
// an event's timestamp falls in, and whether that period still takes events.
// Billing tells the bounds: when usage first hears of a customer
// (billing.usageSubjects), and at each charge that closes a period
// (period-close.ts). A period's number is the charges made on its schedule
// before it (a trial is period 0), so every node keys the same event alike.
import { config } from "../../shared/config";
import type { UsageSubject } from "../../shared/contracts/usage";
import { insertAllOnce } from "../../shared/persistence";
import type { UsageDeps } from "./deps";
import type { PeriodsDoc } from "./models";

/** How far ahead of the account's now a timestamp may be (clocks differ). */
export const FUTURE_MS = 5 * 60_000;

export type EventRefusal = "TIMESTAMP_IN_FUTURE" | "PERIOD_CLOSED" | "SUBSCRIPTION_ENDED";

export type Placement = { period: number; late: boolean } | { refused: EventRefusal };

/** The period an event at `at` counts in, the account's time being `now`; or why it counts in none. */
export function placeEvent(doc: PeriodsDoc, at: Date, now: Date): Placement {
	const t = at.getTime();
	if (t > now.getTime() + FUTURE_MS) return { refused: "TIMESTAMP_IN_FUTURE" };
	if (doc.endedAt) return { refused: t >= doc.endedAt.getTime() ? "SUBSCRIPTION_ENDED" : "PERIOD_CLOSED" };
	const { current, previous } = doc;
	// Past the scheduled end: the next period, whose start is that end, though its charge has not closed this one yet.
	if (current.end && t >= current.end.getTime()) return { period: current.period + 1, late: false };
	if (!current.start || t >= current.start.getTime()) return { period: current.period, late: false };
	const open = doc.lateUntil !== null && now.getTime() < doc.lateUntil.getTime();
	if (previous && open && (!previous.start || t >= previous.start.getTime())) return { period: previous.period, late: true };
	return { refused: "PERIOD_CLOSED" };
}

/** When a closed period's late events stop counting: its end plus the grace, and never after the next period's end. */
export function lateUntil(end: Date, nextEnd: Date | null): Date {
	const grace = end.getTime() + config().usageGraceHours * 3_600_000;
	return new Date(nextEnd ? Math.min(grace, nextEnd.getTime()) : grace);
}

const date = (value: string | null) => (value === null ? null : new Date(value));

function fromSubject(accountId: number, subject: UsageSubject, now: Date): PeriodsDoc {
	return {
		_id: subject.customerId,
		accountId,
		current: { period: subject.period, start: date(subject.start), end: date(subject.end) },
		previous: null,
		lateUntil: null,
		endedAt: date(subject.endedAt),
		createdAt: now,
	};
}

/**
 * The periods of the account's customers among `customerIds`, by customer; one unknown or of another account is left
 * out. A customer heard of for the first time is asked of billing, and written once (a concurrent batch's write wins).
 */
export async function periodsOf(deps: UsageDeps, accountId: number, customerIds: number[]): Promise<Map<number, PeriodsDoc>> {
	const ids = [...new Set(customerIds)];
	const found = await deps.db.periods.find({ _id: { $in: ids } }).lean();
	const known = new Map<number, PeriodsDoc>(found.map(doc => [doc._id, doc as PeriodsDoc]));
	const missing = ids.filter(id => !known.has(id));
	if (missing.length) for (const doc of await firstHeard(deps, accountId, missing)) known.set(doc._id, doc);
	for (const [id, doc] of known) if (doc.accountId !== accountId) known.delete(id);
	return known;
}

/** Whether the customer is the account's: as usage knows it, else as billing does (a read: nothing is written). */
export async function isCustomerOf(deps: UsageDeps, accountId: number, customerId: number): Promise<boolean> {
	const known = await deps.db.periods.findById(customerId, { accountId: 1 }).lean();
	if (known) return known.accountId === accountId;
	return (await deps.call("billing.usageSubjects", { accountId, customerIds: [customerId] })).length > 0;
}

/** The periods of customers usage never heard of, from billing, written once: a concurrent batch's (or close's) write wins. */
async function firstHeard(deps: UsageDeps, accountId: number, customerIds: number[]): Promise<PeriodsDoc[]> {
	const subjects = await deps.call("billing.usageSubjects", { accountId, customerIds });
	const docs = subjects.map(subject => fromSubject(accountId, subject, deps.now()));
	if (await insertAllOnce(deps.db.periods, docs)) return docs;
	return (await deps.db.periods.find({ _id: { $in: docs.map(doc => doc._id) } }).lean()) as PeriodsDoc[];
}
