// Adyen's standard notifications (webhooks) for a MID, verified and read in
// our words: each item's HMAC signature with the MID's HMAC key (the library's
// validator), then what it says. What Adyen did with an operation of ours
// (AUTHORISATION, CAPTURE, CANCELLATION, REFUND and their failures) settles a
// lookup; a dispute's stage or a fraud report becomes a notice billing
// applies. Built from Adyen's documented events
// (https://docs.adyen.com/development-resources/webhooks/webhook-types,
// https://docs.adyen.com/risk-management/disputes-api/dispute-notifications).
import { hmacValidator } from "@adyen/api-library";
import type { NotificationRequestItem } from "@adyen/api-library/lib/src/typings/notification/models";
import { AdyenNotificationError, type DisputeStatus, type ProcessorNotice } from "../../../../shared/contracts/payments";

/** The operations a notification settles, by the event that tells their outcome. */
export type SettlingEvent = "AUTHORISATION" | "CAPTURE" | "CANCELLATION" | "REFUND";

/** What Adyen says became of one operation of ours (`reference`: the reference we sent with it). */
export interface AdyenOutcome {
	reference: string;
	event: SettlingEvent;
	success: boolean;
	pspReference: string;
	/** Adyen's reason for a failure (a refusal's text). */
	reason: string | null;
}

export type AdyenReading =
	| { kind: "outcome"; outcome: AdyenOutcome }
	/** A notice for billing, without the MID; `chargeReference`: the reference we sent with the charge it concerns. */
	| { kind: "notice"; id: string; chargeReference: string; notice: NoticeFields }
	| { kind: "ignored"; why: "other_merchant_account" | "other_platform" | "not_ours" };

type NoticeFields = ProcessorNotice extends infer N ? (N extends ProcessorNotice ? Omit<N, "midId" | "chargeKey"> : never) : never;

const SETTLING: Readonly<Record<string, { event: SettlingEvent; failed?: true }>> = Object.freeze({
	AUTHORISATION: { event: "AUTHORISATION" },
	CAPTURE: { event: "CAPTURE" },
	CAPTURE_FAILED: { event: "CAPTURE", failed: true },
	CANCELLATION: { event: "CANCELLATION" },
	TECHNICAL_CANCEL: { event: "CANCELLATION" },
	REFUND: { event: "REFUND" },
	REFUND_FAILED: { event: "REFUND", failed: true },
	REFUNDED_REVERSED: { event: "REFUND", failed: true },
});

/** A dispute's stages as our statuses (services/billing/states.ts keeps a late stage from moving it back). */
const DISPUTE_STAGES: Readonly<Record<string, DisputeStatus>> = Object.freeze({
	REQUEST_FOR_INFORMATION: "NEEDS_RESPONSE",
	NOTIFICATION_OF_CHARGEBACK: "NEEDS_RESPONSE",
	CHARGEBACK: "NEEDS_RESPONSE",
	INFORMATION_SUPPLIED: "UNDER_REVIEW",
	CHARGEBACK_REVERSED: "WON",
	PREARBITRATION_WON: "WON",
	SECOND_CHARGEBACK: "LOST",
	PREARBITRATION_LOST: "LOST",
});

const isText = (value: unknown): value is string => typeof value === "string";

/** The items of a notification request, each signed with `hmacKey`, and whether Adyen's live platform sent them; a fault refuses the whole request. */
export function verifiedItems(
	payload: string,
	hmacKey: string,
): { live: boolean; items: NotificationRequestItem[] } | AdyenNotificationError {
	let body: unknown;
	try {
		body = JSON.parse(payload);
	} catch {
		return AdyenNotificationError.Malformed;
	}
	const { live, notificationItems: list } = (body ?? {}) as { live?: unknown; notificationItems?: unknown };
	if (live !== "true" && live !== "false") return AdyenNotificationError.Malformed;
	if (!Array.isArray(list) || list.length === 0) return AdyenNotificationError.Malformed;
	const items = list.map(entry => (entry as { NotificationRequestItem?: unknown })?.NotificationRequestItem);
	if (!items.every(isItem)) return AdyenNotificationError.Malformed;
	const validator = new hmacValidator();
	for (const item of items) {
		const signature = item.additionalData?.hmacSignature;
		if (!isText(signature) || !validator.validateHMAC(item, hmacKey)) return AdyenNotificationError.BadSignature;
	}
	return { live: live === "true", items };
}

function isItem(item: unknown): item is NotificationRequestItem {
	const it = item as Record<string, unknown> | null;
	if (typeof it !== "object" || it === null) return false;
	const amount = it.amount as { value?: unknown; currency?: unknown } | undefined;
	return (
		[it.pspReference, it.eventCode, it.eventDate, it.merchantAccountCode, it.merchantReference].every(isText) &&
		(it.success === "true" || it.success === "false") &&
		typeof amount?.value === "number" &&
		Number.isSafeInteger(amount.value) &&
		isText(amount.currency) &&
		(it.additionalData === undefined || (typeof it.additionalData === "object" && it.additionalData !== null))
	);
}

/** What one verified item says to a MID on `merchantAccount`, on the live platform or not. */
export function readItem(item: NotificationRequestItem, mid: { merchantAccount: string; live: boolean }, live: boolean): AdyenReading {
	if (item.merchantAccountCode !== mid.merchantAccount) return { kind: "ignored", why: "other_merchant_account" };
	if (live !== mid.live) return { kind: "ignored", why: "other_platform" };
	const success = item.success === "true";
	const settling = SETTLING[item.eventCode];
	if (settling) {
		return {
			kind: "outcome",
			outcome: {
				reference: item.merchantReference,
				event: settling.event,
				success: success && !settling.failed,
				pspReference: item.pspReference,
				reason: item.reason || null,
			},
		};
	}
	const notice = noticeOf(item);
	return notice
		? { kind: "notice", id: `${item.eventCode}:${item.pspReference}`, chargeReference: item.merchantReference, notice }
		: { kind: "ignored", why: "not_ours" };
}

/** A dispute's stage or a fraud report; null for any other event. */
function noticeOf(item: NotificationRequestItem): NoticeFields | null {
	const data = item.additionalData ?? {};
	// The disputed payment: its pspReference names the dispute through all its stages.
	const reference = item.originalReference || item.pspReference;
	const at = isoOf(item.eventDate) ?? new Date(0).toISOString();
	if (item.eventCode === "NOTIFICATION_OF_FRAUD")
		return {
			kind: "earlyFraudWarning",
			id: `${item.eventCode}:${item.pspReference}`,
			reference,
			at,
			fraudType: item.reason || "fraud_report",
		};
	const stage = DISPUTE_STAGES[item.eventCode];
	if (!stage) return null;
	// A chargeback Adyen says cannot be defended is lost when it is made.
	const status = item.eventCode === "CHARGEBACK" && data.defendable === "false" ? "LOST" : stage;
	return {
		kind: "dispute",
		id: `${item.eventCode}:${item.pspReference}`,
		reference,
		at,
		status,
		reason: item.reason || data.chargebackReasonCode || "unknown",
		amount: item.amount.value ?? 0,
		currency: (item.amount.currency ?? "").toUpperCase(),
		evidenceDueBy: isoOf(data.defensePeriodEndsAt),
	};
}

function isoOf(text: string | undefined): string | null {
	if (!text) return null;
	const time = Date.parse(text);
	return Number.isNaN(time) ? null : new Date(time).toISOString();
}
