// GET /api/refund/{id} always answers 200 {success, message}; the messages are the spec's.
import { type RefundDone, RefundError } from "../../shared/contracts/billing";
export interface RefundAnswer {
	success: boolean;
	message: string;
}

export const refundAnswers = {
	success: (amount: number): RefundAnswer => ({ success: true, message: `Refund success with amount ${amount}` }),
	notFound: (id: number): RefundAnswer => ({ success: false, message: `Transaction not found with ID: ${id}` }),
	notRefundable: (id: number): RefundAnswer => ({ success: false, message: `This transaction is not refundable ${id}` }),
	tooHigh: (): RefundAnswer => ({ success: false, message: "Refund amount is higher than amount in transaction" }),
	invalidAmount: (): RefundAnswer => ({
		success: false,
		message: "amountToRefund must be a positive amount with no more decimals than the transaction's currency",
	}),
	processorRefused: (): RefundAnswer => ({
		success: false,
		message: "Refund failed: the payment processor did not accept it; nothing was refunded",
	}),
	keyReused: (): RefundAnswer => ({ success: false, message: "This Idempotency-Key was already used with different parameters" }),
	keyBusy: (): RefundAnswer => ({ success: false, message: "A request with this Idempotency-Key is still being processed; retry shortly" }),
};

const REFUSALS: Record<RefundError, (id: number) => RefundAnswer> = {
	[RefundError.NotFound]: refundAnswers.notFound,
	[RefundError.NotRefundable]: refundAnswers.notRefundable,
	[RefundError.AmountTooHigh]: refundAnswers.tooHigh,
	[RefundError.InvalidAmount]: refundAnswers.invalidAmount,
	[RefundError.ProcessorRefused]: refundAnswers.processorRefused,
	// A repeat found the refund still being settled (by its first request, or by billing's recovery after a crash).
	[RefundError.InProgress]: () => refundAnswers.keyBusy(),
};

export function answerFor(transactionId: number, result: RefundDone | { error: RefundError }): RefundAnswer {
	return "error" in result ? REFUSALS[result.error](transactionId) : refundAnswers.success(result.amount);
}
