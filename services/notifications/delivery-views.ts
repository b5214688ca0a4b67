// What operators see of deliveries (admin API, REPL): newest first, each with
// its attempt log.
import { formatDateTime, formatOptionalDateTime } from "../../shared/time";
import type { NotificationsDeps } from "./deps";
import type { AttemptRecord, DeliveryDoc } from "./models";
import { DeliveryStatus } from "./states";

/** Besides the stored states: "FAILED" = DEAD, or PENDING after a failed attempt (what redeliver-all resends). */
export const LIST_FILTERS = [...Object.values(DeliveryStatus), "FAILED"] as const;
export type ListFilter = (typeof LIST_FILTERS)[number];

export const DEFAULT_LIST_LIMIT = 100;

export interface AttemptView {
	attempt: number;
	node: string;
	time: string;
	statusCode: number | null;
	latencyMs: number;
	error: string | null;
}

export interface DeliveryView {
	id: string;
	type: string;
	status: DeliveryStatus;
	accountId: number;
	customerId: number;
	transaction_id: number | null;
	attempts: number;
	/** When the next attempt is due; null unless PENDING. */
	nextAttemptAt: string | null;
	lastError: string | null;
	/** The event's createdAt. */
	createdAt: string;
	deliveredAt: string | null;
	attemptLog: AttemptView[];
}

/** The filter of deliveries that failed so far: DEAD, or PENDING with a failed attempt. */
export function failedSoFar(accountId: number): object {
	return { accountId, $or: [{ status: DeliveryStatus.Dead }, { status: DeliveryStatus.Pending, lastError: { $ne: null } }] };
}

function toAttemptView(doc: AttemptRecord): AttemptView {
	return {
		attempt: doc.attempt,
		node: doc.node,
		time: formatDateTime(doc.time),
		statusCode: doc.statusCode,
		latencyMs: doc.latencyMs,
		error: doc.error,
	};
}

export function toDeliveryViews(docs: DeliveryDoc[]): DeliveryView[] {
	return docs.map(doc => ({
		id: doc._id,
		type: doc.type,
		status: doc.status,
		accountId: doc.accountId,
		customerId: doc.customerId,
		transaction_id: doc.transactionId,
		attempts: doc.attempts,
		nextAttemptAt: doc.status === DeliveryStatus.Pending ? formatDateTime(doc.nextAttemptAt) : null,
		lastError: doc.lastError,
		createdAt: doc.createdAt,
		deliveredAt: formatOptionalDateTime(doc.deliveredAt),
		attemptLog: (doc.attemptLog ?? []).map(toAttemptView),
	}));
}

export async function listDeliveries(
	deps: NotificationsDeps,
	input: { accountId: number; status?: ListFilter; limit?: number },
): Promise<DeliveryView[]> {
	const filter =
		input.status === undefined
			? { accountId: input.accountId }
			: input.status === "FAILED"
				? failedSoFar(input.accountId)
				: { accountId: input.accountId, status: input.status };
	const docs = await deps.db.deliveries
		.find(filter)
		.sort({ eventAt: -1, enqueuedAt: -1, _id: -1 })
		.limit(input.limit ?? DEFAULT_LIST_LIMIT)
		.lean<DeliveryDoc[]>();
	return toDeliveryViews(docs);
}
