// The refunds service's own refusal; billing's are RefundError (shared/contracts/billing.ts).
import { RefundError } from "../../shared/contracts/billing";

export enum RefundsError {
	/** An Idempotency-Key already used with another transaction or amount. */
	KeyReused = "KEY_REUSED",
}

/**
 * Every refusal, billing's and ours: the spec answers them all 200 `{success: false, message}` (never an HTTP error),
 * the message naming the transaction where the spec's does.
 */
export const REFUND_REFUSALS: Record<RefundError | RefundsError, (transactionId: number) => string> = {
	[RefundError.NotFound]: id => `Transaction not found with ID: ${id}`,
	[RefundError.NotRefundable]: id => `This transaction is not refundable ${id}`,
	[RefundError.AmountTooHigh]: () => "Refund amount is higher than amount in transaction",
	[RefundError.InvalidAmount]: () => "amountToRefund must be a positive amount with no more decimals than the transaction's currency",
	[RefundError.ProcessorRefused]: () => "Refund failed: the payment processor did not accept it; nothing was refunded",
	// A repeat found the refund still being settled (by its first request, or by billing's recovery after a crash).
	[RefundError.InProgress]: () => "A request with this Idempotency-Key is still being processed; retry shortly",
	[RefundsError.KeyReused]: () => "This Idempotency-Key was already used with different parameters",
};
