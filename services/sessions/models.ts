import { type Connection, type Model, Schema } from "mongoose";
import { SessionStatus, type StoredSessionStatus } from "./states";

export interface SessionDoc {
	/** A random UUID: the session id the merchant hands to the SDK. */
	_id: string;
	accountId: number;
	/** Lower-case host name the checkout must be shown on. */
	domain: string;
	/** A card update session's customer; null for a checkout session. */
	customerId: number | null;
	status: StoredSessionStatus;
	createdAt: Date;
	expiresAt: Date;
	usedAt: Date | null;
	/** The checkout attempt that consumed the session; only it may release it again. */
	usedBy: string | null;
}

const sessionSchema = new Schema<SessionDoc>(
	{
		_id: String,
		accountId: { type: Number, required: true },
		domain: { type: String, required: true },
		customerId: { type: Number, default: null },
		status: { type: String, enum: [SessionStatus.Valid, SessionStatus.Used], required: true },
		createdAt: { type: Date, required: true },
		expiresAt: { type: Date, required: true },
		usedAt: { type: Date, default: null },
		usedBy: { type: String, default: null },
	},
	{ versionKey: false },
);

export interface SessionsDb {
	sessions: Model<SessionDoc>;
}

export function createSessionsDb(connection: Connection): SessionsDb {
	return { sessions: connection.model("Session", sessionSchema, "sessions") };
}
