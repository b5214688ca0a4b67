// GET /api/refund/{id} always answers 200 {success, message}; the messages are the spec's.
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
	processorRefused: (): RefundAnswer => ({ success: false, message: "Refund failed: the payment processor did not accept it; nothing was refunded" }),
	keyReused: (): RefundAnswer => ({ success: false, message: "This Idempotency-Key was already used with different parameters" }),
	keyBusy: (): RefundAnswer => ({ success: false, message: "A request with this Idempotency-Key is still being processed; retry shortly" }),
};

const BILLING_ERRORS: Record<string, (id: number) => RefundAnswer> = {
	NOT_FOUND: refundAnswers.notFound,
	NOT_REFUNDABLE: refundAnswers.notRefundable,
	AMOUNT_TOO_HIGH: refundAnswers.tooHigh,
	INVALID_AMOUNT: refundAnswers.invalidAmount,
	PROCESSOR_REFUSED: refundAnswers.processorRefused,
	// A repeat found the refund still being settled (by its first request, or by billing's recovery after a crash).
	IN_PROGRESS: () => refundAnswers.keyBusy(),
};

export function answerFor(transactionId: number, result: { amount: number } | { error: string }): RefundAnswer {
	return "error" in result ? BILLING_ERRORS[result.error](transactionId) : refundAnswers.success(result.amount);
}
