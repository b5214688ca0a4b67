// Which events make which emails to buyers (docs/emails.md#which-emails), and
// each email's key: the same email from a repeated event (an at-least-once
// relay) has the same key, so it is stored, and sent, once.
// Only facts are kept, never a card number or a secret: the template is
// filled in when the email is sent, in the account's language of that moment.
import type { EventType, WebhookEvent } from "../../shared/contracts/notifications";

export const EMAIL_KINDS = ["RECEIPT", "DUNNING", "CARD_EXPIRING", "PORTAL_SIGN_IN"] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

/** What an email tells, read off its event. */
export interface EmailFacts {
	name: string;
	productId: number;
	/** A decimal in the product's currency (the API's), for a receipt and a declined payment. */
	amount: number | null;
	transactionId: number | null;
	/** A receipt's invoice: its id (its PDF is attached when sent), number and the link the buyer opens (INVOICE_ISSUED); null on the other emails. */
	invoiceId: number | null;
	invoiceNumber: string | null;
	invoiceUrl: string | null;
	cardType: string;
	/** MMYY. */
	cardExpiredTime: string;
	/** The customer's declined tries of the period, its status and next try, as the event showed them. */
	attempts: number;
	customerStatus: string;
	nextRenewalTimestamp: string | null;
}

export interface EmailDraft {
	/** `<kind>:<what it is about>`: its key. */
	_id: string;
	kind: EmailKind;
	eventId: string;
	accountId: number;
	customerId: number;
	to: string;
	facts: EmailFacts;
}

/** The event a receipt is sent on: the invoice of a payment (its data with the customer, as every event's). */
export const RECEIPT_EVENT: EventType = "INVOICE_ISSUED";

/** Charges a buyer pays, not a hold (its capture is a SUBSCRIPTION_START). */
const PAID_TYPES = new Set(["SUBSCRIPTION_START", "RENEWAL"]);
/** A renewal's decline the buyer can do something about: a MID's refusal is tried on another MID within the hour. */
const RETRIED_ELSEWHERE = "MERCHANT_ACCOUNT";

type Customer = {
	id: number;
	email: string;
	name: string;
	productId: number;
	status: string;
	attempts: number;
	cardType: string;
	cardExpiredTime: string;
	nextRenewalTimestamp: string | null;
};
type Transaction = { id: number; type: string; status: string; amount: number; declineCategory: string | null };
type Invoice = { id?: number; number?: string; url?: string; transactionId?: number; total?: number };

function factsOf(customer: Customer, more: Partial<EmailFacts> = {}): EmailFacts {
	return {
		name: customer.name,
		productId: customer.productId,
		amount: null,
		transactionId: null,
		invoiceId: null,
		invoiceNumber: null,
		invoiceUrl: null,
		cardType: customer.cardType,
		cardExpiredTime: customer.cardExpiredTime,
		attempts: customer.attempts,
		customerStatus: customer.status,
		nextRenewalTimestamp: customer.nextRenewalTimestamp,
		...more,
	};
}

function draft(event: WebhookEvent, kind: EmailKind, about: string, customer: Customer, facts: EmailFacts): EmailDraft {
	return {
		_id: `${kind}:${about}`,
		kind,
		eventId: event.id.toLowerCase(),
		accountId: event.accountId,
		customerId: customer.id,
		to: customer.email,
		facts,
	};
}

/** A receipt: an issued invoice, with its number and link. Keyed by the charge it is the invoice of. */
function receiptOf(event: WebhookEvent, customer: Customer): EmailDraft | null {
	const invoice = event.data.invoice as Invoice | undefined;
	if (invoice?.transactionId === undefined) return null;
	const facts = factsOf(customer, {
		amount: invoice.total ?? null,
		transactionId: invoice.transactionId,
		invoiceId: invoice.id ?? null,
		invoiceNumber: invoice.number ?? null,
		invoiceUrl: invoice.url ?? null,
	});
	return draft(event, "RECEIPT", `t${invoice.transactionId}`, customer, facts);
}

/** A declined renewal (or a retry of it): one dunning email per declined try, keyed by that try. */
function dunningOf(event: WebhookEvent, customer: Customer): EmailDraft | null {
	const transaction = event.data.transaction as Transaction | undefined;
	if (transaction?.status !== "DECLINED" || !PAID_TYPES.has(transaction.type)) return null;
	// A checkout's decline leaves the customer DECLINED: the buyer saw it on the page.
	if (!["ACTIVE", "SUSPENDED"].includes(customer.status) || transaction.declineCategory === RETRIED_ELSEWHERE) return null;
	const facts = factsOf(customer, { amount: transaction.amount, transactionId: transaction.id });
	return draft(event, "DUNNING", `t${transaction.id}`, customer, facts);
}

/** CARD_EXPIRING: once per card (billing sends it once per card). */
function cardExpiringOf(event: WebhookEvent, customer: Customer): EmailDraft {
	return draft(event, "CARD_EXPIRING", `c${customer.id}#${customer.cardExpiredTime}`, customer, factsOf(customer));
}

/** The emails an event makes: none, or one. */
export function draftsOf(event: WebhookEvent): EmailDraft[] {
	const customer = event.data.customer as Customer | undefined;
	if (!customer?.email) return [];
	const made =
		event.type === RECEIPT_EVENT
			? receiptOf(event, customer)
			: event.type === "TRANSACTION"
				? dunningOf(event, customer)
				: event.type === "CARD_EXPIRING"
					? cardExpiringOf(event, customer)
					: null;
	return made ? [made] : [];
}
