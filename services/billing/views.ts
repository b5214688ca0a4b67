// Customers and transactions exactly as the spec's tables show them (shared/contracts/billing).
import type { CustomerCouponView, CustomerView, DiscountView, DisputeView, TransactionView } from "../../shared/contracts/billing";
import { findCurrency, toDecimal } from "../../shared/money";
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import { creditOf, quantityOf, storedPeriod } from "./changes/customer-period";
import type { CustomerDoc } from "./records/customer";
import type { DisputeDoc } from "./records/dispute";
import type { TransactionDoc } from "./records/transaction";
import { TransactionStatus } from "./states";

/** The credit as a decimal of the period's currency (a customer with credit has a stored period: a change gave it). */
function creditView(doc: CustomerDoc): number {
	const currency = doc.period?.currency && findCurrency(doc.period.currency);
	return currency ? toDecimal(creditOf(doc), currency) : 0;
}

function pendingView(doc: CustomerDoc): CustomerView["pendingChange"] {
	const pending = storedPeriod(doc)?.pending;
	if (!pending || !doc.nextRenewalTimestamp) return null;
	return { productId: pending.productId, quantity: pending.quantity, at: formatDateTime(doc.nextRenewalTimestamp) };
}

function couponView(coupon: CustomerDoc["coupon"]): CustomerCouponView | null {
	if (!coupon) return null;
	const currency = coupon.currency ? findCurrency(coupon.currency) : undefined;
	const { couponId, code, percentOff, duration, periodsLeft } = coupon;
	const amountOff = coupon.amountOff !== null && currency ? toDecimal(coupon.amountOff, currency) : null;
	return { couponId, code, percentOff, amountOff, currency: coupon.currency, duration, periodsLeft };
}

function discountView(doc: TransactionDoc): DiscountView | null {
	if (!doc.discount) return null;
	const { couponId, code, amount } = doc.discount;
	return { couponId: Number(couponId), code, amount: toDecimal(amount, findCurrency(doc.currency)!) };
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
		pause: doc.pause ? { pausedAt: formatDateTime(doc.pause.pausedAt), resumeAt: formatOptionalDateTime(doc.pause.resumeAt) } : null,
		quantity: quantityOf(doc),
		credit: creditView(doc),
		pendingChange: pendingView(doc),
		coupon: couponView(doc.coupon),
		cancelAt: formatOptionalDateTime(doc.cancellation?.cancelAt ?? null),
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
		transactionId: doc.processorTransactionId,
		processorReference: doc.processorReference,
		authentication: doc.authentication,
		midId: doc.midId,
		midName: doc.midName,
		currencyId: doc.currencyId,
		refundStatus: doc.refundStatus,
		status: doc.status,
		paymentMethod: doc.paymentMethod,
		declineReason: doc.status === TransactionStatus.Declined ? doc.declineReason : null,
		declineCategory: doc.status === TransactionStatus.Declined ? (doc.declineCategory ?? null) : null,
		creditApplied: doc.creditApplied ? toDecimal(doc.creditApplied, findCurrency(doc.currency)!) : 0,
		discount: discountView(doc),
	};
}

/** `status`: the one an event announced, when it is shown in that event. */
export function toDisputeView(doc: DisputeDoc, status = doc.status): DisputeView {
	return {
		id: doc._id,
		accountId: doc.accountId,
		customerId: doc.customerId,
		disputedTransactionId: doc.transactionId,
		chargebackTransactionId: doc.chargebackTransactionId,
		status,
		reason: doc.reason,
		amount: toDecimal(doc.amount, findCurrency(doc.currency)!),
		currency: doc.currency,
		evidenceDueBy: formatOptionalDateTime(doc.evidenceDueBy),
		evidence: doc.evidence,
		evidenceSubmittedAt: formatOptionalDateTime(doc.evidenceSubmittedAt),
		midId: doc.midId,
		processorReference: doc.processorReference,
		openedAt: formatDateTime(doc.openedAt),
		updatedAt: formatDateTime(doc.updatedAt),
		closedAt: formatOptionalDateTime(doc.closedAt),
	};
}
