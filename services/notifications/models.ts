// The notifications service's collections: one delivery per event (keyed by
// the event id, so a repeated enqueue is a no-op), with its attempts in its
// own log.
import { type Connection, type Model, Schema } from "mongoose";
import { EVENT_TYPES, type EventType } from "../../shared/contracts/notifications";
import { type Lease, leaseSchema } from "../../shared/persistence";
import { type ScheduleSlotDoc, scheduleSchema } from "../../shared/schedule";
import { createTimelines, type Timelines } from "../../shared/timeline";
import { EMAIL_KINDS, type EmailDraft } from "./email-drafts";
import { DeliveryStatus, EmailStatus } from "./states";

export interface DeliveryDoc {
	/** The event id (lower-case UUID); receivers dedupe on it. */
	_id: string;
	accountId: number;
	customerId: number;
	transactionId: number | null;
	type: EventType;
	/** The event's createdAt as the API prints it (local date-time). */
	createdAt: string;
	/** The event's time as an instant: the retry window starts here. */
	eventAt: Date;
	/** The JSON envelope, serialized once at enqueue so every attempt sends the same bytes. */
	body: string;
	status: DeliveryStatus;
	/** Attempts started, ever; numbers the attempt log. */
	attempts: number;
	/** Failures since the window opened; the exponent of the backoff. */
	backoffStep: number;
	/** Start of the retry window: the event's time, or the last redelivery. */
	windowFrom: Date;
	nextAttemptAt: Date;
	lastError: string | null;
	lastStatusCode: number | null;
	/** The claim of the worker attempting it now; free when null or expired. */
	lease: Lease | null;
	enqueuedAt: Date;
	deliveredAt: Date | null;
	/**
	 * Its place in the account's events (`e:<account>`) and the customer's
	 * (`ec:<customer>`), see events.ts. An event listed twice (two senders
	 * racing) appears only where its delivery says.
	 */
	position?: number;
	customerPosition?: number;
	/** Its attempts, oldest first, each written with the settle it led to; absent until the first. */
	attemptLog?: AttemptRecord[];
}

/** One attempt, as the delivery's log keeps it. */
export interface AttemptRecord {
	attempt: number;
	/** The node that made the attempt. */
	node: string;
	time: Date;
	/** The receiver's HTTP status, or null when none came (timeout, network, refused, no URL). */
	statusCode: number | null;
	latencyMs: number;
	error: string | null;
}

const options = { versionKey: false } as const;

const deliverySchema = new Schema<DeliveryDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		transactionId: { type: Number, default: null },
		type: { type: String, enum: EVENT_TYPES, required: true },
		createdAt: { type: String, required: true },
		eventAt: { type: Date, required: true },
		body: { type: String, required: true },
		status: { type: String, enum: Object.values(DeliveryStatus), required: true },
		attempts: { type: Number, default: 0 },
		backoffStep: { type: Number, default: 0 },
		windowFrom: { type: Date, required: true },
		nextAttemptAt: { type: Date, required: true },
		lastError: { type: String, default: null },
		lastStatusCode: { type: Number, default: null },
		lease: { type: leaseSchema(), default: null },
		enqueuedAt: { type: Date, required: true },
		deliveredAt: { type: Date, default: null },
		position: Number,
		customerPosition: Number,
		attemptLog: { type: [Schema.Types.Mixed], default: undefined },
	},
	options,
);
// The workers' claim and the admin list (ignored by mongo-java-server, used by MongoDB).
deliverySchema.index({ status: 1, nextAttemptAt: 1 });
deliverySchema.index({ accountId: 1, eventAt: -1 });

/** An email to a buyer (docs/emails.md), keyed by what it is about, so an event handed over twice makes one. */
export interface EmailDoc extends EmailDraft {
	status: EmailStatus;
	/** Attempts started, ever. */
	attempts: number;
	/** Failures so far: the exponent of the backoff. */
	backoffStep: number;
	/** When it was stored: its retry window starts here. */
	createdAt: Date;
	nextAttemptAt: Date;
	lease: Lease | null;
	/** The subject it was sent with (never its body). */
	subject: string | null;
	lastError: string | null;
	sentAt: Date | null;
}

const emailSchema = new Schema<EmailDoc>(
	{
		_id: String,
		kind: { type: String, enum: EMAIL_KINDS, required: true },
		eventId: { type: String, required: true },
		accountId: { type: Number, required: true },
		customerId: { type: Number, required: true },
		to: { type: String, required: true },
		facts: { type: Schema.Types.Mixed, required: true },
		status: { type: String, enum: Object.values(EmailStatus), required: true },
		attempts: { type: Number, default: 0 },
		backoffStep: { type: Number, default: 0 },
		createdAt: { type: Date, required: true },
		nextAttemptAt: { type: Date, required: true },
		lease: { type: leaseSchema(), default: null },
		subject: { type: String, default: null },
		lastError: { type: String, default: null },
		sentAt: { type: Date, default: null },
	},
	options,
);

export interface NotificationsDb {
	deliveries: Model<DeliveryDoc>;
	/** Deliveries by the second their next attempt is due (shared/schedule.ts): workers find due work by key. */
	attemptSchedule: Model<ScheduleSlotDoc>;
	/** The events API's lists (events.ts). */
	timelines: Timelines;
	/** Emails to buyers, by key (email-drafts.ts). */
	emails: Model<EmailDoc>;
	/** Emails by the second their next attempt is due. */
	emailSchedule: Model<ScheduleSlotDoc>;
}

export function createNotificationsDb(connection: Connection): NotificationsDb {
	return {
		deliveries: connection.model("WebhookDelivery", deliverySchema, "webhook_deliveries"),
		attemptSchedule: connection.model("WebhookAttemptSchedule", scheduleSchema(), "webhook_attempt_schedule"),
		timelines: createTimelines(connection),
		emails: connection.model("Email", emailSchema, "emails"),
		emailSchedule: connection.model("EmailSchedule", scheduleSchema(), "email_schedule"),
	};
}
