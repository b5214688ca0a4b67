// Customers and transactions exactly as the spec's tables show them.
import { findCurrency, toDecimal } from "../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import type { CustomerDoc, TransactionDoc } from "./models";

export interface CustomerView {
	id: number;
	accountId: number;
	email: string;
	name: string;
	lastName: string;
	status: string;
	productId: number;
	subscriptionTimestamp: string;
	nextRenewalTimestamp: string | null;
	lastTimeBilled: string | null;
	unsubscriptionTimestamp: string | null;
	renewalActive: boolean;
	attempts: number;
	cardBin: string;
	cardType: string;
	cardExpiredTime: string;
}

export interface TransactionView {
	id: number;
	accountId: number;
	timestamp: string;
	success: boolean;
	type: string;
	amount: number;
	productId: number;
	transactionId: number | null;
	midId: number;
	midName: string;
	currencyId: number;
	refundStatus: string;
	status: string;
	paymentMethod: string;
}

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
		midId: doc.midId,
		midName: doc.midName,
		currencyId: doc.currencyId,
		refundStatus: doc.refundStatus,
		status: doc.status,
		paymentMethod: doc.paymentMethod,
	};
}
