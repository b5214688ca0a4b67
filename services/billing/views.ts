// Customers and transactions exactly as the spec's tables show them (shared/contracts/billing).
import type { CustomerView, TransactionView } from "../../shared/contracts/billing";
import { findCurrency, toDecimal } from "../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import type { CustomerDoc, TransactionDoc } from "./models";
import { TransactionStatus } from "./states";

export function toCustomerView(doc: CustomerDoc): CustomerView {
	return {
		id: doc._id,
		accountId: doc.accountId,
		email: doc.email,
		name: doc.name,
		lastName: doc.lastName,
		status: doc.status,
		productId: doc.productId,
		subscriptionTimestamp: formatDateTime(doc.subscriptionTimestamp),
		nextRenewalTimestamp: formatOptionalDateTime(doc.nextRenewalTimestamp),
		lastTimeBilled: formatOptionalDateTime(doc.lastTimeBilled),
		unsubscriptionTimestamp: formatOptionalDateTime(doc.unsubscriptionTimestamp),
		renewalActive: doc.renewalActive,
		attempts: doc.attempts,
		cardBin: doc.cardBin,
		cardType: doc.cardType,
		cardExpiredTime: doc.cardExpiredTime,
	};
}

export function toTransactionView(doc: TransactionDoc): TransactionView {
	return {
		id: doc._id,
		accountId: doc.accountId,
		timestamp: formatDateTime(doc.timestamp),
		success: doc.success,
		type: doc.type,
		amount: toDecimal(doc.amount, findCurrency(doc.currency)!),
		productId: doc.productId,
		transactionId: doc.transactionId,
		processorReference: doc.processorReference ?? null,
		authentication: doc.authentication ?? null,
		midId: doc.midId,
		midName: doc.midName,
		currencyId: doc.currencyId,
		refundStatus: doc.refundStatus,
		status: doc.status,
		paymentMethod: doc.paymentMethod,
		declineReason: doc.status === TransactionStatus.Declined ? doc.declineReason : null,
		declineCategory: doc.status === TransactionStatus.Declined ? (doc.declineCategory ?? null) : null,
	};
}
