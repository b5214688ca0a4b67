// What gateways say of charges after they were made: disputes and early fraud
// warnings. Billing owns the disputes; this service reaches the gateways for
// them: the sandbox's notices, and a dispute's evidence sent to the MID's gateway.
import { type DisputeEvidence, type DisputeStatus, EvidenceError, type GatewayNotice } from "../../shared/contracts/payments";
import type { PaymentsDeps } from "./deps";

export async function sandboxNotices(
	deps: PaymentsDeps,
	input: { until: string; accountId?: number },
): Promise<{ notices: GatewayNotice[] }> {
	return { notices: await deps.sandbox.notices.due(new Date(input.until), input.accountId) };
}

export async function sandboxNoticesDone(deps: PaymentsDeps, input: { ids: string[] }): Promise<{ done: number }> {
	return { done: await deps.sandbox.notices.done(input.ids) };
}

export async function submitDisputeEvidence(
	deps: PaymentsDeps,
	input: { midId: number; reference: string; evidence: DisputeEvidence },
): Promise<{ status: DisputeStatus } | EvidenceError> {
	const gateway = await deps.processors.gatewayFor(input.midId);
	// The MID lost its gateway since the dispute opened: nothing can reach the dispute now.
	if (!gateway) return EvidenceError.Refused;
	const submitted = await gateway.connector.submitDisputeEvidence({
		mid: gateway.mid,
		reference: input.reference,
		evidence: input.evidence,
	});
	return "error" in submitted ? submitted.error : submitted;
}
