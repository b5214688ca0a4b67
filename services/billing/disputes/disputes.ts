// The merchant's disputes: one by id, and the evidence for one, sent to its
// processor. The list is in lists/pages.ts with the others.

import { DisputeError, type DisputeView } from "../../../shared/contracts/billing";
import type { DisputeEvidence } from "../../../shared/contracts/payments";
import { EvidenceError } from "../../../shared/contracts/payments";
import { ownedBy } from "../../../shared/persistence";
import type { BillingDeps } from "../deps";
import { disputeMove } from "../lifecycle";
import { scheduledEvent } from "../outbox/outbox";
import { DisputeStatus } from "../states";
import { toDisputeView } from "../views";
import { openDisputeDetails } from "./notices";

/** NEEDS_RESPONSE -> UNDER_REVIEW: the merchant's evidence went to the processor. */
const SUBMIT_EVIDENCE = disputeMove(DisputeStatus.NeedsResponse, DisputeStatus.UnderReview);

export async function getDispute(deps: BillingDeps, input: { accountId: number; id: number }): Promise<DisputeView | DisputeError> {
	const dispute = ownedBy(await deps.db.disputes.findById(input.id).lean(), input.accountId);
	return dispute ? toDisputeView(dispute) : DisputeError.NotFound;
}

/**
 * Evidence goes to the processor first; the dispute records it and moves to UNDER_REVIEW after (DISPUTE_UPDATED). If
 * that write is lost, the processor has the evidence and its next notice moves the dispute.
 */
export async function submitEvidence(
	deps: BillingDeps,
	input: { accountId: number; id: number; evidence: DisputeEvidence },
): Promise<{ dispute: DisputeView; moved: number | null } | DisputeError> {
	const dispute = ownedBy(await deps.db.disputes.findById(input.id).lean(), input.accountId);
	if (!dispute) return DisputeError.NotFound;
	if (dispute.status !== DisputeStatus.NeedsResponse) return DisputeError.NotAwaitingEvidence;
	// Due by the account's now: a sandbox's test clock may have passed the date (account-time.ts).
	const now = await deps.clocks.now(dispute.accountId);
	if (dispute.evidenceDueBy && dispute.evidenceDueBy.getTime() < now.getTime()) return DisputeError.EvidenceOverdue;
	const submitted = await deps.payments.submitDisputeEvidence({
		midId: dispute.midId,
		reference: dispute.processorReference,
		evidence: input.evidence,
	});
	if ("error" in submitted)
		return submitted.error === EvidenceError.Unavailable ? DisputeError.ProcessorUnavailable : DisputeError.ProcessorRefused;
	// Submitted evidence puts a dispute under review, whatever the processor answers now; its later notices decide it.
	const status = SUBMIT_EVIDENCE.set.status;
	const moved = await deps.db.disputes
		.findOneAndUpdate(
			{ _id: dispute._id, ...SUBMIT_EVIDENCE.filter },
			{
				$set: { ...SUBMIT_EVIDENCE.set, evidence: input.evidence, evidenceSubmittedAt: now, updatedAt: now },
				$push: {
					outbox: await scheduledEvent(
						deps,
						"d",
						dispute._id,
						"DISPUTE_UPDATED",
						await openDisputeDetails(deps, dispute.transactionId, status),
					),
				},
			},
			{ returnDocument: "after" },
		)
		.lean();
	if (moved) return { dispute: toDisputeView(moved), moved: moved._id };
	// A notice moved it meanwhile: the evidence still went to the processor; the dispute is shown as it is now.
	const current = await deps.db.disputes.findById(dispute._id).lean();
	return { dispute: toDisputeView(current ?? dispute), moved: null };
}
