// GET /api/refund/{id} always answers 200 {success, message}; the messages are the spec's (errors.ts for refusals).
import type { RefundDone, RefundError } from "../../shared/contracts/billing";
import { REFUND_REFUSALS, type RefundsError } from "./errors";

export interface RefundAnswer {
	success: boolean;
	message: string;
}

export function refused(error: RefundError | RefundsError, transactionId: number): RefundAnswer {
	return { success: false, message: REFUND_REFUSALS[error](transactionId) };
}

export function answerFor(transactionId: number, result: RefundDone | { error: RefundError }): RefundAnswer {
	return "error" in result
		? refused(result.error, transactionId)
		: { success: true, message: `Refund success with amount ${result.amount}` };
}
