// What processors say of charges after they were made: disputes and early fraud
// warnings. Billing owns the disputes; this service reaches the processors for
// them: the sandbox's notices, and a dispute's evidence sent to the MID's processor.
import { type DisputeEvidence, type DisputeStatus, EvidenceError, type ProcessorNotice } from "../../shared/contracts/payments";
import type { PaymentsDeps } from "./deps";

export async function sandboxNotices(
	deps: PaymentsDeps,
	input: { until: string; accountId?: number },
): Promise<{ notices: ProcessorNotice[] }> {
	return { notices: await deps.sandbox.notices.due(new Date(input.until), input.accountId) };
}

export async function sandboxNoticesDone(deps: PaymentsDeps, input: { ids: string[] }): Promise<{ done: number }> {
	return { done: await deps.sandbox.notices.done(input.ids) };
}

export async function submitDisputeEvidence(
	deps: PaymentsDeps,
	input: { midId: number; reference: string; evidence: DisputeEvidence },
): Promise<{ status: DisputeStatus } | EvidenceError> {
	const processor = await deps.processors.processorFor(input.midId);
	// The MID lost its processor since the dispute opened: nothing can reach the dispute now.
	if (!processor) return EvidenceError.Refused;
	const submitted = await processor.connector.submitDisputeEvidence({
		mid: processor.mid,
		reference: input.reference,
		evidence: input.evidence,
	});
	return "error" in submitted ? submitted.error : submitted;
}
