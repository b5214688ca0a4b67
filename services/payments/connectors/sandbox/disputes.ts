// The sandbox's disputes and early fraud warnings (docs/disputes.md#test-cards).
// An approved charge of a dispute test card is disputed, or warned about, a set
// number of days after it was made, by the charge's own time: a renewal that a
// test clock ran in the future is disputed days after that renewal. Each stage
// is a notice in sandbox_notices, listed in sandbox_notice_schedule by the day
// it is due (shared/schedule.ts). Billing asks for the notices due
// (payments.sandboxNotices) and names those it applied (sandboxNoticesDone);
// until then they are answered again, and billing applies a repeat as a no-op.
import { createHash } from "node:crypto";
import type { DisputeNotice, ProcessorNotice } from "../../../../shared/contracts/payments";
import { insertAllOnce } from "../../../../shared/persistence";
import { createSchedule } from "../../../../shared/schedule";
import type { PaymentsDb, SandboxNoticeDoc } from "../../models";
import type { MoneyOperation } from "../connector";
import type { TestCard } from "./test-cards";

const DAY_MS = 24 * 3_600_000;
/** A disputed charge's dispute opens this many days after the charge … */
export const DISPUTE_OPENS_AFTER_DAYS = 3;
/** … its evidence is due this many days after the charge … */
export const EVIDENCE_DUE_AFTER_DAYS = 10;
/** … and it is decided this many days after the charge. */
export const DISPUTE_CLOSES_AFTER_DAYS = 12;
/** An early fraud warning comes this many days after the charge. */
export const WARNING_AFTER_DAYS = 1;

/** The same charge (a repeat of its key) always makes the same references. */
const referenceOf = (prefix: string, chargeKey: string) => `${prefix}_${createHash("sha256").update(chargeKey).digest("hex").slice(0, 24)}`;
const after = (at: Date, days: number) => new Date(at.getTime() + days * DAY_MS);

export interface SandboxNotices {
	/** Lists what an approved charge of this card will bring (nothing for most cards); a repeat of the key changes nothing. */
	scheduleFor(op: MoneyOperation & { accountId: number }, card: TestCard, chargedAt: Date): Promise<void>;
	/** The notices due by `until`, oldest first; only those of `accountId` when given. */
	due(until: Date, accountId?: number): Promise<ProcessorNotice[]>;
	/** Billing applied these: they are not answered again. */
	done(ids: string[]): Promise<number>;
	/** Starts the schedule at `from` if it never ran: nothing was listed before it. */
	initialize(from: Date): Promise<void>;
	/** Evidence was submitted for a dispute: a card that wins with evidence will be won; false when it is decided already. */
	evidenceSubmitted(reference: string): Promise<boolean>;
}

export function createSandboxNotices(db: PaymentsDb, now: () => Date): SandboxNotices {
	// Day slots: a notice's slot is read until its hour has come (due() checks each notice's own time).
	const schedule = createSchedule<string>(db.sandboxNoticeSchedule, { slotMs: DAY_MS, shards: 2 });

	function noticesOf(op: MoneyOperation & { accountId: number }, card: TestCard, chargedAt: Date): SandboxNoticeDoc[] {
		const base = { midId: op.mid.midId, chargeKey: op.idempotencyKey };
		const doc = (notice: ProcessorNotice, extra: Partial<SandboxNoticeDoc> = {}): SandboxNoticeDoc => ({
			_id: notice.id,
			accountId: op.accountId,
			due: new Date(notice.at),
			notice,
			winsWithEvidence: false,
			done: false,
			createdAt: now(),
			...extra,
		});
		const docs: SandboxNoticeDoc[] = [];
		if (card.earlyFraudWarning) {
			const reference = referenceOf("sbxfw", op.idempotencyKey);
			const at = after(chargedAt, WARNING_AFTER_DAYS).toISOString();
			docs.push(doc({ kind: "earlyFraudWarning", id: `${reference}:warning`, reference, at, fraudType: card.earlyFraudWarning, ...base }));
		}
		if (card.dispute) {
			const reference = referenceOf("sbxdp", op.idempotencyKey);
			const dispute: Omit<DisputeNotice, "id" | "status" | "at"> = {
				kind: "dispute",
				reference,
				reason: card.dispute.reason,
				amount: op.amount,
				currency: op.currency,
				evidenceDueBy: after(chargedAt, EVIDENCE_DUE_AFTER_DAYS).toISOString(),
				...base,
			};
			const opens = after(chargedAt, DISPUTE_OPENS_AFTER_DAYS).toISOString();
			const closes = after(chargedAt, DISPUTE_CLOSES_AFTER_DAYS).toISOString();
			docs.push(doc({ ...dispute, id: `${reference}:opened`, status: "NEEDS_RESPONSE", at: opens }));
			// Decided as the card says; a card that wins with evidence is lost until evidence comes (evidenceSubmitted).
			const outcome = card.dispute.outcome === "WON" ? "WON" : "LOST";
			docs.push(
				doc(
					{ ...dispute, id: `${reference}:closed`, status: outcome, at: closes },
					{ winsWithEvidence: card.dispute.outcome === "WON_WITH_EVIDENCE" },
				),
			);
		}
		return docs;
	}

	return {
		async scheduleFor(op, card, chargedAt) {
			const docs = noticesOf(op, card, chargedAt);
			if (docs.length === 0) return;
			// Listed before they exist, as every schedule is: a notice is never missing from the hour it is due in.
			await schedule.addAll(docs.map(d => ({ id: d._id, at: d.due })));
			await insertAllOnce(db.sandboxNotices, docs);
		},

		async due(until, accountId) {
			const listed = await schedule.due(until, now());
			if (listed.length === 0) return [];
			const docs = await db.sandboxNotices.find({ _id: { $in: listed.map(entry => entry.id) } }).lean();
			return docs
				.filter(d => !d.done && d.due <= until && (accountId === undefined || d.accountId === accountId))
				.sort((a, b) => a.due.getTime() - b.due.getTime() || a._id.localeCompare(b._id))
				.map(d => d.notice);
		},

		async done(ids) {
			if (ids.length === 0) return 0;
			const docs = await db.sandboxNotices.find({ _id: { $in: ids } }, { due: 1 }).lean();
			await db.sandboxNotices.updateMany({ _id: { $in: ids } }, { $set: { done: true } });
			await schedule.removeAll(docs.map(d => ({ id: d._id, at: d.due })));
			return docs.length;
		},

		initialize: from => schedule.initialize(from),

		async evidenceSubmitted(reference) {
			const closing = await db.sandboxNotices.findById(`${reference}:closed`).lean();
			if (!closing || closing.done) return false;
			if (closing.winsWithEvidence)
				await db.sandboxNotices.updateOne({ _id: closing._id, done: false }, { $set: { "notice.status": "WON" } });
			return true;
		},
	};
}
